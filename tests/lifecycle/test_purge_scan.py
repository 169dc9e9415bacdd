"""A purge leaves nothing of the memory anywhere, after it went through Dreaming and compaction too.

The scan reads every column of every table the database has (``tests.database_scan``), so a
table added later that keeps a copy of content, a subject id or a key fails here.
"""

import copy
import uuid

import pytest
from django.core.management import call_command
from guardian.shortcuts import assign_perm

from memory_core.models import Memory
from proposals.models import DreamingRun, Proposal
from registrations.document import DEFAULT_DOCUMENT
from tenancy.services import grant_delegation
from tests.database_scan import columns_holding
from tests.factories import apply_released, approve, create_payload, make_evidence, make_person, submit
from tests.maintenance.test_compaction import capacity  # noqa: F401
from tests.registrations.test_publish import _requested

# About the person, not the memory: the grant to act for them and whom each sealed decision was for.
GRANT_TABLES = {
    "reviews_historicalreviewdecision": ["represented_owner"],
    "reviews_reviewdecision": ["represented_owner"],
    "tenancy_delegation": ["subject_id"],
    "tenancy_historicaldelegation": ["subject_id"],
}


@pytest.fixture
def people(agent):
    return [make_person(f"purge-rev-{n}", agent.tenant) for n in range(2)]


@pytest.fixture
def secrets():
    return {kind: f"{kind}{uuid.uuid4().hex}" for kind in ("zq", "subj", "key")}


def _decide(proposal, people):
    proposal.refresh_from_db()
    for person in people[: proposal.required_approvals]:
        approve(person, proposal)
    return apply_released(proposal)


def _publish(agent, **types):
    """Publish a registration with the given per-type settings, through the reviewed path."""
    operator, publisher = (
        make_person("scan-operator", agent.tenant),
        make_person("scan-publisher", agent.tenant),
    )
    for person in (operator, publisher):
        assign_perm("tenancy.publish_registration", person, agent.tenant)
    document = copy.deepcopy(DEFAULT_DOCUMENT)
    for memory_type, settings in types.items():
        document["types"][memory_type].update(settings)
    _, proposal = _requested(agent, operator, document)
    approve(publisher, proposal)
    assert apply_released(proposal).outcome == "applied"


def _remember(agent, people, subject, statement, content, sensitivity="confidential") -> Memory:
    memory = {
        "subject": subject,
        "scope": "user",
        "type": "preference",
        "content": {"statement": statement, **content},
        "sensitivity": sensitivity,
    }
    context = {"acting_for_subject": subject, "consent_basis": "explicit", "risk_level": "low"}
    payload = create_payload(memory, [make_evidence(agent.agent)], context)
    # No key derived from the statement: restatements are built on purpose, for Dreaming to merge.
    proposal = submit(agent.agent, {**payload, "identified_by_client": True})
    assert _decide(proposal, people).outcome == "applied"
    return Memory.objects.get(pk=proposal.target_id)


def _erase(agent, memory, people):
    """Delete, then purge, the memory, each as policy requires (the purge takes two people)."""
    for verb in ("delete", "purge"):
        memory.refresh_from_db()
        proposal = submit(
            agent.agent,
            {
                "action": verb,
                "memory_id": str(memory.id),
                "base_revision": memory.revision,
                "reason": "the person asked",
                "policy_context": {
                    "acting_for_subject": {"kind": memory.subject_kind, "id": memory.subject_id},
                    "risk_level": "low",
                },
            },
        )
        assert _decide(proposal, people).outcome == "applied", verb


def _erase_as_executor(agent, memory, people):
    """Delete, then purge, the memory with the executor's process on its own role's grants."""
    from tests.executor.test_roles_run_the_app import _drain, connected_as

    for verb in ("delete", "purge"):
        with connected_as("custodian_executor"):
            _drain()  # what is released already (a Dreaming run's actions) applies first
        memory.refresh_from_db()
        proposal = submit(
            agent.agent,
            {
                "action": verb,
                "memory_id": str(memory.id),
                "base_revision": memory.revision,
                "reason": "erase",
            },
        )
        for person in people[: proposal.required_approvals]:
            approve(person, proposal)
        with connected_as("custodian_executor"):
            _drain()
        assert Proposal.objects.get(pk=proposal.pk).status == "applied", verb


def _search_and_vote(api, query, subject) -> None:
    """Recall the memories acting for their subject, and vote one useful (an access event and feedback)."""
    body = {
        "query": query,
        "filters": {"subject": subject},
        "policy_context": {"acting_for_subject": subject},
    }
    response = api.post("/api/v1/recall/search", body, format="json")
    assert response.status_code == 200 and response.json()["results"], response.content
    served = response.json()["results"][0]["memory"]
    vote = {"memory_id": served["memory_id"], "revision": served["revision"], "verdict": "useful"}
    voted = api.post(f"/api/v1/recall/{response.json()['recall_id']}/feedback", vote, format="json")
    assert voted.status_code == 201, voted.content


def _found(secrets):
    return {kind: columns_holding(value) for kind, value in secrets.items()}


