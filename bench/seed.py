"""Bulk seeding for benchmarks: COPY rows that the real models built, so the seeded world verifies.

Submitting and applying through the services manages a few hundred
memories a second; a benchmark needs a million. Here every row is still a
model instance with the values the real code would give it: the verdict
comes from the real policy engine (``freeze_and_classify`` once per kind of
proposal), memories come from the executor's own ``new_memory``, and the
four digests per memory are the models' own (the request body's
``digest``, ``compute_action_digest``, ``content_hash``, ``compute_hash``),
each computed once. Values they cover are plain strings, not TextChoices
members, so ``core.canonical`` takes its fast path. Only the writing
differs: batches of instances go to PostgreSQL with COPY, one transaction
per batch, on a second thread while the next batch is built; each batch
locks the receipt chain head and advances it in the same transaction. The
seeded world passes ``verify_receipts`` and ``executor.audit.memory_problems``.

Not written: proposal history rows (``proposals_historicalproposal``) and
agents' recall audit rows; nothing verifies or lists them.

Seeding the same tenant twice with generators of the same seed repeats
idempotency keys and fails on their unique constraint: use a fresh seed.
"""

import contextlib
import functools
import json
import operator
import os
import queue
import random
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import psycopg
from django.contrib.auth import get_user_model
from django.db import connection, models, transaction
from django.db.models.base import ModelState
from django.db.models.fields import AutoFieldMixin
from django.utils import timezone
from guardian.shortcuts import assign_perm
from psycopg import sql

from bench.textgen import FACTOR, PREFERENCE, TextGenerator, frozen_fields
from core.canonical import digest
from evidence.models import EvidenceRevision
from executor.models import OutboxEntry, Receipt, ReceiptChain
from memory_core.models import Memory, MemoryEvidence
from memory_core.mutations import new_memory
from proposals.models import Proposal, ProposalEvidence
from proposals.services.freezing import freeze_and_classify
from reviews.models import ReviewDecision
from reviews.selectors import DECIDE
from tenancy.models import Agent, Tenant
from tenancy.services import bind_policy_context

Progress = Callable[[int], None] | None
HistoricalMemory = Memory.history.model
HistoricalDecision = ReviewDecision.history.model
HISTORY = {Memory: HistoricalMemory, ReviewDecision: HistoricalDecision}  # model.history builds a manager
_NONE, _NOTHING = [], {}  # shared empty decision_ids and effects: encoded once per batch, never mutated
EXECUTOR = {"host": "bench-seed", "pid": os.getpid()}
# The models one applied memory writes, in foreign-key order.
APPLIED_MODELS = (
    Proposal,
    ProposalEvidence,
    ReviewDecision,
    HistoricalDecision,
    OutboxEntry,
    Memory,
    HistoricalMemory,
    MemoryEvidence,
    Receipt,
)


# --- rows from model instances --------------------------------------------------


@functools.cache
def _layout(model: type[models.Model]) -> tuple[frozenset[str], dict[str, Callable[[], Any]]]:
    fields = model._meta.concrete_fields
    return frozenset(f.attname for f in fields), {f.attname: f.get_default for f in fields}


def new(model: type[models.Model], **values: Any):
    """Return an instance of ``model`` with ``values`` and the fields' defaults for the rest.

    Filled in like ``Model.__init__`` fills it, without the per-field
    descriptor calls and init signals (a proposal costs 3 µs, not 30).
    """
    names, defaults = _layout(model)
    if not values.keys() <= names:
        raise TypeError(f"{model.__name__} has no fields {sorted(values.keys() - names)}")
    if len(values) < len(names):
        for name, default in defaults.items():
            if name not in values:
                values[name] = default()
    instance = model.__new__(model)
    instance._state = ModelState()
    instance.__dict__.update(values)
    return instance


