"""Capacity compaction: the sweep proposes a summary, the executor writes it with lineage,
sources go dormant (restorable), fences follow lineage, a moved member stops everything,
and a purged source is dropped from the summary, which is re-proposed."""

import copy
import uuid
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.management import call_command
from django.utils import timezone
from guardian.shortcuts import assign_perm

from evidence.models import EvidenceRevision
from executor.audit import memory_problems
from executor.models import Receipt
from maintenance.compaction import over_capacity_groups, propose_compactions
from maintenance.schema_evolution import request_publication
from memory_core.models import Memory, MemoryEvidence, MemoryLineage, MemoryReads
from proposals.kinds.compact import CompactionInvalid
from proposals.models import Proposal
from proposals.policy import load_rule_set
from provenance.services import invalidate_evidence_revision
from registrations.document import DEFAULT_DOCUMENT
from registrations.services import draft_registration
from tenancy.services import system_agent
from tests.factories import apply_released, approve, make_evidence, make_person, submit

CAPACITY = 3


@pytest.fixture
def capacity(agent):
    """Publish, through the governed path, a registration capping preferences at 3 per subject+scope."""
    document = copy.deepcopy(DEFAULT_DOCUMENT)
    document["types"]["preference"]["capacity"]["per_subject_scope"] = CAPACITY
    operator, publisher = make_person("operator", agent.tenant), make_person("publisher", agent.tenant)
    for person in (operator, publisher):
        assign_perm("tenancy.publish_registration", person, agent.tenant)
    candidate = draft_registration(tenant_id=agent.tenant.pk, document=document, created_by="op")
    from maintenance.schema_evolution import validate_candidate

    validate_candidate(candidate=candidate)
    proposal = request_publication(
        tenant=agent.tenant, candidate_id=candidate.pk, requested_by=operator, reason="cap"
    )
    approve(publisher, proposal)
    assert apply_released(proposal).outcome == "applied"
    return CAPACITY


def _age(memory, days: int) -> None:
    Memory.objects.filter(pk=memory.pk).update(updated_at=timezone.now() - timedelta(days=days))


def _read(memory, days_ago: int, reads: int) -> None:
    day = (timezone.now() - timedelta(days=days_ago)).date()
    MemoryReads.objects.create(tenant_id=memory.tenant_id, memory_id=memory.id, day=day, reads=reads)


def _four(remember, marker=""):
    """Four preferences of one subject+scope: one over the capacity of three (oldest first).

    Not aged by hand: an edited row no longer matches its receipts, and these tests audit them.
    """
    return [remember(f"{marker} note {n}\nsecond line {n}".strip()) for n in range(4)]


def _compaction():
    return Proposal.objects.get(action="compact")


def _search(api, query, **body):
    response = api.post("/api/v1/recall/search", {"query": query, **body}, format="json")
    assert response.status_code == 200, response.content
    return {item["memory"]["memory_id"] for item in response.json()["results"]}


def test_the_sweep_proposes_only_over_capacity(agent, capacity, remember):
    memories = [remember(f"note {n}") for n in range(3)]
    assert propose_compactions() == 0  # at capacity, not over it
    memories.append(remember("note 3"))
    assert propose_compactions() == 1
    assert propose_compactions() == 0  # the same frozen plan: proposed once
    proposal = _compaction()
    assert (proposal.matched_rule, proposal.submitted_by.is_system) == ("auto-system-compaction", True)
    # 4 active, capacity 3: two members go and the successor counts as one.
    assert len(proposal.fields["members"]) == 2


def test_the_lowest_activation_members_are_chosen(agent, capacity, remember):
    memories = _four(remember)
    for n, memory in enumerate(memories):
        _age(memory, 100 - n)
    _read(memories[0], 5, reads=40)  # the oldest, but used a lot lately
    propose_compactions()
    chosen = {member["memory_id"] for member in _compaction().fields["members"]}
    assert chosen == {str(memories[1].id), str(memories[2].id)}


