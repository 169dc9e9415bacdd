"""Turn a proposal's facts into a verdict: the first matching rule wins."""

from dataclasses import dataclass

from core.rules import first_match
from proposals.policy.rules import Rule, RuleSet


@dataclass(frozen=True)
class Verdict:
    classification: str
    rule: Rule
    policy_version: str
    policy_fingerprint: str

    @property
    def reason_codes(self) -> list[str]:
        return list(self.rule.reasons)


def classify(rule_set: RuleSet, facts: dict) -> Verdict:
    """Return the verdict of the first rule in ``rule_set`` that matches ``facts``."""
    rule = first_match(rule_set.rules, facts)
    return Verdict(
        classification=rule.verdict,
        rule=rule,
        policy_version=rule_set.version,
        policy_fingerprint=rule_set.fingerprint,
    )
