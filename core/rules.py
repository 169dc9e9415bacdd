"""What the write policy and the read policy share: rule files as data.

A rule file is YAML with exactly ``version`` and ``rules``; each rule has a
unique ``id`` and a ``when`` mapping facts to the values that match; the
first matching rule wins, so the last rule must match everything. The
fingerprint is the SHA-256 of the canonical JSON of the whole document.
"""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

import yaml

from core.canonical import digest


class PolicyError(ValueError):
    """A rule file is malformed; the message says where."""


@dataclass(frozen=True)
class RuleDocument:
    version: str
    fingerprint: str
    rules: list[dict[str, Any]]


def read_rule_document(path: Path) -> RuleDocument:
    """Parse a rule file and check the shape every rule file shares."""
    try:
        document = yaml.safe_load(Path(path).read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise PolicyError(f"{path}: {exc}") from None
    if not isinstance(document, dict) or set(document) != {"version", "rules"}:
        raise PolicyError(f"{path}: expected exactly the keys 'version' and 'rules'")
    rules = document["rules"]
    if not isinstance(rules, list) or not rules:
        raise PolicyError(f"{path}: 'rules' must be a non-empty list")
    for index, rule in enumerate(rules):
        if not isinstance(rule, dict) or not isinstance(rule.get("id"), str) or "when" not in rule:
            raise PolicyError(f"{path}: rule #{index + 1} needs an id and a when")
    ids = [rule["id"] for rule in rules]
    if len(set(ids)) != len(ids):
        raise PolicyError(f"{path}: rule ids must be unique")
    if rules[-1]["when"]:
        raise PolicyError(f"{path}: the last rule must match everything (empty 'when')")
    return RuleDocument(str(document["version"]), digest(document), rules)


def parse_when(
    where: str, when: dict[str, Any] | None, facts: Mapping[str, set[Any]]
) -> dict[str, frozenset[Any]]:
    """Validate a rule's ``when`` against the known facts and their values."""
    parsed = {}
    for name, allowed in (when or {}).items():
        if name not in facts:
            raise PolicyError(f"{where}: unknown fact {name!r}")
        if not isinstance(allowed, list) or not set(allowed) <= facts[name]:
            raise PolicyError(f"{where}: {name} must list values from {sorted(map(str, facts[name]))}")
        parsed[name] = frozenset(allowed)
    return parsed


def matches(when: Mapping[str, frozenset[Any]], facts: Mapping[str, Any]) -> bool:
    """True if every fact in ``when`` has a listed value; a list-valued fact matches if any item is
    listed (an empty list matches ``none``)."""
    return all(_fact_matches(facts.get(name), allowed) for name, allowed in when.items())


def _fact_matches(value: Any, allowed: frozenset[Any]) -> bool:
    if isinstance(value, list | tuple):
        return any(item in allowed for item in value) if value else "none" in allowed
    return value in allowed


class Rule(Protocol):
    """A parsed rule, as matching reads it: its ``when`` (fact to the values that match)."""

    @property
    def when(self) -> Mapping[str, frozenset[Any]]: ...


RuleT = TypeVar("RuleT", bound=Rule)


def first_match(rules: Iterable[RuleT], facts: Mapping[str, Any]) -> RuleT:
    """Return the first rule whose ``when`` matches ``facts`` (the last rule always does)."""
    return next(rule for rule in rules if matches(rule.when, facts))