def test_a_compaction_writes_summary_lineage_evidence_union_and_one_receipt(agent, api, capacity, remember):
    memories = _four(remember, "zqcompactcadence")
    propose_compactions()
    proposal = _compaction()
    members = [Memory.objects.get(pk=m["memory_id"]) for m in proposal.fields["members"]]
    receipt = apply_released(proposal)
    assert receipt.outcome == "applied"

    successor = Memory.objects.get(pk=proposal.target_id)
    assert (successor.type, successor.scope, successor.subject_id, successor.state) == (
        "preference",
        "user",
        "pm-alice",
        "active",
    )
    assert successor.statement.startswith("2 earlier preference memories about user:pm-alice: ")
    assert "second line" not in successor.statement  # the first line of each source only
    lineage = MemoryLineage.objects.filter(successor=successor)
    assert {(row.source_id, row.source_revision) for row in lineage} == {(m.id, m.revision) for m in members}
    sources_evidence = set(
        MemoryEvidence.objects.filter(memory__in=members, memory_revision=1).values_list(
            "evidence_revision_id", flat=True
        )
    )
    assert len(sources_evidence) == 2
    assert set(successor.evidence_links.values_list("evidence_revision_id", flat=True)) == sources_evidence

    for member in members:  # moved, never deleted
        member.refresh_from_db()
        assert (member.state, member.revision) == ("dormant", 2)
    untouched = [m for m in memories if m not in members]
    assert all(Memory.objects.get(pk=m.pk).state == "active" for m in untouched)
    assert Memory.objects.filter(state="active", subject_id="pm-alice").count() == CAPACITY

    # One receipt, listing every member with the revision it left.
    assert Receipt.objects.filter(proposal=proposal).count() == 1
    listed = receipt.effects["compaction"]["members"]
    assert {(m["memory_id"], m["revision"], m["after_revision"]) for m in listed} == {
        (str(m.id), 1, 2) for m in members
    }
    assert all(m["before_memory_hash"] and m["after_memory_hash"] for m in listed)

    got = api.get(f"/api/v1/memories/{successor.id}/")
    assert got.status_code == 200
    assert {(d["memory_id"], d["revision"]) for d in got.json()["memory"]["derived_from"]} == {
        (str(m.id), 1) for m in members
    }
    # The receipts still account for every row: the members' dormant revisions included.
    assert memory_problems(agent.tenant.id) == []
    call_command("verify_receipts")


def test_the_summary_is_searchable_and_sources_are_restorable(agent, api, capacity, remember):
    _four(remember, "zqcompactsearch")
    propose_compactions()
    proposal = _compaction()
    apply_released(proposal)
    successor = str(proposal.target_id)
    assert successor in _search(api, "zqcompactsearch")
    member = Memory.objects.get(pk=proposal.fields["members"][0]["memory_id"])
    assert str(member.id) not in _search(api, "zqcompactsearch")  # dormant: out of default recall

    body = {"action": "restore", "memory_id": str(member.id), "base_revision": member.revision, "reason": "x"}
    response = api.post("/api/v1/proposals/", body, format="json", HTTP_IDEMPOTENCY_KEY="wake")
    assert response.status_code in (200, 201, 202), response.content
    restore = Proposal.objects.get(pk=response.json()["id"])
    approve(make_person("waker", agent.tenant), restore)
    assert apply_released(restore).outcome == "applied"
    member.refresh_from_db()
    assert member.state == "active"
    assert memory_problems(agent.tenant.id) == []


def test_the_fence_follows_lineage(agent, capacity, remember):
    _four(remember)
    propose_compactions()
    proposal = _compaction()
    apply_released(proposal)
    successor = Memory.objects.with_fence().get(pk=proposal.target_id)
    assert not successor.fenced
    source = Memory.objects.get(pk=proposal.fields["members"][1]["memory_id"])
    revision = EvidenceRevision.objects.get(memory_links__memory=source, memory_links__memory_revision=1)
    invalidate_evidence_revision(revision=revision, reason="look-ahead bug")
    assert Memory.objects.with_fence().get(pk=successor.pk).fenced


