"""The MGP policy profile is the default rule set with its documented changes, and no more."""

from pathlib import Path

from django.conf import settings

from memory_core.read_policy import load_read_policy
from proposals.policy.rules import load_rule_set

PROFILE = Path(settings.BASE_DIR) / "mgp" / "profile"


def test_the_write_profile_is_the_defaults_plus_the_owner_rules():
    default = {
        rule.id: rule for rule in load_rule_set(Path(settings.BASE_DIR) / "proposals/policy/rules.yaml").rules
    }
    profile = {rule.id: rule for rule in load_rule_set(PROFILE / "rules.yaml").rules}
    added = {"mgp-owner-user-scope", "review-injection-user-scope"}
    assert set(profile) - set(default) == added and set(default) <= set(profile)
    changed = {rule_id for rule_id in default if profile[rule_id] != default[rule_id]}
    assert changed == {"review-manual-retention"}  # now also holds purges of such memories
    owner = profile["mgp-owner-user-scope"]
    assert owner.when["scope"] == {"user"} and owner.when["own_subject"] == {True}
    order = list(profile)
    assert order.index("mgp-owner-user-scope") > order.index("review-manual-retention")
    # Suspected injection is reviewed in the user's own scope too, before the owner rule lets it apply.
    assert order.index("review-injection-user-scope") < order.index("mgp-owner-user-scope")
    assert order[0] == "deny-secret"
    assert order[-1] == "review-default"


def test_the_read_profile_is_the_defaults_one_line_stricter():
    default = load_read_policy(Path(settings.BASE_DIR) / "memory_core/read_rules.yaml")
    profile = load_read_policy(PROFILE / "read_rules.yaml")
    assert [rule.id for rule in default.rules if rule.id != "read-confidential-own"] == [
        r.id for r in profile.rules
    ]
