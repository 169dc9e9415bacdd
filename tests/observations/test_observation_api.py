"""POST /api/v1/observations/: candidates become ordinary proposals, attacker cases first."""

import copy

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from guardian.shortcuts import assign_perm

from observations.extraction import Observation, RuleExtractor
from proposals.models import Proposal
from registrations.document import DEFAULT_DOCUMENT
from tests.factories import (
    apply_released,
    approve,
    make_agent,
    make_evidence,
    make_person,
    owner_context,
    user_preference,
)
from tests.registrations.test_publish import _requested

URL = "/api/v1/observations/"
ALICE = {"kind": "user", "id": "pm-alice"}


def _observation(agent, **overrides) -> dict:
    body = {
        "kind": "utterance",
        "text": "Thanks! I prefer weekly summaries on Mondays. Nothing else.",
        "subject": ALICE,
        "scope": "user",
        "evidence": [make_evidence(agent.agent, {"turn": "chat-1"}, kind="chat_turn").binding()],
        "policy_context": owner_context(),
    }
    body.update(overrides)
    return body


def _post(client, body, url=URL):
    return client.post(url, body, format="json")


def test_other_tenants_evidence_yields_denied_proposals_only(agent, other_agent, api):
    body = _observation(agent, evidence=[make_evidence(other_agent.agent).binding()])
    [candidate] = _post(api, body).json()["candidates"]
    assert candidate["status"] == Proposal.Status.DENIED
    assert candidate["classification"] == "denied"
    assert not Proposal.objects.filter(tenant=other_agent.tenant).exists()


def test_tenant_and_agent_come_from_the_credential_never_the_body(agent, other_agent, api):
    lying = owner_context(tenant_id=str(other_agent.tenant.pk), actor_agent=other_agent.agent.name)
    response = _post(api, _observation(agent, policy_context=lying))
    assert response.status_code == 403
    assert response.json()["code"] == "tenant_mismatch"
    assert not Proposal.objects.exists()


def test_candidate_about_another_subject_or_scope_is_refused(agent, api):
    for lie in ({"subject": {"kind": "user", "id": "pm-bob"}}, {"scope": "org"}):
        body = _observation(agent, candidates=[user_preference(**lie)])
        response = _post(api, body)
        assert response.status_code == 400
        assert response["Content-Type"] == "application/problem+json"
    assert not Proposal.objects.exists()


def test_anonymous_is_refused(anonymous, agent):
    assert _post(anonymous, _observation(agent)).status_code == 401


@pytest.mark.parametrize(
    "body_change",
    [
        {"kind": "dream"},
        {"text": "", "fields": {}},
        {"evidence": []},
        {"fields": {str(i): i for i in range(51)}},
    ],
)
def test_bad_input_is_problem_json_never_500(agent, api, body_change):
    response = _post(api, _observation(agent, **body_change))
    assert response.status_code == 400
    assert response.json()["code"] == "validation_error"


def test_explicit_preference_becomes_an_auto_apply_proposal(agent, api):
    response = _post(api, _observation(agent))
    assert response.status_code == 200
    [candidate] = response.json()["candidates"]
    assert candidate["origin"] == "extractor"
    assert candidate["content"]["preference"] == "weekly summaries on Mondays"
    assert candidate["classification"] == "auto_apply"
    assert candidate["matched_rule"] == "auto-owner-preference"
    proposal = Proposal.objects.get(pk=candidate["proposal_id"])
    assert proposal.submitted_by == agent.agent
    assert len(proposal.evidence) == 1


def test_resending_an_observation_replays_its_proposals(agent, api):
    body = _observation(agent)
    first = _post(api, body).json()["candidates"]
    again = _post(api, body).json()["candidates"]
    assert [c["proposal_id"] for c in again] == [c["proposal_id"] for c in first]
    assert all(c["replayed"] for c in again)
    assert Proposal.objects.count() == 1


def test_identical_text_from_another_source_subject_or_scope_is_a_different_memory(agent, api):
    base = _observation(agent)
    variants = [
        base,
        _observation(agent),  # same text, another evidence source
        base | {"subject": {"kind": "org", "id": "quant-desk"}, "scope": "org"},
        base | {"scope": "session"},
    ]
    ids = {_post(api, body).json()["candidates"][0]["proposal_id"] for body in variants}
    assert len(ids) == 4
    subjects = {(p.fields["subject"]["id"], p.fields["scope"]) for p in Proposal.objects.all()}
    assert subjects == {("pm-alice", "user"), ("quant-desk", "org"), ("pm-alice", "session")}


def test_agent_candidates_are_submitted_and_shared_facts_go_to_review(agent, api):
    fact = {
        "subject": {"kind": "org", "id": "quant-desk"},
        "scope": "org",
        "type": "semantic_fact",
        "content": {"statement": "momentum_12_1 IC is unstable after neutralisation"},
    }
    body = _observation(
        agent,
        kind="tool_result",
        text="backtest finished",
        subject=fact["subject"],
        scope="org",
        candidates=[fact],
        policy_context=owner_context(fact["subject"]),
    )
    [candidate] = _post(api, body).json()["candidates"]
    assert candidate["origin"] == "agent"
    assert candidate["classification"] == "review_required"