def test_a_member_that_moved_makes_the_whole_compaction_a_zero_write(agent, capacity, remember):
    _four(remember)
    propose_compactions()
    proposal = _compaction()
    moved = Memory.objects.get(pk=proposal.fields["members"][0]["memory_id"])
    other = Memory.objects.get(pk=proposal.fields["members"][1]["memory_id"])
    update = submit(
        agent.agent,
        {
            "action": "update",
            "memory_id": str(moved.id),
            "base_revision": 1,
            "changes": {"content": {"statement": "changed meanwhile"}},
            "evidence": [make_evidence(agent.agent).binding()],
            "policy_context": {
                "acting_for_subject": {"kind": "user", "id": "pm-alice"},
                "consent_basis": "explicit",
            },
        },
    )
    for person in [make_person(f"r{n}", agent.tenant) for n in range(update.required_approvals)]:
        approve(person, update)
    assert apply_released(update).outcome == "applied"
    memories_before = Memory.objects.count()

    receipt = apply_released(proposal)
    assert receipt.outcome == "stale"
    assert "members changed" in receipt.reason and str(moved.id) in receipt.reason
    assert not Memory.objects.filter(pk=proposal.target_id).exists()
    assert Memory.objects.count() == memories_before
    assert not MemoryLineage.objects.exists()
    other.refresh_from_db()
    assert (other.state, other.revision) == ("active", 1)  # nothing moved
    listed = {m["memory_id"] for m in receipt.effects["compaction"]["members"]}
    assert listed == {str(moved.id), str(other.id)}
    assert memory_problems(agent.tenant.id) == []


def test_purging_a_source_removes_its_lineage_and_re_proposes_the_summary(agent, capacity, remember):
    _four(remember, "zqpurgesource")
    propose_compactions()
    proposal = _compaction()
    apply_released(proposal)
    successor = Memory.objects.get(pk=proposal.target_id)
    gone = Memory.objects.get(pk=proposal.fields["members"][0]["memory_id"])
    kept = Memory.objects.get(pk=proposal.fields["members"][1]["memory_id"])
    gone_line = gone.statement.splitlines()[0]
    assert gone_line in successor.statement

    people = [make_person(f"p{n}", agent.tenant) for n in range(2)]
    for verb in ("delete", "purge"):
        gone.refresh_from_db()
        step = submit(
            agent.agent,
            {"action": verb, "memory_id": str(gone.id), "base_revision": gone.revision, "reason": "erase"},
        )
        for person in people[: step.required_approvals]:
            approve(person, step)
        receipt = apply_released(step)
        assert receipt.outcome == "applied", receipt.reason
    assert receipt.effects["purged"]["memory_core.MemoryLineage"] == 1
    assert list(MemoryLineage.objects.filter(successor=successor).values_list("source_id", flat=True)) == [
        kept.id
    ]
    resummary = Proposal.objects.get(action="update", target_id=successor.id)
    assert receipt.effects["resummarised"] == [
        {"memory_id": str(successor.id), "proposal_id": str(resummary.id)}
    ]
    assert (resummary.submitted_by.is_system, resummary.matched_rule) == (True, "auto-system-resummary")
    assert apply_released(resummary).outcome == "applied"
    successor.refresh_from_db()
    assert gone_line not in successor.statement
    assert successor.statement.startswith("1 earlier preference memories")
    assert kept.statement.splitlines()[0] in successor.statement
    assert memory_problems(agent.tenant.id) == []


# --- attackers ---------------------------------------------------------------