@functools.cache
def _plan(model: type[models.Model]) -> tuple[str, tuple[str, ...], tuple[Callable, ...], tuple[int, ...]]:
    """Return the table, its columns (auto-increment keys left to the database), value getters and
    the positions of JSON columns."""
    fields = [f for f in model._meta.concrete_fields if not isinstance(f, AutoFieldMixin)]
    return (
        model._meta.db_table,
        tuple(f.column for f in fields),
        tuple(operator.attrgetter(f.attname) for f in fields),
        tuple(k for k, f in enumerate(fields) if isinstance(f, models.JSONField)),
    )


def _copy_statement(table: str, columns: Sequence[str]) -> sql.Composed:
    return sql.SQL("COPY {} ({}) FROM STDIN").format(
        sql.Identifier(table), sql.SQL(", ").join(map(sql.Identifier, columns))
    )


def _row(instance, getters, json_columns, memo: dict[int, tuple[Any, str]]) -> list:
    """Return the instance's column values; JSON as text, each JSON object shared by rows encoded once.

    ``memo`` maps ``id()`` of a JSON value to the value and its text; holding
    the value keeps its id from being reused by another object.
    """
    row = [get(instance) for get in getters]
    for k in json_columns:
        value = row[k]
        if value is not None:
            known = memo.get(id(value))
            if known is None:
                known = memo[id(value)] = (value, json.dumps(value))
            row[k] = known[1]
    return row


def copy_rows(model: type[models.Model], instances: Iterable[models.Model], *, cursor=None, memo=None) -> int:
    """Write ``instances`` to the model's table with COPY, in the caller's transaction; return the count.

    Columns are the model's concrete fields (auto-increment keys are left to
    the database); JSON fields are written as JSON text, as Django would.
    """
    table, columns, getters, json_columns = _plan(model)
    if cursor is None:
        connection.ensure_connection()
        with connection.connection.cursor() as cursor:
            return copy_rows(model, instances, cursor=cursor, memo=memo)
    memo = {} if memo is None else memo
    count = 0
    with cursor.copy(_copy_statement(table, columns)) as copy:
        for instance in instances:
            copy.write_row(_row(instance, getters, json_columns, memo))
            count += 1
    return count


# --- what the real engine says about each kind of proposal ----------------------


@dataclass(frozen=True)
class _Verdict:
    """The policy fields the real engine gave one proposal of a kind, copied onto the others."""

    values: dict[str, Any]
    review_window_hours: int | None
    hold_seconds: int

    @property
    def classification(self) -> str:
        return self.values["classification"]

    @property
    def required_approvals(self) -> int:
        return self.values["required_approvals"]

    def deadline(self, created_at: datetime) -> datetime | None:
        hours = self.review_window_hours
        return created_at + timedelta(hours=hours) if hours else None


_POLICY_FIELDS = (
    "classification",
    "matched_rule",
    "reason_codes",
    "policy_facts",
    "policy_version",
    "policy_fingerprint",
    "required_approvals",
    "gates",
    "risk_rank",
)


@dataclass(frozen=True)
class _Frozen:
    """One memory's create proposal before it gets ids and times: what the agent sent, and the verdict."""

    i: int
    memory: dict
    fields: dict
    context: dict
    bindings: list[dict]
    revisions: list[EvidenceRevision]
    verdict: _Verdict


