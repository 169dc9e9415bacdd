"""Bounded Dreaming: frozen windows, a checked plan, governed proposals, zero writes when stale."""

import pytest
from django.core.management import call_command

from evidence.models import EvidenceRevision
from executor.models import Receipt
from maintenance.dreaming.checks import PlanRefused, check_plan
from maintenance.dreaming.planner import Action
from maintenance.dreaming.runs import dreaming_pass, run_window, submit_plan
from maintenance.dreaming.windows import WindowRefused, freeze_window
from memory_core.models import Memory, MemoryLink
from proposals.models import DreamingRun, Proposal
from proposals.services import submit_proposal
from provenance.services import invalidate_evidence_revision
from tests.factories import apply_released, approve, owner_context, submit


def _decide(proposal, reviewers):
    proposal.refresh_from_db()
    for person in reviewers[: proposal.required_approvals]:
        approve(person, proposal)
    return apply_released(proposal)


def _proposals(run):
    return list(Proposal.objects.filter(dreaming_run=run).order_by("created_at", "id"))


def _status(run):
    run.refresh_from_db()
    return run.status_from([p.status for p in _proposals(run)])


def _update(agent, memory, statement, reviewers):
    memory.refresh_from_db()
    proposal = submit(
        agent.agent,
        {
            "action": "update",
            "memory_id": str(memory.pk),
            "base_revision": memory.revision,
            "changes": {"content": {"statement": statement}},
            "policy_context": owner_context(),
        },
    )
    assert _decide(proposal, reviewers).outcome == "applied"


class Hostile:
    """A planner that oversteps: the server must refuse its whole plan."""

    name, version = "hostile", "1"

    def __init__(self, actions):
        self.actions = actions

    def plan(self, window):
        return self.actions(window)


# Windows -----------------------------------------------------------------------------------


def test_a_window_of_one_or_of_nine_is_refused(agent, remember):
    memories = [remember(f"Alice prefers note {n}") for n in range(9)]
    with pytest.raises(WindowRefused):
        freeze_window(tenant_id=agent.tenant.pk, trigger="schedule", memory_ids=[memories[0].pk])
    with pytest.raises(WindowRefused):
        freeze_window(tenant_id=agent.tenant.pk, trigger="schedule", memory_ids=[m.pk for m in memories])
    frozen = freeze_window(
        tenant_id=agent.tenant.pk, trigger="schedule", memory_ids=[m.pk for m in memories[:8]]
    )
    assert len(frozen.window.members) == 8


def test_a_window_never_spans_scopes_subjects_or_tenants(agent, other_agent, remember):
    user = remember("Alice prefers weekly summaries")
    session = remember("Alice prefers weekly summaries", scope="session")
    foreign = remember("Alice prefers weekly summaries", handle=other_agent)
    with pytest.raises(WindowRefused):
        freeze_window(tenant_id=agent.tenant.pk, trigger="near_duplicate", memory_ids=[user.pk, session.pk])
    with pytest.raises(WindowRefused):  # another tenant's memory reads as missing
        freeze_window(tenant_id=agent.tenant.pk, trigger="near_duplicate", memory_ids=[user.pk, foreign.pk])
    # The pass itself groups by tenant, subject, scope and type: three singletons, no window.
    assert dreaming_pass().windows == 0


# The default path: proposal_only ----------------------------------------------------------


