"""Extractors: what an observation says, as candidate memories (never as writes).

An extractor is pure: it reads one ``Observation`` and the tenant's
registered keys and returns candidate memory fields. It touches no database
and decides nothing; every candidate becomes an ordinary proposal that the
policy, reviewers and executor govern. The default is deterministic rules;
a model extractor can be plugged in (``CUSTODIAN_OBSERVATION_EXTRACTOR``)
behind the same interface and gets no more power. Bounded Dreaming reuses
``extract`` on the observations a window rests on.
"""

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from django.conf import settings
from django.utils.module_loading import import_string

from proposals.payloads import MemoryFields
from registrations.document import OBSERVE_KEY_FIELDS

KINDS = ("utterance", "tool_result", "document_excerpt", "task_feedback")
MAX_CANDIDATES = 20  # per observation, whatever the extractor returns


@dataclass(frozen=True)
class Observation:
    """One turn an agent hands over: what was seen, about whom, in which scope."""

    kind: str
    subject: dict[str, str]
    scope: str
    text: str = ""
    fields: dict[str, Any] = field(default_factory=dict)


class Extractor(Protocol):
    def extract(self, observation: Observation, *, keys: Mapping[str, str]) -> list[MemoryFields]:
        """Candidates for ``observation``; ``keys`` maps each registered key to its memory type."""
        ...


# Explicit first-person statements only: "I prefer X", "I'd rather X", "please always X".
_PREFERENCE = re.compile(
    r"\b(?:i\s+(?:would\s+|really\s+)?prefer|i['’]d\s+(?:prefer|rather)|please\s+always|always\s+please)"
    r"\s+(?P<what>[^.!?\n]{2,300})",
    re.IGNORECASE,
)


class RuleExtractor:
    """Deterministic rules: explicit preference statements and key/value facts with a registered key."""

    def extract(self, observation: Observation, *, keys: Mapping[str, str]) -> list[MemoryFields]:
        candidates: list[MemoryFields] = []
        if observation.kind in ("utterance", "task_feedback"):  # what a person said, not tool output
            candidates += self._preferences(observation)
        candidates += self._key_values(observation, keys)
        return candidates

    def _preferences(self, observation: Observation) -> list[MemoryFields]:
        found: list[MemoryFields] = []
        for match in _PREFERENCE.finditer(observation.text):
            what = " ".join(match.group("what").split()).rstrip(" ,;:")
            sentence = " ".join(match.group(0).split()).rstrip(" ,;:")
            found.append(
                MemoryFields(
                    subject=observation.subject,
                    scope=observation.scope,
                    type="preference",
                    content={"statement": sentence, "preference": what},
                )
            )
        return found

    def _key_values(self, observation: Observation, keys: Mapping[str, str]) -> list[MemoryFields]:
        # Only keys the tenant registered: free-form fields are never promoted to memories.
        found: list[MemoryFields] = []
        for key, value in sorted(observation.fields.items()):
            if key not in keys or not isinstance(value, str | int | float | bool):
                continue
            key_field, value_field = OBSERVE_KEY_FIELDS[keys[key]]
            found.append(
                MemoryFields(
                    subject=observation.subject,
                    scope=observation.scope,
                    type=keys[key],
                    content={"statement": f"{key}: {value}", key_field: key, value_field: value},
                )
            )
        return found


def registered_keys(document: dict) -> dict[str, str]:
    """Each key a registration's ``observe`` sections name, with its memory type (first type wins)."""
    keys: dict[str, str] = {}
    for memory_type in sorted(OBSERVE_KEY_FIELDS):
        for key in document["types"][memory_type].get("observe", {}).get("keys", []):
            keys.setdefault(key, memory_type)
    return keys


def extractor() -> Extractor:
    path = getattr(settings, "CUSTODIAN_OBSERVATION_EXTRACTOR", "observations.extraction.RuleExtractor")
    return import_string(path)()