def _plan(memories, **overrides):
    return {
        "action": "compact",
        "compaction": {
            "subject": {"kind": "user", "id": "pm-alice"},
            "scope": "user",
            "type": "preference",
            "members": [{"memory_id": str(m.id), "revision": m.revision} for m in memories],
            "content": {"statement": "hidden away"},
            **overrides,
        },
        "reason": "mine",
    }


def test_an_agent_cannot_propose_compact_over_http(api, remember):
    memories = [remember("a"), remember("b")]
    response = api.post("/api/v1/proposals/", _plan(memories), format="json", HTTP_IDEMPOTENCY_KEY="sneak")
    assert (response.status_code, response.json()["code"]) == (400, "validation_error")
    assert not Proposal.objects.filter(action="compact").exists()


def test_an_agent_that_reaches_the_service_is_denied_by_policy(agent, remember):
    memories = [remember("a"), remember("b")]
    proposal = submit(agent.agent, _plan(memories))
    assert (proposal.status, proposal.matched_rule) == (Proposal.Status.DENIED, "deny-agent-compaction")
    assert all(Memory.objects.get(pk=m.pk).state == "active" for m in memories)


def test_another_tenants_system_agent_cannot_compact_my_memories(other_agent, remember):
    memories = [remember("a"), remember("b")]
    with pytest.raises(CompactionInvalid):
        submit(system_agent(tenant_id=other_agent.tenant.id), _plan(memories))
    assert not Proposal.objects.filter(action="compact").exists()


def test_a_plan_with_a_stale_revision_or_a_foreign_subject_is_refused(agent, remember):
    memories = [remember("a"), remember("b")]
    system = system_agent(tenant_id=agent.tenant.id)
    lying = _plan(memories)
    lying["compaction"]["members"][0]["revision"] = 7
    with pytest.raises(Exception, match="changed since"):
        submit(system, lying)
    with pytest.raises(CompactionInvalid):
        submit(system, _plan(memories, subject={"kind": "user", "id": "someone-else"}))
    with pytest.raises(CompactionInvalid):
        submit(system, _plan(memories[:1]))  # one member is no compaction
    assert not Proposal.objects.filter(action="compact").exists()


def test_the_evidence_is_the_members_not_the_claim(agent, remember):
    memories = [remember("a"), remember("b")]
    payload = _plan(memories)
    payload["evidence"] = [make_evidence(agent.agent).binding()]  # a claim: ignored
    proposal = submit(system_agent(tenant_id=agent.tenant.id), payload)
    cited = {(b["evidence_id"], b["revision"]) for b in proposal.evidence}
    bound = {
        (str(link.evidence_revision.source_id), link.evidence_revision.revision)
        for link in MemoryEvidence.objects.filter(memory__in=memories).select_related("evidence_revision")
    }
    assert cited == bound


def test_the_group_query_is_one_query(agent, capacity, remember, django_assert_num_queries):
    _four(remember)
    with django_assert_num_queries(1):
        groups = over_capacity_groups(
            tenant_id=agent.tenant.id, memory_type="preference", capacity=CAPACITY, limit=10
        )
    assert [(g["subject_id"], g["scope"], g["active"]) for g in groups] == [("pm-alice", "user", 4)]


def test_the_mgp_profile_auto_applies_compaction_too(settings, capacity, remember):
    _four(remember)
    settings.CUSTODIAN_POLICY_FILE = Path(settings.BASE_DIR) / "mgp" / "profile" / "rules.yaml"
    assert propose_compactions() == 1
    proposal = _compaction()
    assert proposal.matched_rule == "auto-system-compaction"
    assert proposal.policy_version == load_rule_set(settings.CUSTODIAN_POLICY_FILE).version


def test_the_summariser_is_pluggable(settings, capacity, remember):
    settings.CUSTODIAN_SUMMARISER = "tests.maintenance.test_compaction.ShoutingSummariser"
    _four(remember)
    propose_compactions()
    assert _compaction().fields["memory"]["content"] == {"statement": "2 NOTES"}
    assert _compaction().fields["summariser"] == "shouting"


