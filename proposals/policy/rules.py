"""Load and validate a versioned rule set; fingerprint its canonical form."""

import functools
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from django.conf import settings

from core.canonical import digest

VERDICTS = ("auto_apply", "policy_gated", "review_required", "denied")
GATES = ("evidence_valid", "target_unchanged", "no_open_conflict")
FACTS = {
    "action": {"create", "update", "expire", "revoke", "delete", "purge", "restore"},
    "origin": {"agent", "system"},
    "retention_policy": {
        "persistent",
        "time_bound",
        "session_bound",
        "task_bound",
        "ephemeral",
        "manual_review_required",
    },
    "type": {
        "profile",
        "preference",
        "episodic_event",
        "semantic_fact",
        "procedural_rule",
        "relationship",
        "checkpoint_pointer",
        "artifact_summary",
    },
    "scope": {"user", "session", "task", "agent", "org", "shared_team"},
    "sensitivity": {"public", "internal", "confidential", "restricted"},
    "risk_level": {"low", "medium", "high", "unspecified"},
    "evidence": {"valid", "none", "superseded", "invalidated", "mismatch", "unknown"},
    "target": {"new", "current", "missing", "inactive"},
    "dedupe": {"none", "duplicate", "contradiction"},
    "owner_explicit": {True, False},
}
_RULE_KEYS = {
    "id",
    "description",
    "when",
    "verdict",
    "reasons",
    "approvals",
    "gates",
    "hold_seconds",
    "review_window_hours",
}


class PolicyError(ValueError):
    """The rule file is malformed; the message says where."""


@dataclass(frozen=True)
class Rule:
    id: str
    verdict: str
    reasons: tuple[str, ...]
    when: dict = field(default_factory=dict)
    approvals: int = 0
    gates: tuple[str, ...] = ()
    hold_seconds: int = 0
    review_window_hours: float | None = None
    description: str = ""

    def matches(self, facts: dict) -> bool:
        return all(facts.get(name) in allowed for name, allowed in self.when.items())


@dataclass(frozen=True)
class RuleSet:
    version: str
    fingerprint: str
    rules: tuple[Rule, ...]


def load_rule_set(path: Path) -> RuleSet:
    """Parse, validate and fingerprint the rule file at ``path``."""
    try:
        document = yaml.safe_load(Path(path).read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise PolicyError(f"{path}: {exc}") from None
    if not isinstance(document, dict) or set(document) != {"version", "rules"}:
        raise PolicyError(f"{path}: expected exactly the keys 'version' and 'rules'")
    raw_rules = document["rules"]
    if not isinstance(raw_rules, list) or not raw_rules:
        raise PolicyError(f"{path}: 'rules' must be a non-empty list")
    rules = tuple(_parse_rule(index, raw) for index, raw in enumerate(raw_rules))
    ids = [rule.id for rule in rules]
    if len(set(ids)) != len(ids):
        raise PolicyError(f"{path}: rule ids must be unique")
    if rules[-1].when:
        raise PolicyError(f"{path}: the last rule must match everything (empty 'when')")
    return RuleSet(
        version=str(document["version"]),
        fingerprint=digest(document),
        rules=rules,
    )


def _parse_rule(index: int, raw) -> Rule:
    where = f"rule #{index + 1}"
    if not isinstance(raw, dict) or not {"id", "when", "verdict", "reasons"} <= set(raw):
        raise PolicyError(f"{where}: needs id, when, verdict and reasons")
    if set(raw) - _RULE_KEYS:
        raise PolicyError(f"{where}: unknown keys {sorted(set(raw) - _RULE_KEYS)}")
    where = f"rule {raw['id']!r}"
    if raw["verdict"] not in VERDICTS:
        raise PolicyError(f"{where}: verdict must be one of {VERDICTS}")
    when = raw["when"] or {}
    for name, allowed in when.items():
        if name not in FACTS:
            raise PolicyError(f"{where}: unknown fact {name!r}")
        if not isinstance(allowed, list) or not set(allowed) <= FACTS[name]:
            raise PolicyError(f"{where}: {name} must list values from {sorted(map(str, FACTS[name]))}")
    gates = tuple(raw.get("gates", ()))
    if set(gates) - set(GATES):
        raise PolicyError(f"{where}: unknown gates {sorted(set(gates) - set(GATES))}")
    if gates and raw["verdict"] != "policy_gated":
        raise PolicyError(f"{where}: only policy_gated rules have gates")
    approvals = int(raw.get("approvals", 1 if raw["verdict"] == "review_required" else 0))
    if raw["verdict"] == "review_required" and approvals < 1:
        raise PolicyError(f"{where}: review_required needs at least one approval")
    window = raw.get("review_window_hours")
    if window is not None and (raw["verdict"] != "review_required" or not float(window) > 0):
        raise PolicyError(f"{where}: review_window_hours is a positive number on review_required rules")
    return Rule(
        id=str(raw["id"]),
        verdict=raw["verdict"],
        reasons=tuple(raw["reasons"]),
        when={name: frozenset(values) for name, values in when.items()},
        approvals=approvals,
        gates=gates,
        hold_seconds=int(raw.get("hold_seconds", 0)),
        review_window_hours=float(window) if window is not None else None,
        description=raw.get("description", ""),
    )


@functools.cache
def _load_cached(path: str) -> RuleSet:
    return load_rule_set(Path(path))


def active_rule_set() -> RuleSet:
    """Return the rule set named by ``CUSTODIAN_POLICY_FILE`` (parsed once per process)."""
    return _load_cached(str(settings.CUSTODIAN_POLICY_FILE))
