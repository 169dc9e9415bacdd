import pytest
from django.contrib.auth.models import Permission

from reviews.selectors import AUDIT
from tests.factories import create_payload, factor_fact, make_evidence, make_person, submit


@pytest.fixture
def pm(agent):
    return make_person("pm-1", agent.tenant)


@pytest.fixture
def pm2(agent):
    return make_person("pm-2", agent.tenant)


@pytest.fixture
def auditor(agent):
    return make_person("auditor", agent.tenant, AUDIT)


@pytest.fixture
def outsider(other_agent):
    """A reviewer of another tenant only, who also holds the permission globally (ignored on purpose)."""
    user = make_person("outsider", other_agent.tenant)
    user.user_permissions.add(Permission.objects.get(codename="decide_proposal"))
    return user


@pytest.fixture
def linked_user(agent):
    """A person linked to the submitting agent: counts as the submitter."""
    user = make_person("agent-owner", agent.tenant)
    agent.agent.user = user
    agent.agent.save(update_fields=["user"])
    return user


@pytest.fixture
def factor_proposal(agent):
    """A factor conclusion in org scope: review_required, one approval."""
    return submit(agent.agent, create_payload(factor_fact(), [make_evidence(agent.agent)]))


@pytest.fixture
def restricted_proposal(agent):
    """A restricted factor conclusion: two approvals."""
    return submit(
        agent.agent, create_payload(factor_fact(sensitivity="restricted"), [make_evidence(agent.agent)])
    )
