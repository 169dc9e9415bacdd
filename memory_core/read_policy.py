"""The read policy: which view (return mode) of a memory a caller may have.

Rules are data (``read_rules.yaml``, overridable with ``CUSTODIAN_READ_POLICY_FILE``)
with their own fingerprint, recorded on every access event.
"""

import functools
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from django.db.models import Q

from core.rules import PolicyError, first_match, parse_when, read_rule_document
from memory_core.models import Memory

MODES = ("raw", "summary", "masked", "metadata_only", "deny")
# What a person reads wherever a page names the view it shows; the API keeps the values of MODES.
MODE_LABELS = {
    "raw": "full text",
    "summary": "summary only",
    "masked": "masked, text hidden",
    "metadata_only": "details withheld, metadata only",
    "deny": "withheld entirely",
}
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

    def rows_read_as(self, modes: Collection[str], context: dict, columns: Mapping[str, str]) -> Q:
        """Return a filter for the rows this caller reads in one of ``modes``: :meth:`decide` in SQL.

        ``columns`` names the field (or annotation) that holds each memory fact
        (``sensitivity``, ``scope``, ``type``, ``state``, ``fenced``; and
        ``subject_kind`` and ``subject_id`` when the caller acts for a subject).
        As in ``decide``, a row takes the first rule that matches it, so each
        rule counts only for rows no earlier rule matched.
        """
        wanted = earlier = NO_ROWS
        for rule in self.rules:
            condition = _condition(rule.when, context, columns)
            if condition is None:
                continue
            if rule.mode in modes:
                wanted |= (condition & ~earlier) if condition else ~earlier
            if not condition:  # this rule takes every row still undecided
                break
            earlier |= condition
        return wanted


NO_ROWS = Q(pk__in=[])


def _condition(when: Mapping[str, frozenset], context: dict, columns: Mapping[str, str]) -> Q | None:
    """A rule's ``when`` as a filter for one caller (empty: every row); None if the context rules it out."""
    condition = Q()
    for name, allowed in when.items():
        if name == "data_zone":
            if (context.get("data_zone") or "unspecified") not in allowed:
                return None
        elif name == "own_subject":
            condition &= _own_subject(allowed, context, columns)
        else:
            condition &= Q(**{f"{columns[name]}__in": sorted(allowed, key=str)})
    return condition


def _own_subject(allowed: frozenset, context: dict, columns: Mapping[str, str]) -> Q:
    """Rows whose subject is (or is not) the one the caller acts for; empty when both match."""
    subject = context.get("acting_for_subject") or {}
    own = (
        Q(**{columns["subject_kind"]: subject.get("kind"), columns["subject_id"]: subject.get("id")})
        if subject
        else NO_ROWS
    )
    if allowed >= {True, False}:
        return Q()
    if True in allowed:
        return own
    return ~own if False in allowed else NO_ROWS


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


def mode_label(mode: str) -> str:
    """Name a return mode in plain words (``MODE_LABELS``); an unknown one stays as it is."""
    return MODE_LABELS.get(mode, mode)
