"""System checks: the bundled rule set must load before the service starts."""

from django.conf import settings
from django.core import checks

from proposals.policy.rules import PolicyError, load_rule_set


@checks.register()
def check_policy_rules(app_configs, **kwargs):
    try:
        load_rule_set(settings.CUSTODIAN_POLICY_FILE)
    except PolicyError as exc:
        return [checks.Error(str(exc), hint="Fix the rule file.", id="proposals.E001")]
    return []