@dataclass
class _World:
    """What every row of one seeding call shares: tenant, agent, evidence, verdicts, reviewers."""

    tenant: Tenant
    agent: Agent
    evidence: list[EvidenceRevision]
    text: TextGenerator
    reviewers: list = field(default_factory=list)
    verdicts: dict[tuple, _Verdict] = field(default_factory=dict)

    def __post_init__(self):
        if not self.evidence:
            raise ValueError("seeding needs at least one evidence revision")
        for revision in self.evidence:
            if revision.tenant_id != self.tenant.pk or revision.status != EvidenceRevision.Status.VALID:
                raise ValueError(f"evidence {revision.pk} is not a valid revision of tenant {self.tenant}")
        if self.agent.tenant_id != self.tenant.pk:
            raise ValueError("the agent belongs to another tenant")
        self.evidence = sorted(self.evidence, key=lambda r: (str(r.source_id), r.revision))
        self._bindings = [revision.binding() for revision in self.evidence]
        self._ids = random.Random(os.urandom(16))

    def new_id(self) -> uuid.UUID:
        """Return a random (version 4) UUID; ``uuid4()`` reads the OS per call, 4.5 times per memory."""
        return uuid.UUID(int=self._ids.getrandbits(128), version=4)

    def freeze(
        self, i: int, *, kind: str | None, risk_levels: Sequence[str], allowed: Sequence[str]
    ) -> _Frozen:
        """Return memory ``i``'s proposal as the agent sends it, with the real engine's verdict."""
        memory = self.text.memory_payload(i, kind=kind)
        fields = frozen_fields(memory)
        context = _context(i, memory, risk_levels)
        # One or two revisions; sorted by (evidence_id, revision) like freezing stores them.
        n = len(self.evidence)
        picks = sorted({i % n, (i * 7 + 3) % n} if i % 3 == 0 else {i % n})
        bindings = [self._bindings[k] for k in picks]
        verdict = self.verdict(memory, fields, context, bindings)
        if verdict.classification not in allowed:
            raise ValueError(f"the policy engine says {verdict.classification} for {fields['type']}")
        return _Frozen(i, memory, fields, context, bindings, [self.evidence[k] for k in picks], verdict)

    def verdict(self, memory: dict, fields: dict, context: dict, bindings: list[dict]) -> _Verdict:
        """Classify the first proposal of each kind with the real engine; reuse it for the rest.

        Every fact the engine reads is in the key or constant across seeded
        rows (evidence valid, target new, dedupe keys unique), and the probe
        checks the constant ones. The probe also validates the content.
        """
        key = (
            fields["type"],
            fields["scope"],
            fields["sensitivity"],
            fields["retention_policy"],
            context.get("risk_level"),
            context.get("consent_basis"),
            context.get("acting_for_subject") == fields["subject"],
        )
        if key not in self.verdicts:
            probe = Proposal(tenant=self.tenant, submitted_by=self.agent, action=Proposal.Action.CREATE)
            payload = {"action": "create", "memory": memory, "evidence": bindings, "policy_context": context}
            verdict, _ = freeze_and_classify(probe, self.agent, payload)
            facts = probe.policy_facts
            if (facts["evidence"], facts["target"], facts["dedupe"]) != ("valid", "new", "none"):
                raise ValueError(f"seeded proposals must cite valid evidence and be new and unique: {facts}")
            self.verdicts[key] = _Verdict(
                values={name: getattr(probe, name) for name in _POLICY_FIELDS},
                review_window_hours=verdict.rule.review_window_hours,
                hold_seconds=verdict.rule.hold_seconds,
            )
        return self.verdicts[key]

    def approvers(self, count: int) -> list:
        """Return ``count`` people allowed to decide in the tenant (bench reviewers, made on demand)."""
        while len(self.reviewers) < count:
            user = _bench_reviewer(len(self.reviewers) + 1)
            assign_perm(DECIDE, user, self.tenant)
            self.reviewers.append(user)
        return self.reviewers[:count]

    def proposal(
        self,
        frozen: _Frozen,
        *,
        status: str,
        created_at: datetime,
        updated_at: datetime,
        outcome: str = "",
    ) -> Proposal:
        """Build the proposal row ``submit_proposal`` would store for ``frozen`` (and the executor update)."""
        rationale = self.text.rationale(frozen.i)
        request = {
            "action": "create",
            "memory": frozen.memory,
            "evidence": frozen.bindings,
            "policy_context": frozen.context,
            "rationale": rationale,
        }
        fields = frozen.fields
        proposal = new(
            Proposal,
            id=self.new_id(),
            tenant_id=self.tenant.pk,
            submitted_by_id=self.agent.pk,
            action=Proposal.Action.CREATE.value,
            target_memory_id=self.new_id(),
            base_revision=0,
            fields=fields,
            evidence=frozen.bindings,
            policy_context=bind_policy_context(self.agent, frozen.context),
            rationale=rationale,
            version=1,
            dedupe_key=fields["dedupe_key"],
            memory_type=fields["type"],
            memory_scope=fields["scope"],
            idempotency_key=f"bench-{self.text.seed}-{frozen.i}",
            request_hash=digest(request),  # what the API hashes: the request body
            review_deadline=frozen.verdict.deadline(created_at),
            status=status,
            outcome=outcome,
            created_at=created_at,
            updated_at=updated_at,
            **frozen.verdict.values,
        )
        proposal.action_digest = proposal.compute_action_digest()
        return proposal

    def evidence_links(self, proposal: Proposal, frozen: _Frozen) -> list[ProposalEvidence]:
        """Return the proposal's evidence index rows, as ``_link_evidence`` writes them."""
        return [
            new(
                ProposalEvidence, tenant_id=self.tenant.pk, proposal_id=proposal.pk, evidence_revision_id=r.pk
            )
            for r in frozen.revisions
        ]


