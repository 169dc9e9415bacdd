"""The dormancy sweep: propose ``dormant`` for memories nobody has used for a while.

A memory qualifies when its ACT-R activation (``memory_core.activation``, with
the decay and importance its tenant registered for its type) was already below
the type's ``dormancy.threshold`` ``dormancy.days`` ago and nothing has used
it since. With no use in the window activation only falls, so "below then,
untouched since" is exactly "stayed below for the whole window".

Uses are the daily explicit reads (``MemoryReads``) plus one use on the day of
the memory's last applied revision (``updated_at``): a memory never read counts
from its creation or last change, so a fresh memory is never dormant at once.

Set-based and bounded: per tenant and type, one indexed SQL query finds
active memories not changed and not read since the cutoff (in key order from
where the last run stopped, at most ``scan`` rows), one query reads their older
use counts, and the few that
qualify are proposed by the tenant's system agent, auto-applied under
``auto-system-dormancy`` with a receipt.
"""

from collections.abc import Iterable
from datetime import datetime, timedelta

from django.core.cache import cache
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from core.canonical import digest
from memory_core import activation
from memory_core.models import Memory, MemoryReads
from proposals.models import Proposal
from proposals.services.submission import submit_proposal
from registrations.selectors import active_registration
from tenancy.models import Tenant
from tenancy.services import system_agent


def propose_dormancy(
    *, limit: int = 500, scan: int = 2000, now: datetime | None = None, tenant_id=None
) -> int:
    """Propose ``dormant`` for at most ``limit`` memories (of one tenant, if named); return how many.

    Each tenant and type resumes where the last run stopped reading (a keyset
    cursor in the shared cache, wrapping at the end), so memories that stay
    above the threshold, however many, never hide the ones behind them.
    """
    now = now or timezone.now()
    proposed = 0
    tenants = Tenant.objects.order_by("id")
    if tenant_id is not None:
        tenants = tenants.filter(id=tenant_id)
    for tenant_id in tenants.values_list("id", flat=True):
        registration = active_registration(tenant_id=tenant_id)
        for memory_type, entry in sorted(registration.document["types"].items()):
            if proposed >= limit:
                return proposed
            parameters, key = entry["activation"], f"dormancy:cursor:{tenant_id}:{memory_type}"
            found, last = _scan(tenant_id, memory_type, parameters, now, scan, after=cache.get(key))
            chosen = found[: limit - proposed]
            if len(chosen) < len(found):
                last = (chosen[-1].updated_at, chosen[-1].id) if chosen else cache.get(key)
            cache.set(key, last, timeout=None)
            for memory in chosen:
                proposed += _propose(memory, parameters)
    return proposed


def dormant_candidates(
    *, tenant_id, memory_type: str, parameters: dict, now: datetime, scan: int
) -> list[Memory]:
    """Active memories of one type whose activation stayed below the threshold for the whole window."""
    return _scan(tenant_id, memory_type, parameters, now, scan, after=None)[0]


def _scan(
    tenant_id, memory_type: str, parameters: dict, now: datetime, scan: int, *, after: tuple | None
) -> tuple[list[Memory], tuple | None]:
    """Read at most ``scan`` untouched memories after the ``after`` key; return those that qualify
    and the key to resume from (``None`` once the end was reached: the next run starts over)."""
    cutoff = now - timedelta(days=parameters["dormancy"]["days"])
    rows = Memory.objects.filter(
        tenant_id=tenant_id, type=memory_type, state=Memory.State.ACTIVE, updated_at__lt=cutoff
    ).exclude(
        Exists(
            MemoryReads.objects.filter(tenant_id=tenant_id, memory_id=OuterRef("id"), day__gte=cutoff.date())
        )
    )
    if after is not None:
        rows = rows.filter(Q(updated_at__gt=after[0]) | Q(updated_at=after[0], id__gt=after[1]))
    untouched = list(
        rows.order_by("updated_at", "id").only("id", "tenant_id", "type", "revision", "updated_at")[:scan]
    )
    last = (untouched[-1].updated_at, untouched[-1].id) if len(untouched) == scan else None
    uses = _uses_before(tenant_id, [memory.id for memory in untouched], cutoff)
    found = [
        memory
        for memory in untouched
        if level_at(
            [(memory.updated_at.date(), 1), *uses.get(memory.id, [])], at=cutoff, parameters=parameters
        )
        < parameters["dormancy"]["threshold"]
    ]
    return found, last


def level_at(uses: Iterable, *, at: datetime, parameters: dict) -> float:
    """Activation at ``at`` with the registered decay, lifted by the registered importance."""
    return activation.base_level(uses, at=at, decay=parameters["decay"]) + parameters["importance"]


def _uses_before(tenant_id, ids: list, cutoff: datetime) -> dict:
    uses: dict = {}
    if not ids:
        return uses
    rows = MemoryReads.objects.filter(tenant_id=tenant_id, memory_id__in=ids, day__lt=cutoff.date())
    for memory_id, day, reads in rows.values_list("memory_id", "day", "reads"):
        uses.setdefault(memory_id, []).append((day, reads))
    return uses


def _propose(memory: Memory, parameters: dict) -> int:
    """Submit one dormancy proposal as the tenant's system agent; 0 if this revision was proposed already."""
    threshold, days = parameters["dormancy"]["threshold"], parameters["dormancy"]["days"]
    submission = submit_proposal(
        agent=system_agent(tenant_id=memory.tenant_id),
        idempotency_key=f"dormancy:{memory.id}:{memory.revision}",
        payload={
            "action": Proposal.Action.DORMANT,
            "memory_id": memory.id,
            "base_revision": memory.revision,
            "reason": f"dormancy: activation below {threshold} for {days} days",
        },
        request_hash=digest({"memory_id": str(memory.id), "revision": memory.revision, "verb": "dormant"}),
    )
    return int(not submission.replayed)
