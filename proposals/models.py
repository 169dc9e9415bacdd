"""Proposals: zero-write, typed, frozen actions on memories."""

import uuid

from django.db import models
from simple_history.models import HistoricalRecords

from core.canonical import digest
from core.errors import DomainError
from core.history import human_history_user
from core.keyed import keyed_digest, keyed_digest_matches
from evidence.models import EvidenceRevision
from tenancy.models import Agent, Tenant


class InvalidProposalTransition(DomainError):
    code = "invalid_transition"
    status = 409
    title = "The proposal cannot move to that status"


class Proposal(models.Model):
    """A frozen action an agent asks to have applied to memory.

    Submitting one writes no memory; the executor applies it later, exactly
    as frozen here (``action_digest`` covers everything it will execute).
    """

    class Action(models.TextChoices):
        CREATE = "create"
        UPDATE = "update"
        EXPIRE = "expire"
        REVOKE = "revoke"
        DELETE = "delete"
        PURGE = "purge"
        RESTORE = "restore"
        FENCE = "fence"
        REVALIDATE = "revalidate"
        REGISTER = "register"  # publish a registration candidate (not a memory action)
        DORMANT = "dormant"  # the dormancy sweep's verb: active -> dormant
        LINK = "link"  # an allowlisted typed link from the target memory to another
        ENTITY_CREATE = "entity_create"  # the target id is the entity's, not a memory's
        ENTITY_MERGE = "entity_merge"  # a reversible redirect of the target entity into another
        ENTITY_UNMERGE = "entity_unmerge"
        COMPACT = "compact"  # the compaction sweep's verb: a summary successor, its sources made dormant
        ERASE = "erase"  # a subject's memories and what derives from them, purged as one reviewed plan

    ENTITY_ACTIONS = ("entity_create", "entity_merge", "entity_unmerge")
    LIFECYCLE_ACTIONS = (
        Action.EXPIRE,
        Action.REVOKE,
        Action.DELETE,
        Action.PURGE,
        Action.RESTORE,
        Action.DORMANT,
    )
    # Made by Custodian itself (evidence changes; an operator's publish request; sweeps), never by agents.
    SYSTEM_ACTIONS = (Action.FENCE, Action.REVALIDATE, Action.REGISTER, Action.DORMANT, Action.COMPACT)
    # Actions that physically remove memories (their receipts name what went, never content).
    REMOVING_ACTIONS = (Action.PURGE, Action.ERASE)
    # Asked for at an endpoint of their own, never as a plain proposal (erasures: POST /erasures/).
    OWN_ENDPOINT_ACTIONS = (Action.ERASE,)
    # Actions whose result is an active memory: its dedupe key must be free (one active memory per key).
    CLAIMS_DEDUPE_KEY = (Action.CREATE, Action.UPDATE, Action.RESTORE)

    class Classification(models.TextChoices):
        AUTO_APPLY = "auto_apply"
        POLICY_GATED = "policy_gated"
        REVIEW_REQUIRED = "review_required"
        DENIED = "denied"

    class Status(models.TextChoices):
        PENDING_REVIEW = "pending_review"
        CHANGES_REQUESTED = "changes_requested"
        RELEASED = "released"
        APPLIED = "applied"
        NOT_APPLIED = "not_applied"
        DENIED = "denied"
        REJECTED = "rejected"
        EXPIRED = "expired"
        WITHDRAWN = "withdrawn"
        BLOCKED_EVIDENCE = "blocked_evidence"

    # The proposal state machine: the only moves a status may make.
    # An amendment re-classifies, so changes_requested may lead anywhere a
    # fresh submission may.
    TRANSITIONS = {
        Status.PENDING_REVIEW: {
            Status.RELEASED,
            Status.REJECTED,
            Status.CHANGES_REQUESTED,
            Status.EXPIRED,
            Status.WITHDRAWN,
            Status.BLOCKED_EVIDENCE,
        },
        Status.CHANGES_REQUESTED: {
            Status.PENDING_REVIEW,
            Status.RELEASED,
            Status.DENIED,
            Status.EXPIRED,
            Status.WITHDRAWN,
            Status.BLOCKED_EVIDENCE,
        },
        Status.RELEASED: {
            Status.APPLIED,
            Status.NOT_APPLIED,
            Status.PENDING_REVIEW,
            Status.WITHDRAWN,
            Status.BLOCKED_EVIDENCE,
        },
        Status.BLOCKED_EVIDENCE: {Status.WITHDRAWN, Status.NOT_APPLIED},
        Status.APPLIED: set(),
        Status.NOT_APPLIED: set(),
        Status.DENIED: set(),
        Status.REJECTED: set(),
        Status.EXPIRED: set(),
        Status.WITHDRAWN: set(),
    }
    OPEN_STATUSES = (Status.PENDING_REVIEW, Status.CHANGES_REQUESTED, Status.RELEASED)
    BLOCKABLE_STATUSES = OPEN_STATUSES
    RISK_RANKS = {"unspecified": 0, "low": 1, "medium": 2, "high": 3}

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.PROTECT, related_name="+")
    submitted_by = models.ForeignKey(Agent, on_delete=models.PROTECT, related_name="proposals")
    action = models.CharField(max_length=16, choices=Action.choices)
    # What the action is about: a memory's id, an entity's (entity_*) or a registration
    # candidate's (register). The column keeps its first name.
    target_id = models.UUIDField(
        db_column="target_memory_id",
        help_text="The memory (an entity for entity actions, a candidate for register); assigned for create",
    )
    base_revision = models.PositiveIntegerField(help_text="0 for create")
    fields = models.JSONField(help_text="Proposed memory fields (create) or changes (update)")
    evidence = models.JSONField(help_text="Evidence bindings: evidence_id, revision, content_hash")
    policy_context = models.JSONField(default=dict)
    rationale = models.TextField(blank=True)
    version = models.PositiveIntegerField(default=1, help_text="1 + the number of amendments")
    # Copies of the resulting memory's type/scope and the context's risk, so
    # the review queue filters and sorts on indexed columns.
    dedupe_key = models.CharField(max_length=256, blank=True)
    memory_type = models.CharField(max_length=32, blank=True)
    memory_scope = models.CharField(max_length=16, blank=True)
    risk_rank = models.PositiveSmallIntegerField(default=0)

    idempotency_key = models.CharField(max_length=200)
    request_hash = models.CharField(max_length=64)
    action_digest = models.CharField(max_length=64)

    classification = models.CharField(max_length=16, choices=Classification.choices)
    matched_rule = models.CharField(max_length=100)
    reason_codes = models.JSONField(default=list)
    policy_facts = models.JSONField(default=dict, help_text="What the engine saw, for reviewers")
    admission_findings = models.JSONField(
        default=list,
        db_default=[],
        blank=True,
        help_text="The admission firewall's findings: detector, version, field path, kind, span (never text)",
    )
    policy_version = models.CharField(max_length=64)
    policy_fingerprint = models.CharField(max_length=64)
    registration_version = models.PositiveIntegerField(
        default=1, help_text="The tenant's registration version the content was validated under"
    )
    required_approvals = models.PositiveSmallIntegerField(default=0)
    gates = models.JSONField(default=list)
    review_deadline = models.DateTimeField(null=True, blank=True)
    verdict_seal = models.CharField(
        max_length=64,
        blank=True,
        default="",
        db_default="",
        help_text="Keyed digest of the verdict and the action it covers (see VERDICT_COLUMNS)",
    )

    status = models.CharField(max_length=24, choices=Status.choices)
    outcome = models.CharField(max_length=32, blank=True, help_text="Last executor outcome")
    dreaming_run = models.ForeignKey(
        "DreamingRun",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="proposals",
        help_text="The Dreaming run whose plan this action belongs to (set only by the server)",
    )
    submission_index = models.PositiveIntegerField(
        default=0, help_text="Position in the request that submitted it (a batch's item index)"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    history = HistoricalRecords(excluded_fields=["updated_at"], get_user=human_history_user)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["tenant", "submitted_by", "idempotency_key"], name="proposal_idempotency_key"
            )
        ]
        indexes = [
            models.Index(fields=["tenant", "status", "-created_at"], name="proposal_status_idx"),
            models.Index(fields=["tenant", "classification", "-created_at"], name="proposal_class_idx"),
            models.Index(fields=["tenant", "-created_at", "-id"], name="proposal_recent_idx"),
            models.Index(fields=["tenant", "target_id", "status"], name="proposal_target_idx"),
            models.Index(fields=["tenant", "dedupe_key", "status"], name="proposal_dedupe_idx"),
            models.Index(fields=["status", "tenant", "created_at", "id"], name="proposal_queue_age_idx"),
            models.Index(
                fields=["status", "tenant", "-risk_rank", "created_at", "id"], name="proposal_queue_risk_idx"
            ),
            models.Index(
                fields=["review_deadline"],
                condition=models.Q(status__in=["pending_review", "changes_requested"]),
                name="proposal_review_deadline_idx",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.action} {self.target_id} ({self.status})"

    def frozen_action(self) -> dict:
        """Return everything the executor will execute, as JSON."""
        return {
            "tenant_id": str(self.tenant_id),
            "action": self.action,
            "memory_id": str(self.target_id),
            "base_revision": self.base_revision,
            "fields": self.fields,
            "evidence": self.evidence,
        }

    def compute_action_digest(self) -> str:
        return digest(self.frozen_action())

    # What the verdict seal binds: who asked for which exact action, and what policy said about it.
    VERDICT_COLUMNS = (
        "id",
        "tenant_id",
        "submitted_by_id",
        "action_digest",
        "classification",
        "required_approvals",
        "gates",
        "matched_rule",
        "policy_fingerprint",
        "dreaming_run_id",
    )

    def compute_verdict_seal(self) -> str:
        """Seal the verdict with the server's key, so the executor can tell it from a rewritten row."""
        return verdict_seal({column: getattr(self, column) for column in self.VERDICT_COLUMNS})

    def has_sealed_verdict(self) -> bool:
        """True if the verdict and action are exactly what a Custodian process sealed."""
        row = {column: getattr(self, column) for column in self.VERDICT_COLUMNS}
        return keyed_digest_matches(self.verdict_seal, VERDICT_SEAL, _verdict_json(row))

    @property
    def is_lifecycle(self) -> bool:
        return self.action in self.LIFECYCLE_ACTIONS

    @property
    def claimed_dedupe_key(self) -> str:
        """The dedupe key the memory holds once this applies, or "" if it claims none."""
        return self.dedupe_key if self.action in self.CLAIMS_DEDUPE_KEY else ""

    @property
    def risk_level(self) -> str:
        return (self.policy_context or {}).get("risk_level") or "unspecified"

    @property
    def is_low_risk(self) -> bool:
        """Low-risk proposals may be approved in bulk: one approval, not high risk, not sensitive."""
        return (
            self.required_approvals == 1
            and self.risk_rank <= self.RISK_RANKS["low"]
            and self.policy_facts.get("sensitivity") in ("public", "internal")
        )

    def transition_to(self, status: str) -> None:
        """Move to ``status`` or raise :class:`InvalidProposalTransition`."""
        if status not in self.TRANSITIONS[self.Status(self.status)]:
            raise InvalidProposalTransition(f"A {self.status} proposal cannot become {status}")
        self.status = status

    transition_to.alters_data = True  # type: ignore[attr-defined]  # templates must not call it


class DreamingRun(models.Model):
    """One Bounded Dreaming pass over a frozen window: what it saw, who planned, what it proposed.

    The window (2-8 active memories of one tenant, subject, scope and type),
    each member's revision and evidence, the planner, the policy fingerprint,
    the budget and the mode are frozen when the run is made; the executor
    applies an action of the run only while every member is still where it
    was frozen, or moved only by the run's own applied actions. The run's
    status is read off its proposals (``status_from``), never stored as a
    claim; only ``stale`` and ``refused``, which no proposal can show, are.
    """

    class Trigger(models.TextChoices):
        DEDUPE_COLLISION = "dedupe_collision"  # members share a structured key (preference_key…)
        NEAR_DUPLICATE = "near_duplicate"  # members say (almost) the same thing
        CAPACITY = "capacity"  # the subject+scope+type holds more than its registered capacity
        SCHEDULE = "schedule"

    class Mode(models.TextChoices):
        AUTO = "auto"  # low-risk actions auto-apply
        POLICY_GATED = "policy_gated"  # low-risk actions apply if their gates hold at execution
        PROPOSAL_ONLY = "proposal_only"  # every action waits for a reviewer

    class Closed(models.TextChoices):
        OPEN = ""
        STALE = "stale"  # a member moved after freezing: zero writes from then on
        REFUSED = "refused"  # the server refused the planner's plan: nothing was proposed

    MIN_WINDOW, MAX_WINDOW, MAX_BUDGET = 2, 8, 8

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.PROTECT, related_name="+")
    trigger = models.CharField(max_length=24, choices=Trigger.choices)
    subject_kind = models.CharField(max_length=16)
    subject_id = models.CharField(max_length=256)
    scope = models.CharField(max_length=16)
    memory_type = models.CharField(max_length=32)
    members = models.JSONField(help_text="[{memory_id, revision, evidence: [evidence revision ids]}]")
    window_digest = models.CharField(max_length=64, help_text="Digest of the frozen members and revisions")
    planner = models.CharField(max_length=64)
    planner_version = models.CharField(max_length=32)
    policy_fingerprint = models.CharField(max_length=64)
    registration_version = models.PositiveIntegerField()
    budget = models.PositiveSmallIntegerField()
    mode = models.CharField(max_length=16, choices=Mode.choices)
    plan = models.JSONField(default=list, help_text="The validated actions and the proposals each became")
    closed = models.CharField(max_length=16, choices=Closed.choices, blank=True, default="")
    closed_reason = models.TextField(blank=True)
    closed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(fields=["tenant", "window_digest"], name="dreaming_run_window_once"),
            models.CheckConstraint(condition=models.Q(budget__lte=8), name="dreaming_run_budget_lte_8"),
        ]
        indexes = [models.Index(fields=["tenant", "-created_at", "-id"], name="dreaming_run_recent_idx")]

    def __str__(self) -> str:
        return f"dreaming run {self.id} ({self.trigger})"

    @property
    def member_ids(self) -> list[str]:
        return [member["memory_id"] for member in self.members]

    def status_from(self, statuses: list[str]) -> str:
        """The run's status as its proposals' statuses say (``statuses``: one per proposal)."""
        if self.closed:
            return self.closed
        if not statuses:
            return "empty"
        applied = sum(status == Proposal.Status.APPLIED for status in statuses)
        open_ = sum(status in Proposal.OPEN_STATUSES for status in statuses)
        if applied == len(statuses):
            return "applied"
        if applied:
            return "partially_applied"
        if open_:
            return "planned"
        return "rejected"