def test_exact_duplicates_become_a_reviewed_source_preserving_merge(agent, remember, dream_reviewers):
    survivor = remember("Alice prefers weekly summaries on Mondays.")
    duplicate = remember("alice prefers weekly summaries on mondays")
    result = dreaming_pass()
    assert (result.windows, result.runs, result.proposals) == (1, 1, 2)
    run = DreamingRun.objects.get()
    assert (run.trigger, run.mode, run.planner, run.budget) == ("near_duplicate", "proposal_only", "rules", 8)
    assert {m["memory_id"]: m["revision"] for m in run.members} == {str(survivor.pk): 1, str(duplicate.pk): 1}
    assert all(m["evidence"] for m in run.members)
    link, dormant = _proposals(run)
    assert (link.action, dormant.action) == ("link", "dormant")
    assert {p.matched_rule for p in (link, dormant)} == {"review-dreaming-proposal-only"}
    assert link.submitted_by.is_system and dormant.submitted_by.is_system
    assert _status(run) == "planned"
    assert _decide(dormant, dream_reviewers).outcome == "applied"
    assert _status(run) == "partially_applied"  # never reported complete while the link waits
    assert _decide(link, dream_reviewers).outcome == "applied"
    assert _status(run) == "applied"
    survivor.refresh_from_db()
    duplicate.refresh_from_db()
    assert (survivor.state, duplicate.state) == ("active", "dormant")  # kept, restorable
    lineage = MemoryLink.objects.get()
    assert (lineage.source_id, lineage.relation, lineage.target_id) == (
        survivor.pk,
        "supersedes",
        duplicate.pk,
    )
    assert lineage.evidence["from"] and lineage.evidence["to"]
    receipts = Receipt.objects.filter(proposal__dreaming_run=run)
    assert sorted(r.outcome for r in receipts) == ["applied", "applied"]
    assert dreaming_pass().windows == 0  # the duplicate is dormant: nothing left to consolidate


def test_a_second_pass_leaves_a_window_under_review_alone(agent, remember):
    remember("Alice prefers weekly summaries")
    remember("Alice prefers weekly summaries!")
    assert dreaming_pass().runs == 1
    assert dreaming_pass().windows == 0
    assert DreamingRun.objects.count() == 1


# Modes and risk ------------------------------------------------------------------------------


def test_auto_mode_applies_a_merge_in_either_order(agent, remember, dreaming_mode):
    dreaming_mode("auto")
    survivor = remember("Alice prefers weekly summaries")
    duplicate = remember("Alice prefers weekly summaries.")
    dreaming_pass()
    run = DreamingRun.objects.get()
    link, dormant = _proposals(run)
    assert {link.matched_rule, dormant.matched_rule} == {"auto-dreaming"}
    # The duplicate goes dormant first; the lineage link still lands (the run moved it, nothing else).
    assert apply_released(dormant).outcome == "applied"
    assert apply_released(link).outcome == "applied"
    assert _status(run) == "applied"
    assert MemoryLink.objects.filter(source=survivor, target=duplicate, relation="supersedes").exists()


def test_a_contradiction_on_a_structured_key_is_an_update_that_always_goes_to_review(
    agent, remember, dreaming_mode
):
    dreaming_mode("auto")
    said = "Alice wants summaries weekly"
    older = remember(
        said, content={"statement": said, "preference_key": "cadence", "preference_value": "weekly"}
    )
    said = "Alice wants summaries daily now"
    remember(said, content={"statement": said, "preference_key": "cadence", "preference_value": "daily"})
    dreaming_pass()
    run = DreamingRun.objects.get()
    assert run.trigger == "dedupe_collision"
    (update,) = _proposals(run)
    assert (update.action, update.target_id, update.status) == ("update", older.pk, "pending_review")
    assert update.matched_rule == "review-dreaming-high-risk" and update.risk_level == "high"
    assert set(update.fields) == {"valid_to"}
    assert update.evidence  # it cites the evidence of both members it rests on


def test_merging_profiles_always_needs_an_owner_decision(agent, remember, dreaming_mode):
    dreaming_mode("auto", "profile")
    remember("Alice is the head of research", type="profile")
    remember("Alice is the head of research.", type="profile")
    dreaming_pass()
    run = DreamingRun.objects.get()
    assert run.mode == "auto"
    assert {p.matched_rule for p in _proposals(run)} == {"review-dreaming-high-risk"}
    assert {p.status for p in _proposals(run)} == {"pending_review"}


def test_restricted_members_are_reviewed_by_two(agent, remember, dreaming_mode):
    dreaming_mode("auto")
    remember("Alice prefers weekly summaries", sensitivity="restricted")
    remember("Alice prefers weekly summaries", sensitivity="restricted")
    dreaming_pass()
    proposals = _proposals(DreamingRun.objects.get())
    assert {p.status for p in proposals} == {"pending_review"}
    assert {p.matched_rule for p in proposals} <= {"review-restricted", "review-dreaming-high-risk"}