def _bench_reviewer(n: int):
    user, _ = get_user_model().objects.get_or_create(username=f"bench-reviewer-{n}")
    return user


def _context(i: int, memory: dict, risk_levels: Sequence[str]) -> dict:
    """Return the policy_context an agent would send with memory ``i``."""
    if memory["type"] == "preference":  # the user asked for it themselves
        return {
            "acting_for_subject": memory["subject"],
            "consent_basis": "explicit",
            "risk_level": "low",
            "channel": "chat",
        }
    context = {"risk_level": risk_levels[i % len(risk_levels)], "channel": "research"}
    if memory["subject"]["kind"] == "task":
        context["task_id"] = memory["subject"]["id"]
    return context


def _lock_chain(tenant_id) -> ReceiptChain:
    """Lock the tenant's chain head (creating it), as ``append_receipt`` does."""
    ReceiptChain.objects.bulk_create([ReceiptChain(tenant_id=tenant_id)], ignore_conflicts=True)
    return ReceiptChain.objects.select_for_update().get(tenant_id=tenant_id)


def _chain_receipts(receipts: list[Receipt], chain: ReceiptChain) -> None:
    """Give ``receipts`` their places after ``chain``'s head and their hashes; move the head."""
    for receipt in receipts:
        receipt.seq, receipt.prev_hash = chain.seq + 1, chain.head_hash
        receipt.hash = receipt.compute_hash()
        chain.seq, chain.head_hash = receipt.seq, receipt.hash


def _copy_all(rows: dict[type, list]) -> None:
    """COPY every model's instances, JSON shared between rows (evidence, verdicts, content) encoded once."""
    connection.ensure_connection()
    memo: dict[int, tuple[Any, str]] = {}
    with connection.connection.cursor() as cursor:
        for model, instances in rows.items():
            if instances:
                copy_rows(model, instances, cursor=cursor, memo=memo)


class _Writer:
    """Write batches on a second thread, so PostgreSQL takes one batch while the next is built.

    Each ``write`` call is its own transaction on the thread's own
    connection. Batches are written in order; at most one waits while one
    is written. Leaving the block with an exception drops the waiting batch
    and lets the one being written finish, so an interrupted seed ends on a
    committed batch. The writer's error, if any, is raised on leaving.
    """

    def __init__(self, write: Callable[[dict], None], progress: Progress):
        self._write, self._progress = write, progress
        self._todo: queue.Queue = queue.Queue(maxsize=1)
        self._done: queue.Queue = queue.Queue()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="bench-seed-writer", daemon=True)

    def __enter__(self) -> "_Writer":
        self._thread.start()
        return self

    def submit(self, rows: dict, count: int) -> None:
        if self._error is not None:
            raise self._error
        self._todo.put((rows, count))
        self._report()

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is not None:
            with contextlib.suppress(queue.Empty):
                self._todo.get_nowait()
        self._todo.put(None)
        self._thread.join()
        if exc_type is None:
            self._report()
            if self._error is not None:
                raise self._error

    def _run(self) -> None:
        try:
            while (item := self._todo.get()) is not None:
                if self._error is None:  # after a failure, only drain so submit never blocks
                    try:
                        self._write(item[0])
                        self._done.put(item[1])
                    except BaseException as error:
                        self._error = error
        finally:
            connection.close()

    def _report(self) -> None:
        while True:
            try:
                count = self._done.get_nowait()
            except queue.Empty:
                return
            if self._progress:
                self._progress(count)


