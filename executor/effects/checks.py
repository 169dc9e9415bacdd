"""The re-checks several kinds share; each returns a refusal, or None when the check holds."""

from evidence.models import EvidenceRevision
from executor.effects.base import ApplyContext, Check, Outcome
from memory_core.lifecycle import InvalidTransition, next_state
from memory_core.models import Memory


def check_evidence(ctx: ApplyContext) -> Check | None:
    """Every cited evidence revision must still be valid."""
    invalid = next((rev for rev in ctx.evidence if rev.status != EvidenceRevision.Status.VALID), None)
    if invalid is None:
        return None
    return Check(
        Outcome.EVIDENCE_INVALID, f"evidence {invalid.source_id}@{invalid.revision} is {invalid.status}"
    )


def check_new(ctx: ApplyContext) -> Check | None:
    """A kind that creates its target: nothing may hold the target's id yet."""
    return Check(Outcome.STALE, "memory already exists") if ctx.memory is not None else None


def check_at_base(ctx: ApplyContext) -> Check | None:
    """Compare-and-swap: the memory must be exactly where the proposal left it."""
    memory, proposal = ctx.memory, ctx.proposal
    if memory is None:
        return Check(Outcome.STALE, "memory no longer exists")
    if memory.revision != proposal.base_revision:
        return Check(Outcome.STALE, f"base revision {proposal.base_revision}, memory is at {memory.revision}")
    return None


def check_active_at_base(ctx: ApplyContext) -> Check | None:
    """The memory must be where the proposal left it, and still active."""
    refusal = check_at_base(ctx)
    if refusal is None and not target(ctx).is_active:
        return Check(Outcome.STALE, f"memory is {target(ctx).state}")
    return refusal


def check_transition(ctx: ApplyContext) -> Check | None:
    """The memory must be where the proposal left it, and the verb allowed from its state now."""
    refusal = check_at_base(ctx)
    if refusal is not None:
        return refusal
    try:
        next_state(target(ctx).state, ctx.proposal.action)
    except InvalidTransition as invalid:
        return Check(Outcome.STALE, invalid.detail)
    return None


def check_content(ctx: ApplyContext) -> Check | None:
    """The content must still match the registered schema of its type (the registration may have changed)."""
    proposal, memory, active_registration = ctx.proposal, ctx.memory, ctx.registration.active
    result = proposal.fields if memory is None else {**memory.snapshot(), **proposal.fields}
    problems = active_registration.content_problems(result["type"], result["content"])
    if not problems:
        return None
    where = ", ".join(f"{problem['path']} ({problem['kind']})" for problem in problems[:5])
    return Check(
        Outcome.CONTENT_INVALID,
        f"content no longer matches registration v{active_registration.version} "
        f"(submitted under v{proposal.registration_version}): {where}",
    )


def check_dedupe_key(ctx: ApplyContext) -> Check | None:
    """One active memory per dedupe key: the database's partial unique index backs this up."""
    if not ctx.key_holders:
        return None
    held_by = ", ".join(str(pk) for pk in ctx.key_holders)
    return Check(
        Outcome.DEDUPE_CONFLICT,
        f"dedupe key is held by active memory {held_by}: propose an update of it, or retire it first",
    )


def stale(reason: str | None) -> Check | None:
    """A kind's own refusal (a sentence, or None) as a ``stale`` outcome."""
    return Check(Outcome.STALE, reason) if reason else None


def target(ctx: ApplyContext) -> Memory:
    """The target memory of a kind whose ``check_at_base`` already refused a missing one."""
    assert ctx.memory is not None
    return ctx.memory
