"""Proposals as a person reads them (the admin, receipts, timelines): through ``memory_core.people``.

A proposal is read in the view a person gets for the memory it asserts, the
strictest of that and of its target memory today, as the proposal's admin
page shows its fields. The same view gives the one-line excerpt of the lists
and decides which proposals a search may match on their content.
"""

from collections.abc import Iterable
from dataclasses import dataclass

from django.db.models import (
    BooleanField,
    Case,
    CharField,
    F,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    TextField,
    Value,
    When,
)
from django.db.models.fields.json import KT
from django.db.models.functions import Coalesce, NullIf

from memory_core.models import Memory
from memory_core.people import (
    MEMORY_FACT_COLUMNS,
    SENSITIVITIES,
    Excerpt,
    person_rule,
    proposed_memory,
    rows_read_in_full,
    statement_excerpt,
)
from memory_core.read_policy import ReadRule
from proposals.models import Proposal
from proposals.presenters import target_memories, tenant_target

LIST_EXCERPT_CHARS = 80


@dataclass(frozen=True)
class ProposalAsRead:
    """What a list row shows of a proposal: whom its memory is about and its statement, as read."""

    subject_kind: str
    subject_id: str
    excerpt: Excerpt


def proposed_for_person(proposal: Proposal, current: Memory | None) -> tuple[Memory, ReadRule]:
    """Return the memory ``proposal`` asserts and the strictest rule a person gets for it and ``current``."""
    proposed = proposed_memory(
        fields=proposal.fields or {}, facts=proposal.policy_facts or {}, current=current
    )
    return proposed, person_rule(proposed, current)


def change_summary(proposal: Proposal, current: Memory | None, chars: int) -> Excerpt:
    """Excerpt the statement the change asserted (or the memory's, for lifecycle actions)."""
    if proposal.action == Proposal.Action.PURGE:
        return Excerpt("memory purged")
    if proposal.action == Proposal.Action.ERASE:
        return Excerpt("subject erased: memories purged")
    proposed, rule = proposed_for_person(proposal, current)
    if not (proposal.fields or {}).get("content") and current is not None:
        proposed.content = current.content
    return statement_excerpt(proposed, rule, chars)


def attach_person_views(proposals: Iterable[Proposal]) -> list[Proposal]:
    """Give each proposal of a page its ``as_read`` (:class:`ProposalAsRead`): one query for the page."""
    proposals = list(proposals)
    current = target_memories(proposals)
    for proposal in proposals:
        target = tenant_target(proposal, current)
        proposed, _ = proposed_for_person(proposal, target)
        summary = change_summary(proposal, target, LIST_EXCERPT_CHARS)
        proposal.as_read = ProposalAsRead(proposed.subject_kind, proposed.subject_id, summary)  # type: ignore[attr-defined]
    return proposals


def with_facts_as_read(proposals: QuerySet[Proposal]) -> QuerySet[Proposal]:
    """Alias on ``proposals`` the read-policy facts of what each asserts and of its target today.

    The SQL twin of :func:`proposed_for_person`: the frozen fields and policy
    facts first, the target for what they leave out, the most sensitive of the
    frozen sensitivities, restricted when none is known. Also aliases
    ``read_in_full`` (a person reads both raw) and ``subject_id_as_read``.
    """
    target = Memory.objects.with_fence().filter(pk=OuterRef("target_id"), tenant_id=OuterRef("tenant_id"))
    now = {
        f"target_{name}": Subquery(target.values(name)[:1])
        for name in ("sensitivity", "scope", "type", "state", "fenced", "subject_id")
    }
    frozen = {
        f"{origin}_{name}": NullIf(KT(f"{origin}__{name}"), Value(""), output_field=TextField())
        for origin in ("fields", "policy_facts")
        for name in ("sensitivity", "scope", "type")
    }
    proposals = proposals.alias(**now, **frozen)
    proposals = proposals.alias(
        proposed_sensitivity=Case(
            *(
                When(Q(fields_sensitivity=name) | Q(policy_facts_sensitivity=name), then=Value(name))
                for name in reversed(SENSITIVITIES)
            ),
            When(target_sensitivity__isnull=False, then=F("target_sensitivity")),
            default=Value(Memory.Sensitivity.RESTRICTED),
            output_field=CharField(),
        ),
        proposed_scope=Coalesce(
            "fields_scope", "policy_facts_scope", "target_scope", Value(""), output_field=TextField()
        ),
        proposed_type=Coalesce(
            "fields_type", "policy_facts_type", "target_type", Value(""), output_field=TextField()
        ),
        proposed_state=Coalesce("target_state", Value(Memory.State.ACTIVE), output_field=TextField()),
        proposed_fenced=Coalesce("target_fenced", Value(False), output_field=BooleanField()),
    )
    proposed = rows_read_in_full({**MEMORY_FACT_COLUMNS, **_columns("proposed")})
    today = Q(target_state__isnull=True) | rows_read_in_full({**MEMORY_FACT_COLUMNS, **_columns("target")})
    return proposals.alias(
        read_in_full=Case(
            When(proposed & today, then=Value(True)), default=Value(False), output_field=BooleanField()
        ),
        subject_id_as_read=Coalesce(
            NullIf(KT("fields__subject__id"), Value(""), output_field=TextField()),
            "target_subject_id",
            Value(""),
            output_field=TextField(),
        ),
    )


def _columns(prefix: str) -> dict[str, str]:
    return {name: f"{prefix}_{name}" for name in ("sensitivity", "scope", "type", "state", "fenced")}