@pytest.mark.django_db(transaction=True)
def test_purging_two_contradicting_preferences_leaves_nothing_of_them_or_of_their_dreaming_run(
    agent, api, people, secrets
):
    _publish(agent, preference={"dreaming": {"mode": "auto"}})
    subject = {"kind": "user", "id": secrets["subj"]}
    grant_delegation(agent=agent.agent, subject=subject)
    older = _remember(
        agent,
        people,
        subject,
        f"she wants summaries weekly {secrets['zq']}",
        {"preference_key": secrets["key"], "preference_value": "weekly"},
    )
    newer = _remember(
        agent,
        people,
        subject,
        f"she wants summaries daily now {secrets['zq']}",
        {"preference_key": secrets["key"], "preference_value": "daily"},
    )
    call_command("dreaming_pass", verbosity=0)
    run = DreamingRun.objects.get()
    (update,) = Proposal.objects.filter(dreaming_run=run)
    assert _decide(update, people).outcome == "applied"
    _search_and_vote(api, secrets["zq"], subject)
    assert all(_found(secrets).values())  # the scan sees each before the purge

    for memory in (older, newer):
        _erase(agent, memory, people)

    assert _found(secrets) == {"zq": {}, "subj": GRANT_TABLES, "key": {}}
    assert DreamingRun.objects.filter(pk=run.pk).exists()  # the run stays, by ids and digests only
    call_command("verify_receipts")


@pytest.mark.django_db(transaction=True)
def test_purging_one_member_scrubs_the_run_it_was_frozen_in(agent, people, secrets):
    _publish(agent, preference={"dreaming": {"mode": "auto"}})
    subject = {"kind": "user", "id": secrets["subj"]}
    grant_delegation(agent=agent.agent, subject=subject)
    statement = f"she prefers weekly summaries {secrets['zq']}"
    kept = _remember(agent, people, subject, statement, {}, sensitivity="internal")
    gone = _remember(agent, people, subject, statement + ".", {}, sensitivity="internal")
    call_command("dreaming_pass", verbosity=0)
    run = DreamingRun.objects.get()
    assert {str(kept.id), str(gone.id)} == set(run.member_ids)

    _erase(agent, gone, people)

    run.refresh_from_db()
    assert secrets["zq"] not in str(run.plan) and secrets["subj"] not in run.subject_id
    assert "proposals_dreamingrun" not in columns_holding(secrets["zq"])


@pytest.mark.django_db(transaction=True)
def test_purging_a_compacted_source_leaves_nothing_of_it_once_its_summary_is_rewritten(
    agent,
    people,
    secrets,
    remember,
    capacity,  # noqa: F811
):
    from maintenance.compaction import propose_compactions

    sources = [
        remember(f"note {n} {secrets['zq'] if n == 0 else ''}\nsecond line {n}".strip()) for n in range(4)
    ]
    assert propose_compactions() == 1
    compaction = Proposal.objects.get(action="compact")
    assert apply_released(compaction).outcome == "applied"
    assert str(sources[0].id) in {m["memory_id"] for m in compaction.fields["members"]}

    _erase(agent, sources[0], people)
    resummary = Proposal.objects.get(action="update", target_id=compaction.target_id)
    assert apply_released(resummary).outcome == "applied"

    assert _found({"zq": secrets["zq"]}) == {"zq": {}}
    call_command("verify_receipts")


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_the_executor_role_scrubs_a_dreaming_run_on_its_own_grants(agent, people, secrets):
    call_command("setup_db_roles", verbosity=0)
    _publish(agent, preference={"dreaming": {"mode": "auto"}})
    subject = {"kind": "user", "id": secrets["subj"]}
    grant_delegation(agent=agent.agent, subject=subject)
    statement = f"she prefers weekly summaries {secrets['zq']}"
    _remember(agent, people, subject, statement, {}, sensitivity="internal")
    gone = _remember(agent, people, subject, statement + ".", {}, sensitivity="internal")
    call_command("dreaming_pass", verbosity=0)

    _erase_as_executor(agent, gone, people)

    assert DreamingRun.objects.get().subject_id == ""
    assert "proposals_dreamingrun" not in columns_holding(secrets["zq"])


@pytest.mark.django_db(transaction=True)
def test_an_agent_naming_its_update_like_a_resummary_withdraws_nothing(agent, api, remember, secrets):
    memory = remember(f"she prefers weekly summaries {secrets['zq']}")
    body = {
        "action": "update",
        "memory_id": str(memory.id),
        "base_revision": memory.revision,
        "changes": {"content": {"statement": "she prefers daily summaries"}},
        "evidence": [make_evidence(agent.agent).binding()],
        "policy_context": {"acting_for_subject": {"kind": "user", "id": "pm-alice"}, "risk_level": "low"},
    }
    key = f"resummary:{memory.id}:1:{uuid.uuid4()}"
    response = api.post("/api/v1/proposals/", body, format="json", HTTP_IDEMPOTENCY_KEY=key)
    assert response.status_code in (201, 202), response.content
    proposal = Proposal.objects.get(pk=response.json()["id"])
    for person in [make_person(f"upd-{n}", agent.tenant) for n in range(proposal.required_approvals)]:
        approve(person, proposal)
    receipt = apply_released(proposal)
    assert receipt.outcome == "applied" and "withdrawn" not in receipt.effects
    kept = Memory.history.filter(id=memory.id, revision=1).values_list("content", flat=True)
    assert all(secrets["zq"] in content["statement"] for content in kept) and kept