# --- a) the world after many applied proposals ------------------------------------


def seed_applied_memories(
    *,
    tenant: Tenant,
    agent: Agent,
    evidence: list[EvidenceRevision],
    count: int,
    text: TextGenerator,
    progress: Progress = None,
    batch: int = 5000,
) -> None:
    """Write ``count`` memories as if their create proposals had been submitted and applied.

    The mix comes from ``text`` (half org factor conclusions, 30 % user
    preferences, 20 % episodic events). Each gets what the real path writes:
    the proposal (status applied, the real engine's verdict: preferences
    auto_apply, events policy_gated, factor conclusions review_required),
    its evidence links, the approvals a review_required proposal needed
    (by ``bench-reviewer-N`` users, with their history rows), a done outbox
    entry, the memory at revision 1 with its ``+`` history row and evidence
    links, and an applied receipt. Each batch is one transaction that locks
    the tenant's chain head, appends its receipts after it and moves it, so
    an interrupted seed leaves a chain that verifies and executors may run
    meanwhile. Timestamps run up to now, after the tenant's last receipt.
    """
    world = _World(tenant=tenant, agent=agent, evidence=evidence, text=text)
    indices = text.reserve(count)
    now = timezone.now()
    last = Receipt.objects.filter(tenant=tenant).order_by("-seq").values_list("created_at", flat=True).first()
    step = timedelta(milliseconds=200)
    if last is not None and now - count * step <= last:
        step = (now - last) / (count + 1)
    start = now - count * step
    with _Writer(functools.partial(_write_applied, world), progress) as writer:
        for offset in range(0, count, batch):
            chunk = indices[offset : offset + batch]
            rows = _applied_rows(world, chunk, first_at=start + (offset + 1) * step, step=step)
            writer.submit(rows, len(chunk))


@transaction.atomic(durable=True)
def _write_applied(world: _World, rows: dict[type, list]) -> None:
    chain = _lock_chain(world.tenant.pk)
    _chain_receipts(rows[Receipt], chain)
    _copy_all(rows)
    chain.save(update_fields=["seq", "head_hash"])


@transaction.atomic(durable=True)
def _write_rows(rows: dict[type, list]) -> None:
    _copy_all(rows)


