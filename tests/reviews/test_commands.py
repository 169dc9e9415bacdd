import pytest
from django.core.management import CommandError, call_command

from reviews.selectors import can_decide, viewable_tenants
from tests.factories import make_person


def test_grant_reviewer_gives_decide_permission_on_one_tenant(agent, other_agent):
    person = make_person("carol")
    call_command("grant_reviewer", tenant=agent.tenant.name, user="carol")
    assert can_decide(person, agent.tenant)
    assert not can_decide(person, other_agent.tenant)


def test_grant_reviewer_as_auditor_gives_view_only(agent):
    person = make_person("dave")
    call_command("grant_reviewer", "--auditor", tenant=agent.tenant.name, user="dave")
    assert list(viewable_tenants(person)) == [agent.tenant]
    assert not can_decide(person, agent.tenant)


@pytest.mark.parametrize(("tenant", "user"), [("nope", "carol"), ("quant-desk", "nobody")])
def test_grant_reviewer_refuses_unknown_names(agent, tenant, user):
    make_person("carol")
    with pytest.raises(CommandError):
        call_command("grant_reviewer", tenant=tenant, user=user)


def test_create_user_token_prints_a_working_token(pm, capsys):
    from rest_framework.test import APIClient

    call_command("create_user_token", user="pm-1")
    token = capsys.readouterr().out.strip()
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    assert token.startswith("csu_")
    assert client.get("/api/v1/reviews/queue/").status_code == 200