def test_an_agent_cannot_attach_a_proposal_to_a_run(agent, remember):
    remember("Alice prefers weekly summaries")
    remember("Alice prefers weekly summaries")
    dreaming_pass()
    run = DreamingRun.objects.get()
    memory = Memory.objects.filter(state="active").first()
    from proposals.errors import DreamingRunForeign

    with pytest.raises(DreamingRunForeign):
        submit_proposal(
            agent=agent.agent,
            idempotency_key="claims-a-run",
            request_hash="0" * 64,
            payload={
                "action": "update",
                "memory_id": str(memory.pk),
                "base_revision": memory.revision,
                "changes": {"content": {"statement": "x"}},
                "policy_context": owner_context(),
                "dreaming_run": run,
            },
        )
    assert not Proposal.objects.filter(idempotency_key="claims-a-run").exists()
    # Over HTTP the field is not even read: the proposal is an ordinary one.
    response = agent.client.post(
        "/api/v1/proposals/",
        {
            "action": "update",
            "memory_id": str(memory.pk),
            "base_revision": memory.revision,
            "changes": {"content": {"statement": "Alice prefers daily summaries"}},
            "policy_context": owner_context(),
            "dreaming_run": str(run.pk),
        },
        format="json",
        HTTP_IDEMPOTENCY_KEY="lying-run",
    )
    assert response.status_code in (201, 400)
    assert not Proposal.objects.filter(dreaming_run=run, submitted_by=agent.agent).exists()


def test_moving_an_action_out_of_its_run_behind_the_service_is_refused(agent, remember, dreaming_mode):
    """The seal binds the run: a web role that detaches an action (to dodge the window check) is refused."""
    dreaming_mode("auto")
    remember("Alice prefers weekly summaries")
    duplicate = remember("Alice prefers weekly summaries.")
    dreaming_pass()
    run = DreamingRun.objects.get()
    _, dormant = _proposals(run)
    Proposal.objects.filter(pk=dormant.pk).update(dreaming_run=None)
    dormant.refresh_from_db()
    assert apply_released(dormant).outcome == "unauthorised_release"
    duplicate.refresh_from_db()
    assert duplicate.state == "active"


def test_an_ordinary_proposal_attached_to_a_run_behind_the_service_is_refused(agent, remember):
    remember("Alice prefers weekly summaries")
    remember("Alice prefers weekly summaries")
    dreaming_pass()
    run = DreamingRun.objects.get()
    memory = Memory.objects.filter(state="active").first()
    proposal = submit(
        agent.agent,
        {
            "action": "expire",
            "memory_id": str(memory.pk),
            "base_revision": memory.revision,
            "reason": "outdated",
            "policy_context": owner_context(),
        },
    )
    Proposal.objects.filter(pk=proposal.pk).update(dreaming_run=run)
    proposal.refresh_from_db()
    assert apply_released(proposal).outcome == "unauthorised_release"


# The server checks the plan -------------------------------------------------------------------


def _frozen_pair(agent, remember):
    a, b = remember("Alice prefers weekly summaries"), remember("Alice prefers weekly summaries")
    return a, b, freeze_window(tenant_id=agent.tenant.pk, trigger="near_duplicate", memory_ids=[a.pk, b.pk])


def test_a_plan_over_budget_is_refused_whole(agent, remember):
    a, b, frozen = _frozen_pair(agent, remember)
    over = Hostile(lambda w: [Action("link", (str(a.pk),), str(a.pk), str(b.pk), "supersedes")] * 9)
    run = run_window(frozen, chosen=over)
    assert (run.closed, Proposal.objects.filter(dreaming_run=run).count()) == ("refused", 0)
    assert "at most 8 actions" in run.closed_reason and _status(run) == "refused"


