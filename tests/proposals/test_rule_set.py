"""Loading, validating and fingerprinting rule files."""

import re
from pathlib import Path

import pytest
from django.conf import settings

from proposals.policy import PolicyError, load_rule_set

VALID = """
version: "1"
rules:
  - {id: a, when: {type: [preference]}, verdict: auto_apply, reasons: [x]}
  - {id: fallback, when: {}, verdict: review_required, reasons: [y]}
"""


def test_fingerprint_ignores_formatting_but_not_content(tmp_path):
    first, second, third = tmp_path / "1.yaml", tmp_path / "2.yaml", tmp_path / "3.yaml"
    first.write_text(VALID)
    second.write_text(
        VALID.replace("{id: a, when", "{when").replace(
            "verdict: auto_apply, reasons: [x]}", "verdict: auto_apply, reasons: [x], id: a}"
        )
    )
    third.write_text(VALID.replace("auto_apply", "policy_gated"))
    assert load_rule_set(first).fingerprint == load_rule_set(second).fingerprint
    assert load_rule_set(first).fingerprint != load_rule_set(third).fingerprint


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (VALID.replace("verdict: auto_apply", "verdict: maybe"), "verdict must be one of"),
        (VALID.replace("type: [preference]", "colour: [red]"), "unknown fact"),
        (VALID.replace("type: [preference]", "type: [poem]"), "type must list values"),
        (
            VALID.replace("  - {id: fallback, when: {}, verdict: review_required, reasons: [y]}\n", ""),
            "last rule must match everything",
        ),
        (VALID.replace("id: fallback", "id: a"), "unique"),
        ("rules: []", "exactly the keys"),
    ],
)
def test_malformed_rule_files_are_refused(tmp_path, text, message):
    path = tmp_path / "rules.yaml"
    path.write_text(text)
    with pytest.raises(PolicyError, match=message):
        load_rule_set(path)


def test_bundled_rules_pass_the_system_check():
    from proposals.checks import check_policy_rules

    assert check_policy_rules(None) == []


def test_the_documentation_lists_every_default_rule_in_order():
    """The rule table in docs/policy.md is the shipped rule file, rule for rule (it cannot drift)."""
    page = (Path(settings.BASE_DIR) / "docs" / "policy.md").read_text()
    table = page.split("# The rule set", 1)[1].split("\n\n**", 1)[0]
    listed = re.findall(r"^\| \d+ \| `([a-z0-9-]+)` \|", table, flags=re.M)
    assert listed == [rule.id for rule in load_rule_set(settings.CUSTODIAN_POLICY_FILE).rules]
