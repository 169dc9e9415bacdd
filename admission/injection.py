"""Prompt-injection markers: words aimed at the model that reads the memory, not at a person.

Three families: instructions to the reader ("ignore previous instructions", "you are
now …", "system prompt"), tool-call and chat-template syntax (``<tool_call>``,
function-call JSON, ``<|im_start|>``), and invisible Unicode (zero-width characters,
bidirectional overrides, tag characters) that hide text from a reviewer.
"""

import re
from collections.abc import Iterator

INSTRUCTION = "instruction"
TOOL_CALL = "tool_call_syntax"
INVISIBLE = "invisible_unicode"

_INSTRUCTION = re.compile(
    r"\b(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+|the\s+|your\s+|my\s+)*"
    r"(?:previous|prior|above|earlier|preceding|system|existing)?\s*"
    r"(?:instructions?|prompts?|rules|directions|guidelines|messages|context)\b"
    r"|\byou\s+are\s+now\s+(?:a|an|the|in|my|no\s+longer|DAN|acting|free)\b"
    r"|\bsystem\s+prompt\b"
    r"|\bnew\s+instructions?\s*:"
    r"|\bdo\s+not\s+(?:tell|inform)\s+the\s+user\b",
    re.IGNORECASE,
)
_TOOL_CALL = re.compile(
    r"</?(?:tool_call|tool_use|function_call|function_calls|invoke|tool_result)\b[^>]*>"
    r"|<\|[a-z_]{2,24}\|>"
    r"|\[/?INST\]|<</?SYS>>"
    r"|\"(?:function_call|tool_calls)\"\s*:"
    r"|\{\s*\"name\"\s*:\s*\"[^\"]{1,64}\"\s*,\s*\"(?:arguments|parameters)\"\s*:",
    re.IGNORECASE,
)
# Zero-width space, LRM/RLM, bidi embeddings and overrides, word joiner and invisible operators,
# bidi isolates, BOM, tag characters. ZWJ and ZWNJ are left out: emoji and many scripts need them.
_INVISIBLE = re.compile(
    "[\u200b\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\U000e0000-\U000e007f]+"
)
_FAMILIES = ((INSTRUCTION, _INSTRUCTION), (TOOL_CALL, _TOOL_CALL), (INVISIBLE, _INVISIBLE))


def injection_spans(text: str) -> Iterator[tuple[str, int, int]]:
    """Yield ``(kind, start, end)`` for each injection marker in ``text``."""
    for kind, pattern in _FAMILIES:
        for match in pattern.finditer(text):
            yield kind, match.start(), match.end()