@pytest.mark.parametrize(
    "make",
    [
        lambda a, b, outside: Action("delete", (a,), a),  # not one of the five kinds
        lambda a, b, outside: Action("purge", (a,), a),
        lambda a, b, outside: Action("archive", (outside,), outside),  # a member outside the window
        lambda a, b, outside: Action("link", (a,), a, outside, "supports"),  # cross-scope end
        lambda a, b, outside: Action("merge", (a, b), a, a),  # a memory into itself
        lambda a, b, outside: Action("update", (a,), a, fields={"state": "deleted"}),
        lambda a, b, outside: Action("create", (a,), fields={"scope": "org", "content": {"statement": "x"}}),
    ],
)
def test_a_hostile_plan_is_refused_and_proposes_nothing(agent, remember, make):
    a, b, frozen = _frozen_pair(agent, remember)
    outside = remember("Alice prefers weekly summaries", scope="session")
    action = make(str(a.pk), str(b.pk), str(outside.pk))
    with pytest.raises(PlanRefused):
        check_plan(frozen, [action])
    run = run_window(frozen, chosen=Hostile(lambda w: [action]))
    assert run.closed == "refused"
    assert not Proposal.objects.filter(dreaming_run=run).exists()
    assert not Proposal.objects.filter(submitted_by__is_system=True, action__in=["link", "dormant"]).exists()


def test_a_member_is_changed_by_one_action_at_most(agent, remember):
    a, b, frozen = _frozen_pair(agent, remember)
    twice = [
        Action("archive", (str(b.pk),), str(b.pk)),
        Action("merge", (str(a.pk), str(b.pk)), str(a.pk), str(b.pk)),
    ]
    with pytest.raises(PlanRefused):
        check_plan(frozen, twice)


# Staleness: zero writes ---------------------------------------------------------------------


def test_a_member_changed_between_freezing_and_submitting_makes_the_run_stale(
    agent, remember, dream_reviewers
):
    _a, b, frozen = _frozen_pair(agent, remember)
    _update(agent, b, "Alice prefers daily summaries", dream_reviewers)
    from maintenance.dreaming.planner import RulePlanner

    planner = RulePlanner()
    run = submit_plan(frozen, planner, planner.plan(frozen.window))
    assert (run.closed, _status(run)) == ("stale", "stale")
    assert str(b.pk) in run.closed_reason
    assert not Proposal.objects.filter(dreaming_run=run).exists()


def test_a_member_changed_before_the_executor_applies_makes_every_action_stale(
    agent, remember, dream_reviewers
):
    survivor = remember("Alice prefers weekly summaries")
    duplicate = remember("Alice prefers weekly summaries")
    dreaming_pass()
    run = DreamingRun.objects.get()
    link, dormant = _proposals(run)
    _update(agent, survivor, "Alice prefers weekly summaries on Fridays", dream_reviewers)  # not by the run
    receipt = _decide(dormant, dream_reviewers)
    assert (receipt.outcome, receipt.proposal.dreaming_run_id) == ("stale", run.pk)
    assert "changed by another proposal" in receipt.reason, receipt.reason
    assert _status(run) == "stale"
    link.refresh_from_db()  # Custodian withdrew the action still waiting: no reviewer spends time on it
    assert (link.status, link.outcome) == ("withdrawn", "stale")
    duplicate.refresh_from_db()
    assert duplicate.state == "active" and duplicate.revision == 1
    assert not MemoryLink.objects.exists()
    assert sorted(p.status for p in _proposals(run)) == ["not_applied", "withdrawn"]


def test_a_released_action_of_a_stale_run_never_applies(agent, remember, dreaming_mode, dream_reviewers):
    dreaming_mode("auto")
    survivor = remember("Alice prefers weekly summaries")
    duplicate = remember("Alice prefers weekly summaries")
    dreaming_pass()
    run = DreamingRun.objects.get()
    link, dormant = _proposals(run)
    assert {link.status, dormant.status} == {"released"}
    _update(agent, duplicate, "Alice prefers weekly summaries, in PDF", dream_reviewers)
    assert apply_released(link).outcome == "stale"
    assert apply_released(dormant).outcome == "stale"  # the run is closed: it never applies
    assert _status(run) == "stale" and not MemoryLink.objects.exists()
    survivor.refresh_from_db()
    duplicate.refresh_from_db()
    assert (survivor.state, duplicate.state) == ("active", "active")


# Fences follow lineage ----------------------------------------------------------------------