def _applied_rows(world: _World, chunk: range, *, first_at: datetime, step: timedelta) -> dict[type, list]:
    """Build every row of ``chunk``'s applied memories; receipts get their place in the chain later."""
    rows: dict[type, list] = {model: [] for model in APPLIED_MODELS}
    tenant_id = world.tenant.pk
    for k, i in enumerate(chunk):
        applied_at = first_at + k * step
        frozen = world.freeze(
            i,
            kind=None,
            risk_levels=("low", "medium"),
            allowed=(
                Proposal.Classification.AUTO_APPLY,
                Proposal.Classification.POLICY_GATED,
                Proposal.Classification.REVIEW_REQUIRED,
            ),
        )
        verdict = frozen.verdict
        reviewed = verdict.classification == Proposal.Classification.REVIEW_REQUIRED
        if reviewed:  # submitted two hours earlier, approved a second before it was applied
            created_at, released_at = applied_at - timedelta(hours=2), applied_at - timedelta(seconds=1)
        else:
            created_at = applied_at - timedelta(milliseconds=250)
            released_at = created_at + timedelta(seconds=verdict.hold_seconds)
        proposal = world.proposal(
            frozen,
            status=Proposal.Status.APPLIED,
            outcome=Receipt.Outcome.APPLIED,
            created_at=created_at,
            updated_at=applied_at,
        )
        rows[Proposal].append(proposal)
        rows[ProposalEvidence].extend(world.evidence_links(proposal, frozen))
        decisions = []
        for reviewer in world.approvers(verdict.required_approvals) if reviewed else []:
            decision = new(
                ReviewDecision,
                id=world.new_id(),
                tenant_id=tenant_id,
                proposal_id=proposal.pk,
                actor_id=reviewer.pk,
                represented_owner="quant-desk",
                decision=ReviewDecision.Decision.APPROVE,
                reason="checked against the cited backtest",
                action_digest=proposal.action_digest,
                proposal_version=proposal.version,
                policy_fingerprint=proposal.policy_fingerprint,
                channel=ReviewDecision.Channel.UI,
                created_at=released_at,
            )
            decisions.append(decision)
            rows[ReviewDecision].append(decision)
            rows[HistoricalDecision].append(_history_row(decision, at=released_at, user_id=reviewer.pk))
        entry = new(
            OutboxEntry,
            id=world.new_id(),
            tenant_id=tenant_id,
            proposal_id=proposal.pk,
            action_digest=proposal.action_digest,
            status=OutboxEntry.Status.DONE,
            attempts=1,
            available_at=released_at,
            created_at=released_at,
            updated_at=applied_at,
        )
        rows[OutboxEntry].append(entry)
        receipt_id = world.new_id()
        memory = new_memory(  # the executor's own builder
            memory_id=proposal.target_memory_id, tenant_id=tenant_id, fields=frozen.fields, now=applied_at
        )
        memory.state = Memory.State.ACTIVE.value  # the default as a plain string (same row, faster hash)
        rows[Memory].append(memory)
        rows[HistoricalMemory].append(_history_row(memory, at=applied_at, reason=f"receipt:{receipt_id}"))
        rows[MemoryEvidence].extend(
            new(
                MemoryEvidence,
                tenant_id=tenant_id,
                memory_id=memory.pk,
                memory_revision=1,
                evidence_revision_id=revision.pk,
                content_hash=revision.content_hash,
            )
            for revision in frozen.revisions
        )
        receipt = new(
            Receipt,
            id=receipt_id,
            tenant_id=tenant_id,
            proposal_id=proposal.pk,
            outbox_entry_id=entry.pk,
            outcome=Receipt.Outcome.APPLIED.value,
            reason="",
            memory_id=memory.pk,
            before_revision=None,
            after_revision=1,
            before_content_hash="",
            after_content_hash=memory.content_hash,
            action_digest=entry.action_digest,
            evidence=proposal.evidence,
            decision_ids=[str(decision.pk) for decision in decisions] if decisions else _NONE,
            effects=_NOTHING,
            policy_fingerprint=proposal.policy_fingerprint,
            executor={**EXECUTOR, "task_id": str(entry.pk)},
            created_at=applied_at,
        )
        rows[Receipt].append(receipt)
    return rows


def _history_row(instance, *, at: datetime, reason: str | None = None, user_id=None):
    """Return the ``+`` row simple-history writes when ``instance`` is created."""
    model = type(instance)
    history_model = HISTORY[model]
    values = instance.__dict__
    return new(
        history_model,
        **{name: values[name] for name in _shared_attnames(history_model, model)},
        history_date=at,
        history_change_reason=reason,
        history_type="+",
        history_user_id=user_id,
    )


@functools.cache
def _shared_attnames(history_model, model) -> tuple[str, ...]:
    own = {f.attname for f in history_model._meta.concrete_fields}
    return tuple(f.attname for f in model._meta.concrete_fields if f.attname in own)


# --- b) the review queue --------------------------------------------------------------