VERDICT_SEAL = "proposal.verdict"


def verdict_seal(row: dict) -> str:
    """Return the seal of a proposal given as a row of ``Proposal.VERDICT_COLUMNS`` (migrations use it)."""
    return keyed_digest(VERDICT_SEAL, _verdict_json(row))


def _verdict_json(row: dict) -> dict:
    """The sealed JSON; a proposal outside any Dreaming run seals exactly as before runs existed."""
    return {
        column: str(value) if column in _UUID_COLUMNS else value
        for column, value in row.items()
        if not (column in _SEALED_WHEN_SET and value is None)
    }


_UUID_COLUMNS = frozenset({"id", "tenant_id", "submitted_by_id", "dreaming_run_id"})
_SEALED_WHEN_SET = frozenset({"dreaming_run_id"})


class ProposalEvidence(models.Model):
    """Indexes which evidence revisions a proposal cites (for fencing and review)."""

    id = models.BigAutoField(primary_key=True)
    tenant = models.ForeignKey(Tenant, on_delete=models.PROTECT, related_name="+")
    proposal = models.ForeignKey(Proposal, on_delete=models.CASCADE, related_name="evidence_links")
    evidence_revision = models.ForeignKey(
        EvidenceRevision, on_delete=models.PROTECT, related_name="proposal_links"
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["proposal", "evidence_revision"], name="proposal_evidence_unique")
        ]

    def __str__(self) -> str:
        return f"{self.proposal_id} cites {self.evidence_revision_id}"