def test_fences_follow_lineage(agent, api, remember, dreaming_mode, dream_reviewers):
    """Before the merge applies, an invalidated member's evidence makes the run stale (zero writes);
    after, the merged-away duplicate is fenced like any memory resting on it, the survivor keeps its
    own evidence, and recall following the lineage link shows the duplicate metadata-only."""
    dreaming_mode("auto")
    survivor = remember("zqlineage Alice prefers weekly summaries")
    duplicate = remember("zqlineage Alice prefers weekly summaries")
    dreaming_pass()
    run = DreamingRun.objects.get()
    link, dormant = _proposals(run)
    assert apply_released(dormant).outcome == "applied"
    assert apply_released(link).outcome == "applied"
    evidence = EvidenceRevision.objects.get(memory_links__memory=duplicate, memory_links__memory_revision=1)
    invalidate_evidence_revision(revision=evidence, reason="look-ahead bug")
    duplicate_now = Memory.objects.with_fence().get(pk=duplicate.pk)
    survivor_now = Memory.objects.with_fence().get(pk=survivor.pk)
    assert duplicate_now.is_fenced and not survivor_now.is_fenced
    body = {"query": "zqlineage", "context": {"links": 2}, "filters": {"states": ["active", "dormant"]}}
    response = api.post("/api/v1/recall/search", body, format="json")
    assert response.status_code == 200, response.content
    hits = {hit["memory"]["memory_id"]: hit for hit in response.json()["results"]}
    assert hits[str(survivor.pk)]["return_mode"] == "raw"  # the survivor is still served whole
    (lineage,) = hits[str(survivor.pk)]["links"]
    assert (lineage["relation"], lineage["direction"]) == ("supersedes", "out")
    assert lineage["memory"]["memory_id"] == str(duplicate.pk)
    assert (lineage["memory"]["lifecycle_state"], lineage["memory"]["fenced"]) == ("dormant", True)
    assert lineage["return_mode"] == "metadata_only" and "content" not in lineage["memory"]


def test_an_invalidated_member_evidence_before_apply_leaves_the_whole_window_unwritten(
    agent, remember, dream_reviewers
):
    remember("Alice prefers weekly summaries")
    duplicate = remember("Alice prefers weekly summaries")
    dreaming_pass()
    run = DreamingRun.objects.get()
    link, dormant = _proposals(run)
    evidence = EvidenceRevision.objects.get(memory_links__memory=duplicate)
    invalidate_evidence_revision(revision=evidence, reason="wrong file")
    receipt = _decide(dormant, dream_reviewers)
    assert (receipt.outcome, "invalidated" in receipt.reason) == ("stale", True), receipt.reason
    assert _status(run) == "stale"
    link.refresh_from_db()
    assert link.status == "withdrawn"
    duplicate.refresh_from_db()
    assert duplicate.state == "active" and not MemoryLink.objects.exists()


# Entry points ------------------------------------------------------------------------------


def test_the_management_command_runs_a_pass(agent, remember, capsys):
    remember("Alice prefers weekly summaries")
    remember("Alice prefers weekly summaries")
    call_command("dreaming_pass", "--tenant", agent.tenant.name, "--limit", "5")
    assert "1 windows, 1 runs, 2 proposals" in capsys.readouterr().out


def test_runs_are_listed_to_the_tenants_agents_only(agent, other_agent, remember):
    remember("Alice prefers weekly summaries")
    remember("Alice prefers weekly summaries")
    dreaming_pass()
    mine = agent.client.get("/api/v1/dreaming/runs/")
    assert mine.status_code == 200
    (row,) = mine.json()["results"]
    assert row["status"] == "planned" and len(row["proposals"]) == 2 and row["mode"] == "proposal_only"
    assert other_agent.client.get("/api/v1/dreaming/runs/").json()["results"] == []


def test_passes_resume_where_the_last_stopped_so_nothing_starves(agent, remember, monkeypatch):
    for _ in range(4):  # one subject's group of four duplicates, read two at a time
        remember("Alice prefers weekly summaries")
    bob = {"kind": "user", "id": "pm-bob"}
    remember("Bob prefers terse answers", subject=bob)
    remember("Bob prefers terse answers", subject=bob)
    monkeypatch.setattr("maintenance.dreaming.windows.MAX_GROUP", 2)
    assert dreaming_pass(limit=1).runs == 1  # Alice's first part
    assert dreaming_pass(limit=1).runs == 1  # Alice's second part, not the first again
    assert dreaming_pass(limit=1).runs == 1  # then Bob
    runs = DreamingRun.objects.order_by("created_at")
    assert [run.subject_id for run in runs] == ["pm-alice", "pm-alice", "pm-bob"]
    assert len({m["memory_id"] for run in runs for m in run.members}) == 6


