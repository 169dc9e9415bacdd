"""The policy engine: rules as data (``rules``), facts to verdict (``engine``)."""

from proposals.policy.engine import Verdict, classify
from proposals.policy.rules import PolicyError, RuleSet, active_rule_set, load_rule_set

__all__ = ["PolicyError", "RuleSet", "Verdict", "active_rule_set", "classify", "load_rule_set"]