def test_batch_ingests_a_conversation_in_order_and_is_bounded(agent, api):
    turns = [_observation(agent, text=f"Please always cc team {n} on reports.") for n in range(3)]
    response = _post(api, {"observations": turns}, url=URL + "batch/")
    assert response.status_code == 200
    results = response.json()["observations"]
    assert [r["candidates"][0]["content"]["preference"] for r in results] == [
        f"cc team {n} on reports" for n in range(3)
    ]
    too_many = {"observations": [turns[0]] * 51}
    assert _post(api, too_many, url=URL + "batch/").status_code == 400


def test_queries_grow_per_observation_never_per_row(agent, api):
    def queries(n: int) -> int:
        turns = [_observation(agent, text=f"I prefer report {n}-{i}.") for i in range(n)]
        with CaptureQueriesContext(connection) as captured:
            assert _post(api, {"observations": turns}, url=URL + "batch/").status_code == 200
        return len(captured)

    queries(1)  # warm the registration and policy caches
    one, five = queries(1), queries(5)
    assert five <= 5 * one  # each candidate is one normal submission, nothing more


def test_rule_extractor_only_promotes_registered_keys():
    observation = Observation(
        kind="tool_result", subject=ALICE, scope="user", fields={"desk": "quant", "secret": "x"}
    )
    [candidate] = RuleExtractor().extract(observation, keys={"desk": "profile"})
    assert candidate["type"] == "profile"
    assert candidate["content"] == {
        "statement": "desk: quant",
        "profile_key": "desk",
        "profile_value": "quant",
    }
    assert RuleExtractor().extract(observation, keys={}) == []


def test_rule_extractor_ignores_preferences_in_tool_output():
    observation = Observation(kind="tool_result", subject=ALICE, scope="user", text="I prefer X")
    assert RuleExtractor().extract(observation, keys={}) == []


def test_structured_fields_become_facts_only_for_keys_the_registration_lists(agent, api):
    operator, publisher = make_person("operator", agent.tenant), make_person("publisher", agent.tenant)
    for person in (operator, publisher):
        assign_perm("tenancy.publish_registration", person, agent.tenant)
    fields = {"report_day": "monday", "password": "hunter2"}
    body = _observation(agent, kind="tool_result", text="", fields=fields)
    assert _post(api, body).json()["candidates"] == []  # the default registers no keys

    document = copy.deepcopy(DEFAULT_DOCUMENT)
    document["types"]["preference"]["observe"] = {"keys": ["report_day"]}
    _, proposal = _requested(agent, operator, document)
    approve(publisher, proposal)
    apply_released(proposal)

    [candidate] = _post(api, _observation(agent, kind="tool_result", text="", fields=fields)).json()[
        "candidates"
    ]
    assert candidate["content"]["preference_key"] == "report_day"
    assert "hunter2" not in str(Proposal.objects.values_list("fields", flat=True))


def test_another_agent_of_the_tenant_gets_its_own_proposals(agent, api):
    colleague = make_agent(agent.tenant.name, "colleague")
    body = _observation(agent)
    first = _post(api, body).json()["candidates"][0]["proposal_id"]
    second = _post(colleague.client, body).json()["candidates"][0]["proposal_id"]
    assert first != second


def test_one_lying_turn_refuses_the_whole_batch(agent, other_agent, api):
    lying = owner_context(tenant_id=str(other_agent.tenant.pk))
    turns = [_observation(agent), _observation(agent, policy_context=lying)]
    response = _post(api, {"observations": turns}, url=URL + "batch/")
    assert response.status_code == 403
    assert not Proposal.objects.exists()


def test_acting_for_a_subject_without_delegation_is_refused(agent, api):
    bob = {"kind": "user", "id": "pm-bob"}
    body = _observation(agent, subject=bob, policy_context=owner_context(bob))
    response = _post(api, body)
    assert response.status_code == 403
    assert not Proposal.objects.exists()


@pytest.mark.parametrize(
    ("text", "preference"),
    [
        ("I’d rather get the PDF", "get the PDF"),
        ("please ALWAYS include the benchmark!", "include the benchmark"),
        ("I would prefer   shorter\nreports", "shorter"),
    ],
)
def test_rule_extractor_reads_explicit_preference_statements(text, preference):
    observation = Observation(kind="utterance", subject=ALICE, scope="user", text=text)
    [candidate] = RuleExtractor().extract(observation, keys={})
    assert candidate["content"]["preference"] == preference


def test_rule_extractor_does_not_guess_from_hedged_or_third_party_text():
    for text in ("Bob prefers PDFs", "do you prefer PDFs?", "I like PDFs"):
        observation = Observation(kind="utterance", subject=ALICE, scope="user", text=text)
        assert RuleExtractor().extract(observation, keys={}) == []


def test_a_batch_of_observations_costs_one_request_each_and_a_refused_one_submits_nothing(
    agent, api, settings
):
    turns = [_observation(agent, text=f"Please always cc team {n} on reports.") for n in range(3)]
    settings.CUSTODIAN_API_RATE = "2/day"
    refused = _post(api, {"observations": turns}, url=URL + "batch/")
    assert refused.status_code == 429 and refused.json()["code"] == "throttled"
    assert not Proposal.objects.exists()
    settings.CUSTODIAN_API_RATE = "4/day"  # a new rate string, the same window: one request spent
    assert _post(api, {"observations": turns}, url=URL + "batch/").status_code == 200
    assert api.get("/api/v1/proposals/").status_code == 429
