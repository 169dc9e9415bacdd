"""Maintenance: the dormancy and compaction sweeps over the recall tenant (time and peak Python memory).

The recall part's tenant is freshly seeded, so nothing in it is dormant
today; the sweep is evaluated as if it ran ``AHEAD_DAYS`` later, when every
never-read memory has fallen below its type's threshold. ``selection`` is the
read-only candidate query per registered type (bounded by ``SCAN``);
``proposals`` runs the sweep for real (each proposal is submitted in its own
durable transaction) on a small separate tenant, ``bench-maintenance``, so
the recall tenant is left as it was.

Compaction likewise: ``compaction.selection`` is, per type, the one aggregate
query for subject+scope groups over ``COMPACT_CAPACITY`` active memories plus
the frozen plan (members by activation, template summary) of at most
``COMPACT_GROUPS`` of them, read-only over the recall tenant;
``compaction.sweep`` publishes a registration capping every type at
``SMALL_CAPACITY`` on a small tenant ``bench-compaction`` (through review
and the executor) and runs the real sweep there, then applies what it proposed.
"""

import copy
import time
import tracemalloc
from datetime import timedelta

from django.utils import timezone

from bench.context import Context
from bench.seed import seed_applied_memories
from bench.textgen import TextGenerator
from bench.world import make_world
from maintenance.compaction import compaction_plan, over_capacity_groups, propose_compactions
from maintenance.dormancy import dormant_candidates, propose_dormancy
from maintenance.schema_evolution import request_publication, validate_candidate
from memory_core.models import Memory
from registrations.selectors import active_registration
from registrations.services import draft_registration

AHEAD_DAYS = 400
SCAN = 2000
COMPACT_CAPACITY = 10
COMPACT_GROUPS = 10
SMALL_CAPACITY = 2


def run(ctx: Context) -> dict:
    world = make_world("bench-recall")
    memories = Memory.objects.filter(tenant=world.tenant).count()
    if not memories:  # run without the recall part: seed its smallest size
        memories = ctx.scale.recall_sizes[0]
        seed_applied_memories(
            tenant=world.tenant,
            agent=world.agent,
            evidence=world.evidence,
            count=memories,
            text=TextGenerator(seed=7),
        )
    ahead = timezone.now() + timedelta(days=AHEAD_DAYS)
    registration = active_registration(tenant_id=world.tenant.id)
    selection = {}
    for memory_type, entry in sorted(registration.document["types"].items()):
        found, seconds, peak = _measured(
            lambda t=memory_type, e=entry: dormant_candidates(
                tenant_id=world.tenant.id, memory_type=t, parameters=e["activation"], now=ahead, scan=SCAN
            )
        )
        selection[memory_type] = {"candidates": len(found), "seconds": seconds, "peak_kib": peak}
    limit = max(ctx.scale.recall_queries, 20)
    small = make_world("bench-maintenance")
    waiting = Memory.objects.filter(tenant=small.tenant, state=Memory.State.ACTIVE).count()
    if waiting < limit:
        seed_applied_memories(
            tenant=small.tenant,
            agent=small.agent,
            evidence=small.evidence,
            count=limit - waiting,
            text=TextGenerator(seed=13),
        )
    proposed, seconds, peak = _measured(
        lambda: propose_dormancy(limit=limit, scan=SCAN, now=ahead, tenant_id=small.tenant.id)
    )
    compaction = _compaction(world, registration, ahead, limit)
    return {
        "memories": memories,
        "ahead_days": AHEAD_DAYS,
        "scan": SCAN,
        "compaction": compaction,
        "selection": selection,
        "proposals": {
            "tenant_memories": max(waiting, limit),
            "proposed": proposed,
            "seconds": seconds,
            "per_second": round(proposed / seconds, 1) if seconds else None,
            "peak_kib": peak,
        },
    }


def _measured(call):
    tracemalloc.start()
    started = time.perf_counter()
    try:
        value = call()
    finally:
        seconds = time.perf_counter() - started
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return value, round(seconds, 3), round(peak / 1024, 1)


