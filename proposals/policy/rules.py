"""Load and validate a versioned rule set; fingerprint its canonical form."""

import functools
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings

from admission import detector_versions
from admission.personal import KINDS as PERSONAL_DATA_KINDS
from core.canonical import digest
from core.rules import PolicyError, matches, parse_when, read_rule_document
from evidence.selectors import BINDING_STATUSES
from memory_core.models import Memory
from proposals.models import Proposal
from proposals.policy.transition import ESCALATIONS

VERDICTS = ("auto_apply", "policy_gated", "review_required", "denied")
GATES = ("evidence_valid", "target_unchanged", "no_open_conflict")
FACTS: dict[str, set] = {
    "action": set(Proposal.Action.values),
    "origin": {"agent", "system"},
    "retention_policy": set(Memory.RetentionPolicy.values),
    "type": set(Memory.Type.values),
    "scope": set(Memory.Scope.values),
    "sensitivity": set(Memory.Sensitivity.values),
    "risk_level": set(Proposal.RISK_RANKS),
    "evidence": {"none", *BINDING_STATUSES},
    "target": {"new", "current", "missing", "inactive"},
    "dedupe": {"none", "duplicate", "contradiction"},
    "owner_explicit": {True, False},
    "own_subject": {True, False},
    "escalation": {"none", *ESCALATIONS},
    "ttl": {"none", "running", "elapsed"},
    # none, or the routing mode of the Dreaming run the action belongs to (high_risk overrides it)
    "dreaming": {"none", "auto", "policy_gated", "proposal_only", "high_risk"},
    # The admission firewall's findings (``admission``): a list fact matches if any kind is listed.
    "contains_secret": {True, False},
    "contains_personal_data": {"none", *PERSONAL_DATA_KINDS},
    "injection_suspected": {True, False},
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
        return matches(self.when, facts)


@dataclass(frozen=True)
class RuleSet:
    version: str
    fingerprint: str
    rules: tuple[Rule, ...]


def load_rule_set(path: Path) -> RuleSet:
    """Parse, validate and fingerprint the rule file at ``path``.

    The fingerprint covers the rules and the name and version of every admission
    detector whose findings they read: a new detector version is a new policy.
    """
    document = read_rule_document(path)
    rules = tuple(_parse_rule(index, raw) for index, raw in enumerate(document.rules))
    if rules[-1].verdict not in ("review_required", "denied"):
        raise PolicyError(f"{path}: the last rule must review or deny (escalating changes fall to it)")
    return RuleSet(version=document.version, fingerprint=fingerprint(document.fingerprint), rules=rules)


def fingerprint(rules_fingerprint: str, detectors: dict[str, str] | None = None) -> str:
    """The policy fingerprint: the rule document's digest together with the detectors' versions."""
    versions = detector_versions() if detectors is None else detectors
    return digest({"rules": rules_fingerprint, "detectors": versions})


def _parse_rule(index: int, raw: dict) -> Rule:
    where = f"rule {raw['id']!r}"
    if not {"verdict", "reasons"} <= set(raw):
        raise PolicyError(f"{where}: needs id, when, verdict and reasons")
    if set(raw) - _RULE_KEYS:
        raise PolicyError(f"{where}: unknown keys {sorted(set(raw) - _RULE_KEYS)}")
    if raw["verdict"] not in VERDICTS:
        raise PolicyError(f"{where}: verdict must be one of {VERDICTS}")
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
        id=raw["id"],
        verdict=raw["verdict"],
        reasons=tuple(raw["reasons"]),
        when=parse_when(where, raw["when"], FACTS),
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