def seed_pending_proposals(
    *,
    tenant: Tenant,
    agent: Agent,
    evidence: list[EvidenceRevision],
    count: int,
    text: TextGenerator,
    progress: Progress = None,
    batch: int = 5000,
) -> None:
    """Write ``count`` org factor conclusions waiting for a PM, as ``submit_proposal`` leaves them.

    Status pending_review with the real engine's verdict (risk low, medium
    or high in turn, so the risk order of ``/review/`` has something to
    sort), evidence links, created over the last three days; each review
    deadline is its creation plus the rule's window, so none is overdue.
    """
    world = _World(tenant=tenant, agent=agent, evidence=evidence, text=text)
    indices = text.reserve(count)
    now = timezone.now()
    with _Writer(_write_rows, progress) as writer:
        for offset in range(0, count, batch):
            chunk = indices[offset : offset + batch]
            writer.submit(_pending_rows(world, chunk, now=now), len(chunk))


def _pending_rows(world: _World, chunk: range, *, now: datetime) -> dict[type, list]:
    proposals, links = [], []
    for i in chunk:
        age = timedelta(seconds=random.Random(i).uniform(60, 72 * 3600))
        frozen = world.freeze(
            i,
            kind=FACTOR,
            risk_levels=("low", "medium", "high"),
            allowed=(Proposal.Classification.REVIEW_REQUIRED,),
        )
        proposal = world.proposal(
            frozen,
            status=Proposal.Status.PENDING_REVIEW,
            created_at=now - age,
            updated_at=now - age,
        )
        proposals.append(proposal)
        links.extend(world.evidence_links(proposal, frozen))
    return {Proposal: proposals, ProposalEvidence: links}


# --- c) a backlog for the executor ----------------------------------------------------------


def seed_released_backlog(
    *,
    tenant: Tenant,
    agent: Agent,
    evidence: list[EvidenceRevision],
    count: int,
    text: TextGenerator,
    progress: Progress = None,
    batch: int = 5000,
) -> list[uuid.UUID]:
    """Write ``count`` released auto-apply proposals with a pending outbox entry each; return the entry ids.

    Exactly what ``release`` writes (user preferences the user asked for,
    due now) but no broker message: the executor's sweep finds them, so a
    benchmark can time how fast the executor drains a backlog.
    """
    world = _World(tenant=tenant, agent=agent, evidence=evidence, text=text)
    indices = text.reserve(count)
    entry_ids: list[uuid.UUID] = []
    with _Writer(_write_rows, progress) as writer:
        for offset in range(0, count, batch):
            chunk = indices[offset : offset + batch]
            rows = _backlog_rows(world, chunk, now=timezone.now())
            entry_ids.extend(entry.pk for entry in rows[OutboxEntry])
            writer.submit(rows, len(chunk))
    return entry_ids


def _backlog_rows(world: _World, chunk: range, *, now: datetime) -> dict[type, list]:
    proposals, links, entries = [], [], []
    for i in chunk:
        frozen = world.freeze(
            i, kind=PREFERENCE, risk_levels=("low",), allowed=(Proposal.Classification.AUTO_APPLY,)
        )
        proposal = world.proposal(
            frozen,
            status=Proposal.Status.RELEASED,
            created_at=now,
            updated_at=now,
        )
        proposals.append(proposal)
        links.extend(world.evidence_links(proposal, frozen))
        entries.append(
            new(
                OutboxEntry,
                id=world.new_id(),
                tenant_id=world.tenant.pk,
                proposal_id=proposal.pk,
                action_digest=proposal.action_digest,
                status=OutboxEntry.Status.PENDING,
                attempts=0,
                available_at=now + timedelta(seconds=frozen.verdict.hold_seconds),
                created_at=now,
                updated_at=now,
            )
        )
    return {Proposal: proposals, ProposalEvidence: links, OutboxEntry: entries}


# --- d) the floor: PostgreSQL alone ------------------------------------------------------------


@dataclass(frozen=True)
class FloorRows:
    """Rows exactly as ``seed_applied_memories`` would write them, as plain tuples per table."""

    memories: int
    tables: list[tuple[str, tuple[str, ...], list[tuple]]]

    @property
    def rows(self) -> int:
        return sum(len(rows) for _, _, rows in self.tables)


