"""A Dreaming run's window and plan show each member's content only in the caller's view of it."""

import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from maintenance.dreaming.runs import dreaming_pass
from tenancy.services import revoke_delegations
from tests.factories import make_agent

RUNS = "/api/v1/dreaming/runs/"


@pytest.fixture
def peer(agent):
    return make_agent(agent.tenant.name, "peer-agent", acts_for=())


@pytest.fixture
def contradiction(remember, marker):
    """Two confidential preferences giving one structured key different values: a run plans an update."""

    def make(sensitivity="confidential") -> None:
        for value in ("weekly", "daily"):
            said = f"Alice wants summaries {value}"
            content = {"statement": said, "preference_key": f"{marker}-cadence", "preference_value": value}
            remember(said, content=content, sensitivity=sensitivity)
        dreaming_pass()

    return make


def _runs(client, **params):
    response = client.get(RUNS, params)
    assert response.status_code == 200, response.content
    return response.json()["results"]


def test_another_agent_does_not_see_the_preference_key_of_confidential_members(peer, contradiction, marker):
    contradiction()
    (run,) = _runs(peer.client)
    assert marker not in json.dumps(run)
    assert run["view"] == "masked"
    assert {member["view"] for member in run["members"]} == {"masked"}
    (update,) = run["plan"]
    assert (update["kind"], update["reason"], len(update["proposals"])) == ("update", "***", 1)


def test_acting_for_the_subject_shows_the_plan_raw(agent, contradiction, marker):
    contradiction()
    (run,) = _runs(agent.client, acting_for="user:pm-alice")
    assert run["view"] == "raw"
    assert f"{marker}-cadence" in run["plan"][0]["reason"]
    assert all(member["evidence"] for member in run["members"])


def test_a_revoked_or_lying_acting_for_is_refused(agent, peer, contradiction, marker):
    contradiction()
    revoke_delegations(agent=agent.agent, subject={"kind": "user", "id": "pm-alice"})
    for client in (agent.client, peer.client):
        response = client.get(RUNS, {"acting_for": "user:pm-alice"})
        assert (response.status_code, response.json()["code"]) == (403, "acting_for_not_granted")
        assert marker not in response.content.decode()
    assert marker not in json.dumps(_runs(agent.client))


def test_restricted_members_show_no_evidence_and_no_reason(peer, contradiction, marker):
    contradiction("restricted")
    (run,) = _runs(peer.client)
    assert marker not in json.dumps(run)
    assert run["view"] == "metadata_only"
    assert all(set(member) == {"memory_id", "revision", "view"} for member in run["members"])


def test_the_runs_list_reads_members_once_per_page(peer, remember):
    def count() -> int:
        with CaptureQueriesContext(connection) as queries:
            _runs(peer.client)
        return len(queries)

    def duplicates(subject_id: str) -> None:
        for _ in range(2):
            remember(f"{subject_id} prefers weekly summaries", subject={"kind": "user", "id": subject_id})

    duplicates("pm-alice")
    dreaming_pass()
    few = count()
    for n in range(4):
        duplicates(f"pm-{n}")
    dreaming_pass()
    assert len(_runs(peer.client)) == 5
    assert count() == few
