"""Turn a proposal's facts into a verdict: the first matching rule wins.

One line no rule file can open: a change that escalates (see
``transition.escalation``) never runs without a person. The engine skips
``auto_apply`` and ``policy_gated`` rules for it, so a rule set can only
make such changes stricter (review or deny), never let them through.
"""

from dataclasses import dataclass

from proposals.policy.rules import Rule, RuleSet

UNATTENDED = ("auto_apply", "policy_gated")


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
    escalates = facts.get("escalation", "none") != "none"
    rule = next(
        rule
        for rule in rule_set.rules
        if rule.matches(facts) and not (escalates and rule.verdict in UNATTENDED)
    )
    return Verdict(
        classification=rule.verdict,
        rule=rule,
        policy_version=rule_set.version,
        policy_fingerprint=rule_set.fingerprint,
    )