class ShoutingSummariser:
    name = "shouting"

    def summarise(self, *, memory_type, subject, scope, contents):
        return {"statement": f"{len(contents)} NOTES"}


def test_uuid_of_successor_is_new(capacity, remember):
    memories = _four(remember)
    propose_compactions()
    assert _compaction().target_id not in {m.id for m in memories}
    assert isinstance(_compaction().target_id, uuid.UUID)


def test_admin_pages_show_a_compaction(client, agent, capacity, remember):
    from django.urls import reverse

    from tests.admin.test_memory_timeline import _staff_client, _timeline

    _four(remember, "zqadmincompact")
    propose_compactions()
    proposal = _compaction()
    receipt = apply_released(proposal)
    _staff_client(client, "auditor", agent.tenant)
    page = client.get(reverse("admin:executor_receipt_change", args=[receipt.pk]))
    assert page.status_code == 200 and str(proposal.target_id) in page.content.decode()
    assert "zqadmincompact" in _timeline(client, proposal.target_id)
    # A member's timeline shows the compaction that made it dormant, with its own revisions.
    member = _timeline(client, proposal.fields["members"][0]["memory_id"])
    assert f"#{receipt.seq}</a>" in member and "<strong>compact</strong>" in member
    assert "1 → 2" in member
    assert client.get(reverse("admin:proposals_proposal_change", args=[proposal.pk])).status_code == 200
    client.force_login(make_person("reader", agent.tenant))
    html = client.get(f"/review/proposals/{proposal.pk}/").content.decode()
    assert "Summarise 2 preference memories about user:pm-alice" in html


def test_a_large_excess_is_compacted_in_bounded_steps(monkeypatch, capacity, remember):
    import maintenance.compaction as sweep

    monkeypatch.setattr(sweep, "MAX_MEMBERS", 2)
    for n in range(5):  # 5 active, capacity 3: three would go, at most two per compaction
        remember(f"note {n}")
    assert propose_compactions() == 1
    assert len(_compaction().fields["members"]) == 2


def test_a_summary_is_as_sensitive_as_its_most_sensitive_member(agent, capacity, remember):
    secret = remember("confidential note", sensitivity="confidential")  # the oldest: chosen on a tie
    for n in range(3):
        remember(f"plain note {n}")
    propose_compactions()
    proposal = _compaction()
    assert str(secret.id) in {m["memory_id"] for m in proposal.fields["members"]}
    assert proposal.fields["memory"]["sensitivity"] == "confidential"
    assert apply_released(proposal).outcome == "applied"
    assert Memory.objects.get(pk=proposal.target_id).sensitivity == "confidential"


def test_the_audit_catches_a_member_revision_changed_behind_the_receipt(agent, capacity, remember):
    _four(remember)
    propose_compactions()
    proposal = _compaction()
    apply_released(proposal)
    member = proposal.fields["members"][0]["memory_id"]
    assert memory_problems(agent.tenant.id) == []
    Memory.objects.filter(pk=member).update(state_reason="tampered")
    Memory.history.filter(id=member, revision=2).update(state_reason="tampered")
    problems = memory_problems(agent.tenant.id)
    assert any(member in problem and "differs from receipt" in problem for problem in problems), problems


def test_the_template_summary_is_deterministic_and_bounded():
    from memory_core.summaries import MAX_STATEMENT, TemplateSummariser

    contents = [{"statement": f"{n} " + "x" * 500 + "\nsecond line"} for n in range(40)]
    subject = {"kind": "user", "id": "pm-alice"}
    summary = TemplateSummariser().summarise(
        memory_type="preference", subject=subject, scope="user", contents=contents
    )
    again = TemplateSummariser().summarise(
        memory_type="preference", subject=subject, scope="user", contents=contents
    )
    assert summary == again and set(summary) == {"statement"}
    statement = summary["statement"]
    assert len(statement) <= MAX_STATEMENT and "second line" not in statement
    assert statement.startswith("40 earlier preference memories about user:pm-alice: 0 xxx")
    assert statement.endswith("more)")  # the lines that did not fit are counted, not cut mid-way


