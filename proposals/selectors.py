"""Reads of proposals, always within the caller's tenant."""

import functools
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, cast

from django.db import connections, router
from django.db.models import Field, Model, Prefetch, QuerySet
from django.utils import timezone

from core.hydrate import Selected, selected
from evidence.models import EvidenceRevision
from evidence.selectors import revisions_query, statuses_of
from memory_core.models import Memory
from memory_core.selectors import active_memories_with_dedupe_key
from proposals.errors import ProposalNotFound
from proposals.models import DreamingRun, Proposal
from tenancy.models import Agent, Delegation, Tenant
from tenancy.services import acts_for_itself


def proposal_list(*, tenant: Tenant) -> QuerySet[Proposal]:
    """Return the tenant's proposals (the API narrows them with ``proposals.filters``)."""
    return Proposal.objects.filter(tenant=tenant)


def proposal_detail(*, tenant: Tenant, proposal_id: uuid.UUID) -> Proposal:
    """Return one proposal; another tenant's id is not found."""
    proposal = Proposal.objects.filter(tenant=tenant, pk=proposal_id).first()
    if proposal is None:
        raise ProposalNotFound()
    return proposal


def proposal_by_idempotency_key(*, agent: Agent, idempotency_key: str) -> Proposal | None:
    """Return the proposal ``agent`` submitted under this key, or None (a unique constraint allows one)."""
    return Proposal.objects.filter(
        tenant_id=agent.tenant_id, submitted_by=agent, idempotency_key=idempotency_key
    ).first()


@dataclass(frozen=True)
class DedupeConflicts:
    """What else claims a proposal's dedupe key: the executor keeps one active memory per key."""

    memories: list[Memory]
    proposals: list[Proposal]

    def __bool__(self) -> bool:
        return bool(self.memories or self.proposals)


def dedupe_conflicts(proposal: Proposal, *, limit: int = 10) -> DedupeConflicts:
    """Return the active memories and open proposals that share ``proposal``'s dedupe key.

    Two indexed queries (``memory_dedupe_idx``, ``proposal_dedupe_idx``); the
    proposal's own target memory (and other proposals on it) is not a dedupe conflict.
    """
    key = proposal.claimed_dedupe_key
    if not key:
        return DedupeConflicts([], [])
    memories = active_memories_with_dedupe_key(
        tenant_id=proposal.tenant_id, dedupe_key=key, exclude_id=proposal.target_id
    ).order_by("created_at", "pk")
    proposals = (
        Proposal.objects.filter(
            tenant_id=proposal.tenant_id, dedupe_key=key, status__in=Proposal.OPEN_STATUSES
        )
        .filter(action__in=Proposal.CLAIMS_DEDUPE_KEY)
        .exclude(target_id=proposal.target_id)
        .order_by("created_at", "pk")
    )
    return DedupeConflicts(list(memories[:limit]), list(proposals[:limit]))


def dreaming_runs(*, tenants) -> QuerySet[DreamingRun]:
    """Return the Dreaming runs of ``tenants`` (queryset or ids), newest first, with their proposals."""
    return (
        DreamingRun.objects.filter(tenant__in=tenants)
        .prefetch_related(Prefetch("proposals", queryset=Proposal.objects.order_by("created_at", "id")))
        .order_by("-created_at", "-id")
    )


def dreaming_run_status(run: DreamingRun) -> str:
    """The run's status as its (prefetched) proposals say."""
    return run.status_from([proposal.status for proposal in run.proposals.all()])


class PolicyReads:
    """What the policy reads to freeze an agent's proposals: its delegations and the cited revisions.

    One proposal's reads are one query (the cited revisions, each carrying whether the agent's
    delegation for the named subject is live) instead of two; a batch's are two for all its
    items (``load`` with every item's subjects and bindings first). Answers are kept for the
    lifetime of the object, so a batch is frozen as of one moment, as it is under one
    registration. Anything not loaded is read when asked for, as before.
    """

    def __init__(self, agent: Agent):
        self.agent = agent
        self._granted: dict[tuple[Any, Any], bool] = {}
        self._revisions: dict[tuple[str, int], EvidenceRevision | None] = {}
        self._holders: dict[str, list[tuple[Any, Any]]] = {}

    def load_key_holders(self, keys: Iterable[str]) -> None:
        """Read the active memories holding any of ``keys`` not read yet (pk and content), in one query."""
        wanted = sorted({key for key in keys if key and key not in self._holders})
        if not wanted:
            return
        self._holders.update({key: [] for key in wanted})
        rows = Memory.objects.filter(
            tenant_id=self.agent.tenant_id, dedupe_key__in=wanted, state=Memory.State.ACTIVE
        ).values_list("dedupe_key", "pk", "content")
        for key, pk, content in rows:
            self._holders[key].append((pk, content))

    def key_holder_contents(self, key: str, *, exclude_id: Any) -> list[Any]:
        """Answer as ``active_memories_with_dedupe_key`` does (their contents), from what was loaded."""
        self.load_key_holders([key])
        return [content for pk, content in self._holders[key] if pk != exclude_id]

    def load(self, *, subjects: Iterable[Any], bindings: Iterable[Mapping[str, Any]]) -> None:
        """Read every delegation and revision not read yet: one query when one subject is new."""
        wanted = {
            _subject_key(subject): subject
            for subject in subjects
            if subject and not acts_for_itself(self.agent, subject)
        }
        wanted = {key: subject for key, subject in wanted.items() if key not in self._granted}
        pairs = {
            (str(b["evidence_id"]), b["revision"])
            for b in bindings
            if (str(b["evidence_id"]), b["revision"]) not in self._revisions
        }
        if not pairs:
            self._read_delegations(wanted)
            return
        self._revisions.update(dict.fromkeys(pairs))
        if len(wanted) == 1:
            (key,) = wanted
            rows, self._granted[key] = _revisions_and_grant(self.agent, pairs, key)
        else:
            rows = list(revisions_query(self.agent.tenant_id, pairs))
            self._read_delegations(wanted)
        self._revisions.update({(str(row.source_id), row.revision): row for row in rows})

    def may_act_for(self, agent: Agent, subject: dict[str, Any]) -> bool:
        """Answer as ``tenancy.services.may_act_for`` does, from what was loaded (its own agent only)."""
        if agent.pk != self.agent.pk:
            raise ValueError("PolicyReads answers for its own agent only")
        if acts_for_itself(agent, subject):
            return True
        self.load(subjects=[subject], bindings=[])
        return self._granted[_subject_key(subject)]

    def binding_statuses(self, bindings: list[dict]) -> list[tuple[dict, str, EvidenceRevision | None]]:
        """Answer as ``evidence.selectors.binding_statuses`` does, from what was loaded."""
        self.load(subjects=[], bindings=bindings)
        found = {pair: row for pair, row in self._revisions.items() if row is not None}
        return statuses_of(bindings, found)

    def _read_delegations(self, wanted: dict[tuple[Any, Any], dict]) -> None:
        """The live grants among ``wanted``: read by subject ids, matched on (kind, id) here.

        One ``OR`` condition per subject cost a batch of distinct subjects more CPU to compile
        than everything else it does; an agent holds few grants per subject id.
        """
        if not wanted:
            return
        live = set(
            Delegation.objects.live()
            .filter(agent=self.agent, subject_id__in={subject_id for _, subject_id in wanted})
            .values_list("subject_kind", "subject_id")
        )
        for key in wanted:
            self._granted[key] = key in live