class OutboxEntry(models.Model):
    """One request to execute a released proposal. Its id is the Celery task id.

    ``release()`` writes it in the transaction that releases the proposal; the
    broker message is only a nudge, the executor's sweep re-dispatches anything
    it missed. A ``dispatched`` entry is leased until ``lease_expires_at``; on
    PostgreSQL the worker connection that took it is named too, and the sweep
    takes the entry over as soon as that connection is gone (``executor.leases``).
    """

    class Status(models.TextChoices):
        PENDING = "pending"
        DISPATCHED = "dispatched"
        DONE = "done"
        DEAD = "dead"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.PROTECT, related_name="+")
    proposal = models.ForeignKey(Proposal, on_delete=models.PROTECT, related_name="outbox_entries")
    action_digest = models.CharField(max_length=64)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    available_at = models.DateTimeField()
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    # The PostgreSQL backend (pid, start) of the worker connection holding the lease.
    lease_holder_pid = models.PositiveIntegerField(null=True, blank=True)
    lease_holder_started_at = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    requested_by = models.CharField(max_length=150, blank=True, help_text="Who requeued a dead entry")
    requeued_from = models.OneToOneField(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="requeued_as"
    )
    # The request that wrote the row (request_id, correlation_id, W3C traceparent/tracestate),
    # so the executor's log lines and span name it (telemetry.context). Ids only, never content.
    # The database default lets rows written without it (raw SQL, older code in a rolling deploy) in.
    trace_context = models.JSONField(default=dict, db_default={}, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "outbox entries"
        indexes = [
            models.Index(
                fields=["available_at"],
                condition=models.Q(status="pending"),
                name="outbox_pending_idx",
            ),
            models.Index(
                fields=["lease_expires_at"],
                condition=models.Q(status="dispatched"),
                name="outbox_lease_idx",
            ),
            models.Index(fields=["status", "-created_at"], name="outbox_status_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.id} ({self.status}, {self.attempts} attempts)"

    @property
    def is_finished(self) -> bool:
        return self.status in (self.Status.DONE, self.Status.DEAD)