def test_receipts_are_listed_by_run_for_the_tenant_only(agent, other_agent, remember, dreaming_mode):
    dreaming_mode("auto")
    remember("Alice prefers weekly summaries")
    remember("Alice prefers weekly summaries")
    dreaming_pass()
    run = DreamingRun.objects.get()
    for proposal in _proposals(run):
        apply_released(proposal)
    mine = agent.client.get("/api/v1/receipts/", {"dreaming_run": str(run.pk)}).json()["results"]
    assert sorted(r["proposal_id"] for r in mine) == sorted(str(p.pk) for p in _proposals(run))
    theirs = other_agent.client.get("/api/v1/receipts/", {"dreaming_run": str(run.pk)}).json()["results"]
    assert theirs == []


def test_create_and_archive_plans_stay_in_their_window_and_apply(agent, remember, dreaming_mode):
    dreaming_mode("auto")
    a, b, frozen = _frozen_pair(agent, remember)
    summary = {
        "content": {"statement": "Alice prefers weekly summaries (consolidated)"},
        "sensitivity": "internal",
    }
    benign = Hostile(
        lambda w: [
            Action("create", (str(a.pk), str(b.pk)), fields=summary, reason="one statement for two"),
            Action("archive", (str(b.pk),), str(b.pk), reason="said by the new one"),
        ]
    )
    run = run_window(frozen, chosen=benign)
    create, archive = _proposals(run)
    assert (create.action, archive.action) == ("create", "dormant")
    assert create.fields["subject"] == {"kind": "user", "id": "pm-alice"} and create.fields["scope"] == "user"
    assert {e["evidence_id"] for e in create.evidence} == {
        str(e)
        for e in EvidenceRevision.objects.filter(memory_links__memory__in=[a, b]).values_list(
            "source_id", flat=True
        )
    }
    assert apply_released(create).outcome == "applied"
    assert apply_released(archive).outcome == "applied"
    assert _status(run) == "applied"
    assert Memory.objects.get(pk=create.target_id).state == "active"
    b.refresh_from_db()
    assert b.state == "dormant"


def test_a_planner_that_fails_refuses_its_window_only(agent, remember):
    _a, _b, frozen = _frozen_pair(agent, remember)

    def crash(window):
        raise RuntimeError("model unavailable")

    run = run_window(frozen, chosen=Hostile(crash))
    assert run.closed == "refused" and "model unavailable" in run.closed_reason
    assert not Proposal.objects.filter(dreaming_run=run).exists()


def test_members_naming_one_entity_are_linked_about_it_once(agent, api, remember, dream_reviewers):
    """Co-occurring canonical entities become memory -> entity links; a later pass adds none."""
    from tests.observations.test_entities import _entity, _run
    from tests.observations.test_entities import _post as _entity_post
    from tests.registrations.publishing import publish_changed_default

    publish_changed_default(
        agent,
        lambda document: document["types"]["preference"].update(
            dreaming={"mode": "auto"}, links={"relations": ["about"]}
        ),
    )
    acme = _entity(api, dream_reviewers, "organisation", "ACME Capital")
    old_name = _entity(api, dream_reviewers, "organisation", "ACME Old")
    first = remember("Alice prefers ACME Capital research notes")
    second = remember("Alice reads the ACME Old memos on Fridays")  # an alias after the merge below
    merge = _entity_post(api, "entity_merge", entity_id=old_name.pk, into_entity_id=acme.pk).json()
    assert _run(merge["id"], dream_reviewers).outcome == "applied"
    result = dreaming_pass()
    assert result.runs == 1
    links = _proposals(DreamingRun.objects.get())
    assert [(p.action, p.fields["to_entity_id"]) for p in links] == [("link", str(acme.pk))] * 2
    assert {p.matched_rule for p in links} == {"auto-dreaming"}
    for link in links:
        assert apply_released(link).outcome == "applied"
    assert set(MemoryLink.objects.values_list("source_id", "target_entity_id")) == {
        (first.pk, acme.pk),
        (second.pk, acme.pk),
    }
    assert dreaming_pass().windows == 0
