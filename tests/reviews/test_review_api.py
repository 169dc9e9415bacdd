"""Reviewer REST endpoints: people only, object permissions on lists and details alike."""

import pytest
from rest_framework.test import APIClient

from proposals.models import Proposal
from reviews.models import ReviewDecision
from reviews.selectors import proposal_owners
from tenancy.services import issue_user_token
from tests.factories import (
    apply_released,
    create_payload,
    factor_fact,
    make_evidence,
    submit,
    user_preference,
)


def person_client(user) -> APIClient:
    _, raw = issue_user_token(user=user)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return client


def _decide(client, proposal, **body):
    payload = {
        "decision": "approve",
        "reason": "IC table checked",
        "represented_owner": "",
        "action_digest": proposal.action_digest,
        **body,
    }
    return client.post(f"/api/v1/proposals/{proposal.pk}/decisions/", payload, format="json")


def test_queue_lists_what_the_reviewer_may_decide(pm, factor_proposal, other_agent):
    foreign = submit(other_agent.agent, create_payload(factor_fact(), [make_evidence(other_agent.agent)]))
    body = person_client(pm).get("/api/v1/reviews/queue/").json()
    assert [row["id"] for row in body["results"]] == [str(factor_proposal.pk)]
    assert str(foreign.pk) not in str(body)


def test_global_permission_does_not_open_other_tenants(outsider, factor_proposal):
    assert person_client(outsider).get("/api/v1/reviews/queue/").json()["results"] == []


def test_queue_leaves_out_what_the_person_submitted(linked_user, factor_proposal):
    assert person_client(linked_user).get("/api/v1/reviews/queue/").json()["results"] == []


def test_queue_filters_by_type_and_rule(pm, factor_proposal):
    client = person_client(pm)
    assert (
        len(
            client.get("/api/v1/reviews/queue/?type=semantic_fact&reason=review-shared-facts").json()[
                "results"
            ]
        )
        == 1
    )
    assert client.get("/api/v1/reviews/queue/?type=preference").json()["results"] == []
    assert client.get("/api/v1/reviews/queue/?type=poem").status_code == 400


def test_decision_endpoint_records_and_releases(pm, factor_proposal):
    response = _decide(person_client(pm), factor_proposal)
    assert response.status_code == 201
    assert response.json()["actor"] == "pm-1"
    assert response.json()["represented_owner"] == next(
        iter(proposal_owners(factor_proposal))
    )  # blank: its owner
    factor_proposal.refresh_from_db()
    assert factor_proposal.status == Proposal.Status.RELEASED


def test_a_decision_is_for_the_owner_the_proposal_names_or_for_yourself(pm, factor_proposal):
    response = _decide(person_client(pm), factor_proposal, represented_owner="pm-1")
    assert (response.status_code, response.json()["represented_owner"]) == (201, "pm-1")


def test_a_decision_for_an_owner_the_proposal_does_not_name_records_nothing(pm, factor_proposal):
    response = _decide(person_client(pm), factor_proposal, represented_owner="org:someone-else")
    assert response.status_code == 403
    assert response.json()["code"] == "owner_not_representable"
    assert not ReviewDecision.objects.filter(proposal=factor_proposal).exists()
    factor_proposal.refresh_from_db()
    assert factor_proposal.status == Proposal.Status.PENDING_REVIEW


@pytest.mark.parametrize(
    ("who", "status", "code"),
    [
        ("auditor", 403, "permission_denied"),
        ("outsider", 404, "not_found"),
        ("linked_user", 403, "self_approval"),
    ],
)
def test_decision_refusals_are_problems(request, factor_proposal, who, status, code):
    response = _decide(person_client(request.getfixturevalue(who)), factor_proposal)
    assert (response.status_code, response.json()["code"]) == (status, code)
    assert response["Content-Type"] == "application/problem+json"
    assert not ReviewDecision.objects.exists()


def test_stale_digest_is_refused(pm, factor_proposal):
    response = _decide(person_client(pm), factor_proposal, action_digest="a" * 64)
    assert (response.status_code, response.json()["code"]) == (409, "stale_digest")


def test_blank_reason_is_a_validation_error(pm, factor_proposal):
    response = _decide(person_client(pm), factor_proposal, reason="  ")
    assert (response.status_code, response.json()["code"]) == (400, "validation_error")
    assert "reason" in response.json()["errors"]


def test_agent_tokens_cannot_use_reviewer_endpoints(api, factor_proposal):
    assert api.get("/api/v1/reviews/queue/").status_code == 403
    assert _decide(api, factor_proposal).status_code == 403


def test_people_cannot_use_agent_endpoints(pm):
    assert person_client(pm).get("/api/v1/proposals/").status_code == 403


def test_session_login_works_for_reviewers(client, pm, factor_proposal):
    client.force_login(pm)
    assert client.get("/api/v1/reviews/queue/").json()["results"][0]["id"] == str(factor_proposal.pk)


def test_agent_amends_after_changes_requested(agent, api, pm, factor_proposal):
    _decide(person_client(pm), factor_proposal, decision="request_changes", reason="name the universe")
    payload = create_payload(
        factor_fact(content={"statement": "momentum_12_1 IC unstable in CSI800"}),
        [make_evidence(agent.agent)],
    )
    response = api.post(f"/api/v1/proposals/{factor_proposal.pk}/amend/", payload, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["version"] == 2
    assert response.json()["status"] == "pending_review"
    assert response.json()["action_digest"] != factor_proposal.action_digest


def test_an_amendment_after_changes_requested_goes_back_to_the_reviewer(agent, api, pm, factor_proposal):
    reviewer = person_client(pm)
    asked = reviewer.post(
        f"/api/v1/proposals/{factor_proposal.pk}/decisions/",
        {
            "decision": "request_changes",
            "reason": "which universe?",
            "represented_owner": "",
            "action_digest": factor_proposal.action_digest,
        },
        format="json",
    )
    assert asked.status_code == 201, asked.content
    # The agent rewrites its factor conclusion as a preference the owner rule would auto-apply.
    amended = create_payload(user_preference(), [make_evidence(agent.agent)])
    response = api.post(f"/api/v1/proposals/{factor_proposal.pk}/amend/", amended, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["status"], body["classification"]) == ("pending_review", "review_required")
    assert body["required_approvals"] >= factor_proposal.required_approvals
    assert "amended_after_review" in body["reason_codes"]
    queue = reviewer.get("/api/v1/reviews/queue/").json()["results"]
    assert [row["id"] for row in queue] == [str(factor_proposal.pk)]
    factor_proposal.refresh_from_db()
    assert _decide(reviewer, factor_proposal).status_code == 201
    assert apply_released(factor_proposal).outcome == "applied"  # its seal covers the held path


@pytest.mark.parametrize("first", ["reject", "approve"])
def test_deciding_a_proposal_no_longer_under_review_is_409_over_rest(pm, pm2, factor_proposal, first):
    assert _decide(person_client(pm), factor_proposal, decision=first).status_code == 201
    response = _decide(person_client(pm2), factor_proposal)
    assert (response.status_code, response.json()["code"]) == (409, "not_under_review")
    assert response.json()["proposal_status"] in ("rejected", "released")