@dataclass(frozen=True)
class FloorResult:
    memories: int
    rows: int
    seconds: float

    @property
    def memories_per_second(self) -> float:
        return self.memories / self.seconds

    @property
    def rows_per_second(self) -> float:
        return self.rows / self.seconds


def floor_rows(
    *, tenant: Tenant, agent: Agent, evidence: list[EvidenceRevision], count: int, text: TextGenerator
) -> FloorRows:
    """Build, untimed, the rows ``seed_applied_memories`` would write for ``count`` memories.

    The floor functions then write these same rows with no Django and no row
    building in the timed loop, so "seeding at X % of the floor" compares
    like with like. The receipts continue the tenant's chain as it is now.
    """
    world = _World(tenant=tenant, agent=agent, evidence=evidence, text=text)
    head = ReceiptChain.objects.filter(tenant=tenant).first() or ReceiptChain(tenant=tenant)
    now = timezone.now()
    step = timedelta(milliseconds=1)
    rows = _applied_rows(world, text.reserve(count), first_at=now, step=step)
    _chain_receipts(rows[Receipt], head)
    tables, memo = [], {}
    for model, instances in rows.items():
        table, columns, getters, json_columns = _plan(model)
        tables.append((table, columns, [tuple(_row(obj, getters, json_columns, memo)) for obj in instances]))
    return FloorRows(memories=count, tables=tables)


def floor_copy(*, table_rows: FloorRows, dsn: str | None = None) -> FloorResult:
    """Time writing ``table_rows`` with COPY on a bare psycopg connection, then roll it all back."""
    return _floor(table_rows, dsn, _write_copy)


def floor_executemany(*, table_rows: FloorRows, dsn: str | None = None) -> FloorResult:
    """Time writing ``table_rows`` with ``executemany`` (psycopg pipelines it), then roll it all back."""
    return _floor(table_rows, dsn, _write_executemany)


def _write_copy(cursor, table: str, columns: tuple[str, ...], rows: list[tuple]) -> None:
    with cursor.copy(_copy_statement(table, columns)) as copy:
        for row in rows:
            copy.write_row(row)


def _write_executemany(cursor, table: str, columns: tuple[str, ...], rows: list[tuple]) -> None:
    statement = sql.SQL("INSERT INTO {} ({}) VALUES ({})").format(
        sql.Identifier(table),
        sql.SQL(", ").join(map(sql.Identifier, columns)),
        sql.SQL(", ").join(sql.Placeholder() * len(columns)),
    )
    cursor.executemany(statement, rows)


def _floor(table_rows: FloorRows, dsn: str | None, write) -> FloorResult:
    """Write the rows in one transaction, timed, then roll it back.

    Rolling back leaves nothing behind (only dead tuples for vacuum), so the
    same rows can be written by both methods. The deferred foreign keys are
    made immediate so their checks are inside the timing, as the commit of
    a seeding batch includes them.
    """
    with psycopg.connect(dsn or _dsn()) as conn, conn.cursor() as cursor:
        try:
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
            started = time.perf_counter()
            for table, columns, rows in table_rows.tables:
                write(cursor, table, columns, rows)
            cursor.execute("SELECT 1")  # wait for the server to finish the last write
            seconds = time.perf_counter() - started
        finally:
            conn.rollback()
    return FloorResult(memories=table_rows.memories, rows=table_rows.rows, seconds=seconds)


def _dsn() -> str:
    """Return a libpq connection string for Django's database (whatever the test runner named it)."""
    settings = connection.settings_dict
    parts = {
        "dbname": settings["NAME"],
        "user": settings.get("USER"),
        "password": settings.get("PASSWORD"),
        "host": settings.get("HOST"),
        "port": settings.get("PORT"),
    }
    return psycopg.conninfo.make_conninfo(**{key: value for key, value in parts.items() if value})


__all__ = [
    "FloorResult",
    "FloorRows",
    "copy_rows",
    "floor_copy",
    "floor_executemany",
    "floor_rows",
    "new",
    "seed_applied_memories",
    "seed_pending_proposals",
    "seed_released_backlog",
]