def _subject_key(subject: dict[str, Any]) -> tuple[Any, Any]:
    return subject.get("kind"), subject.get("id")


def _revisions_and_grant(
    agent: Agent, pairs: set[tuple[str, int]], subject: tuple[Any, Any]
) -> tuple[list[EvidenceRevision], bool]:
    """One statement: the tenant's revisions for ``pairs`` and whether ``agent``'s grant is live.

    What ``revisions_query`` and ``Delegation.objects.live()`` ask, written as SQL because
    building the two ORM queries (or one with an ``Exists`` annotation) cost a submit more CPU
    than the round trip it saves. The grant is a one-row subquery the revisions are LEFT
    JOINed to, so it is answered even when no revision matches. Content stays deferred: the
    policy needs a revision's status and hash, and the link its id.
    """
    connection = connections[router.db_for_read(EvidenceRevision)]
    sql, revision = _revisions_and_grant_sql(len(pairs))
    uuid_value = _uuid_param(connection)
    kind, subject_id = subject
    params: list[Any] = [
        uuid_value(agent.pk),
        None if kind is None else str(kind),
        None if subject_id is None else str(subject_id),
        connection.ops.adapt_datetimefield_value(timezone.now()),
        uuid_value(agent.tenant_id),
    ]
    for evidence_id, number in sorted(pairs):
        params += [uuid_value(evidence_id), number]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    revisions = [cast(EvidenceRevision, revision.instance(row)) for row in rows if row[0] is not None]
    return revisions, bool(rows[0][-1])


@functools.lru_cache(maxsize=128)
def _revisions_and_grant_sql(pair_count: int) -> tuple[str, Selected]:
    names = ["id", "tenant", "source", "revision", "content_hash", "status", "admission_findings"]
    revision = selected(EvidenceRevision, "r", names=names)
    name = connections[router.db_for_read(EvidenceRevision)].ops.quote_name
    column = {
        field: _column(Delegation, field, name)
        for field in ("agent", "subject_kind", "subject_id", "revoked_at", "expires_at")
    }
    matches = " OR ".join(
        f"(r.{_column(EvidenceRevision, 'source', name)} = %s"
        f" AND r.{_column(EvidenceRevision, 'revision', name)} = %s)"
        for _ in range(pair_count)
    )
    # Only quoted identifiers from the models' metadata are interpolated; every value is a parameter.
    sql = (
        f"SELECT {revision.sql}, g.granted AS acting_for_granted FROM (SELECT EXISTS ("  # noqa: S608
        f"SELECT 1 FROM {name(Delegation._meta.db_table)} d WHERE d.{column['agent']} = %s"
        f" AND d.{column['subject_kind']} = %s AND d.{column['subject_id']} = %s"
        f" AND d.{column['revoked_at']} IS NULL"
        f" AND (d.{column['expires_at']} IS NULL OR d.{column['expires_at']} > %s)) AS granted) g"
        f" LEFT JOIN {name(EvidenceRevision._meta.db_table)} r"
        f" ON r.{_column(EvidenceRevision, 'tenant', name)} = %s AND ({matches})"
    )
    return sql, revision


def _column(model: type[Model], field: str, quote: Callable[[str], str]) -> str:
    return quote(cast(Field, model._meta.get_field(field)).column)


def _uuid_param(connection):
    field = EvidenceRevision._meta.pk
    return lambda value: field.get_db_prep_value(
        value if isinstance(value, uuid.UUID) else uuid.UUID(str(value)), connection
    )