def test_purging_the_summary_keeps_its_sources_and_their_accounting(agent, client, capacity, remember):
    _four(remember, "zqpurgesummary")
    propose_compactions()
    proposal = _compaction()
    apply_released(proposal)
    successor = Memory.objects.get(pk=proposal.target_id)
    people = [make_person(f"p{n}", agent.tenant) for n in range(2)]
    for verb in ("delete", "purge"):
        successor.refresh_from_db()
        step = submit(
            agent.agent,
            {
                "action": verb,
                "memory_id": str(successor.id),
                "base_revision": successor.revision,
                "reason": "x",
            },
        )
        for person in people[: step.required_approvals]:
            approve(person, step)
        receipt = apply_released(step)
        assert receipt.outcome == "applied", receipt.reason
    assert receipt.effects["purged"]["memory_core.MemoryLineage"] == 2
    assert not MemoryLineage.objects.exists()
    members = [
        m["memory_id"] for m in Receipt.objects.get(proposal=proposal).effects["compaction"]["members"]
    ]
    assert Memory.objects.filter(pk__in=members, state="dormant").count() == 2  # the sources stay
    proposal.refresh_from_db()
    assert "zqpurgesummary" not in str(proposal.fields)  # the summary's proposal is scrubbed with it
    assert memory_problems(agent.tenant.id) == []
    client.force_login(make_person("reader", agent.tenant))
    assert client.get(f"/review/proposals/{proposal.pk}/").status_code == 200


def _erase(agent, memory, people):
    """Delete then purge ``memory`` (proposals, approvals, executor); return the purge receipt."""
    for verb in ("delete", "purge"):
        memory.refresh_from_db()
        step = submit(
            agent.agent,
            {
                "action": verb,
                "memory_id": str(memory.id),
                "base_revision": memory.revision,
                "reason": "erase",
            },
        )
        for person in people[: step.required_approvals]:
            approve(person, step)
        receipt = apply_released(step)
        assert receipt.outcome == "applied", receipt.reason
    return receipt


def test_when_every_source_is_purged_the_summary_is_proposed_for_expiry(agent, capacity, remember):
    _four(remember)
    propose_compactions()
    proposal = _compaction()
    apply_released(proposal)
    people = [make_person(f"p{n}", agent.tenant) for n in range(2)]
    first, second = (Memory.objects.get(pk=m["memory_id"]) for m in proposal.fields["members"])
    _erase(agent, first, people)
    assert apply_released(Proposal.objects.get(action="update")).outcome == "applied"
    receipt = _erase(agent, second, people)
    expiry = Proposal.objects.get(action="expire", target_id=proposal.target_id)
    assert receipt.effects["resummarised"] == [
        {"memory_id": str(proposal.target_id), "proposal_id": str(expiry.id)}
    ]
    assert expiry.submitted_by.is_system and "no source remains" in expiry.fields["reason"]
    assert expiry.status == Proposal.Status.PENDING_REVIEW  # a person decides whether the summary goes
    assert not MemoryLineage.objects.exists()
    assert memory_problems(agent.tenant.id) == []


def test_a_group_that_cannot_be_compacted_takes_no_place(agent, capacity, remember):
    remember("kept for good")
    for n in range(3):  # over capacity, but only one memory may be a member (the others expire)
        remember(f"short-lived note {n}", ttl_seconds=86400)
    groups = over_capacity_groups(tenant_id=agent.tenant.id, memory_type="preference", capacity=3, limit=1)
    assert groups == []
    assert propose_compactions() == 0
