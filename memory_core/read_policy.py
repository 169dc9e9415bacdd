"""The read policy: which view (return mode) of a memory a caller may have.

Rules are data (``read_rules.yaml``, overridable with ``CUSTODIAN_READ_POLICY_FILE``)
with their own fingerprint, recorded on every access event.
"""

import functools
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings

from core.rules import PolicyError, first_match, parse_when, read_rule_document
from memory_core.models import Memory

MODES = ("raw", "summary", "masked", "metadata_only", "deny")
FACTS: dict[str, set] = {
    "sensitivity": set(Memory.Sensitivity.values),
    "scope": set(Memory.Scope.values),
    "type": set(Memory.Type.values),
    "state": set(Memory.State.values),
    "fenced": {True, False},
    "own_subject": {True, False},
    "data_zone": {"internal", "external", "unspecified"},
}


@dataclass(frozen=True)
class ReadRule:
    id: str
    mode: str
    when: dict


@dataclass(frozen=True)
class ReadPolicy:
    version: str
    fingerprint: str
    rules: tuple[ReadRule, ...]
    # Each distinct set of facts is matched once (at most a few thousand exist): a recall window
    # decides a hundred memories that mostly share them.
    _decided: dict = field(default_factory=dict, compare=False, repr=False)

    def decide(self, memory: Memory, context: dict) -> ReadRule:
        """Return the rule (and so the mode) that applies to this caller reading this memory."""
        subject = context.get("acting_for_subject") or {}
        facts = (
            ("sensitivity", memory.sensitivity),
            ("scope", memory.scope),
            ("type", memory.type),
            ("state", memory.state),
            ("fenced", memory.is_fenced),
            ("own_subject", subject == {"kind": memory.subject_kind, "id": memory.subject_id}),
            ("data_zone", context.get("data_zone") or "unspecified"),
        )
        if facts not in self._decided:
            self._decided[facts] = first_match(self.rules, dict(facts))
        return self._decided[facts]


def load_read_policy(path: Path) -> ReadPolicy:
    document = read_rule_document(path)
    rules = []
    for raw in document.rules:
        where = f"read rule {raw['id']!r}"
        if set(raw) - {"id", "when", "mode", "description"} or raw.get("mode") not in MODES:
            raise PolicyError(f"{where}: needs id, when and a mode from {MODES}")
        rules.append(ReadRule(raw["id"], raw["mode"], parse_when(where, raw["when"], FACTS)))
    return ReadPolicy(document.version, document.fingerprint, tuple(rules))


@functools.cache
def _cached(path: str) -> ReadPolicy:
    return load_read_policy(Path(path))


def active_read_policy() -> ReadPolicy:
    return _cached(str(settings.CUSTODIAN_READ_POLICY_FILE))