def _compaction(world, registration, now, size: int) -> dict:
    """Time the compaction selection over the recall tenant, then a real sweep on a small tenant.

    The small tenant is ``bench-compaction``, seeded once (its compacted members stay dormant, so
    a ``--keep-database`` run finds nothing new over capacity rather than seeding it again).
    """
    selection = {}
    for memory_type, entry in sorted(registration.document["types"].items()):

        def select(t=memory_type, e=entry):
            groups = over_capacity_groups(
                tenant_id=world.tenant.id, memory_type=t, capacity=COMPACT_CAPACITY, limit=COMPACT_GROUPS
            )
            plans = [
                compaction_plan(
                    tenant_id=world.tenant.id,
                    memory_type=t,
                    group=group,
                    capacity=COMPACT_CAPACITY,
                    parameters=e["activation"],
                    now=now,
                    scan=SCAN,
                )
                for group in groups
            ]
            return groups, [plan for plan in plans if plan]

        (groups, plans), seconds, peak = _measured(select)
        selection[memory_type] = {
            "groups_over": len(groups),
            "plans": len(plans),
            "members": sum(len(plan["members"]) for plan in plans),
            "seconds": seconds,
            "peak_kib": peak,
        }
    small = make_world("bench-compaction")
    if not Memory.objects.filter(tenant=small.tenant).exists():
        seed_applied_memories(
            tenant=small.tenant,
            agent=small.agent,
            evidence=small.evidence,
            count=size,
            text=TextGenerator(seed=17),
        )
    _cap_every_type(small, SMALL_CAPACITY)
    proposed, seconds, peak = _measured(lambda: propose_compactions(limit=100, tenant_id=small.tenant.id))
    applied = _drain(small.tenant)
    return {
        "capacity": COMPACT_CAPACITY,
        "groups": COMPACT_GROUPS,
        "selection": selection,
        "sweep": {
            "tenant_memories": Memory.objects.filter(tenant=small.tenant).count(),
            "capacity": SMALL_CAPACITY,
            "proposed": proposed,
            "applied": applied,
            "seconds": seconds,
            "peak_kib": peak,
        },
    }


def _cap_every_type(world, capacity: int) -> None:
    """Publish (operator asks, another person approves, the executor applies) a capacity for every type."""
    from django.contrib.auth import get_user_model
    from guardian.shortcuts import assign_perm

    from executor.services import apply_entries
    from proposals.models import OutboxEntry
    from reviews.services import record_decision

    active = active_registration(tenant_id=world.tenant.id)
    if all(e["capacity"]["per_subject_scope"] == capacity for e in active.document["types"].values()):
        return
    document = copy.deepcopy(active.document)
    for entry in document["types"].values():
        entry["capacity"]["per_subject_scope"] = capacity
    people = []
    for role in ("operator", "publisher"):
        person, _ = get_user_model().objects.get_or_create(username=f"{world.tenant.name}-{role}")
        assign_perm("tenancy.publish_registration", person, world.tenant)
        assign_perm("tenancy.decide_proposal", person, world.tenant)
        people.append(person)
    candidate = draft_registration(tenant_id=world.tenant.id, document=document, created_by="bench")
    validate_candidate(candidate=candidate)
    proposal = request_publication(
        tenant=world.tenant, candidate_id=candidate.pk, requested_by=people[0], reason="bench capacity"
    )
    record_decision(
        actor=people[1],
        proposal_id=proposal.pk,
        decision="approve",
        reason="bench",
        represented_owner="",  # the proposal's own owner, or the reviewer
        action_digest=proposal.action_digest,
        channel="bench",
    )
    entries = OutboxEntry.objects.filter(proposal=proposal).values_list("id", flat=True)
    apply_entries(entry_ids=list(entries), worker={"host": "bench", "pid": 0, "task_id": "capacity"})


def _drain(tenant) -> int:
    """Apply the compactions the sweep released; return how many were applied."""
    from executor.services import apply_entries
    from proposals.models import OutboxEntry, Proposal

    entries = OutboxEntry.objects.filter(
        tenant=tenant, proposal__action="compact", status=OutboxEntry.Status.PENDING
    ).values_list("id", flat=True)
    apply_entries(entry_ids=list(entries), worker={"host": "bench", "pid": 0, "task_id": "compaction"})
    return Proposal.objects.filter(tenant=tenant, action="compact", status="applied").count()
