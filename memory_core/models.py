"""Memories and the evidence each revision rests on.

Rows here change only through ``memory_core.mutations``, which only the
executor may import (an import-linter contract enforces it).
"""

import enum
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Self

from django.contrib.postgres.search import SearchVectorField
from django.db import connection, models
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime
from simple_history.models import HistoricalRecords

from core.canonical import digest
from core.history import human_history_user
from core.models import AppendOnlyModel, AppendOnlyQuerySet
from evidence.models import EvidenceRevision
from tenancy.models import Agent, Tenant


class MemoryQuerySet(models.QuerySet[Any]):
    def with_fence(self) -> Self:
        """Annotate ``fenced``: the current revision rests on an invalidated evidence revision."""
        invalid = MemoryEvidence.objects.filter(
            memory=models.OuterRef("pk"),
            memory_revision=models.OuterRef("revision"),
            evidence_revision__status=EvidenceRevision.Status.INVALIDATED,
        )
        return self.annotate(fenced=models.Exists(invalid))


class Memory(models.Model):
    """One governed memory; ``revision`` counts every change applied to it."""

    class Scope(models.TextChoices):
        USER = "user"
        SESSION = "session"
        TASK = "task"
        AGENT = "agent"
        ORG = "org"
        SHARED_TEAM = "shared_team"

    class Type(models.TextChoices):
        PROFILE = "profile"
        PREFERENCE = "preference"
        EPISODIC_EVENT = "episodic_event"
        SEMANTIC_FACT = "semantic_fact"
        PROCEDURAL_RULE = "procedural_rule"
        RELATIONSHIP = "relationship"
        CHECKPOINT_POINTER = "checkpoint_pointer"
        ARTIFACT_SUMMARY = "artifact_summary"

    class Sensitivity(models.TextChoices):
        PUBLIC = "public"
        INTERNAL = "internal"
        CONFIDENTIAL = "confidential"
        RESTRICTED = "restricted"

    class SubjectKind(models.TextChoices):
        USER = "user"
        AGENT = "agent"
        ORG = "org"
        TASK = "task"
        SESSION = "session"
        CUSTOM = "custom"

    class RetentionPolicy(models.TextChoices):
        PERSISTENT = "persistent"
        TIME_BOUND = "time_bound"
        SESSION_BOUND = "session_bound"
        TASK_BOUND = "task_bound"
        EPHEMERAL = "ephemeral"
        MANUAL_REVIEW_REQUIRED = "manual_review_required"

    class State(models.TextChoices):
        ACTIVE = "active"
        EXPIRED = "expired"
        REVOKED = "revoked"
        DELETED = "deleted"
        DORMANT = "dormant"  # left out of default recall by the dormancy sweep; restorable

    # What a proposal may set on a memory, as its JSON names them, in the order reviewers read them.
    # An update changes the CHANGEABLE_FIELDS; only a create sets the subject, scope and type.
    CHANGEABLE_FIELDS: tuple[str, ...] = (
        "content",
        "sensitivity",
        "confidence",
        "retention_policy",
        "ttl_seconds",
        "expires_at",
        "valid_from",
        "valid_to",
        "dedupe_key",
    )
    PROPOSED_FIELDS: tuple[str, ...] = ("subject", "scope", "type", *CHANGEABLE_FIELDS)
    DATETIME_FIELDS = ("expires_at", "valid_from", "valid_to")
    # The columns a revision's content hash covers (what a proposal can set, and the state);
    # executor.revision_hashes hashes stored revisions in this order.
    SNAPSHOT_COLUMNS = ("subject_kind", "subject_id", *PROPOSED_FIELDS[1:], "state", "state_reason")

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.PROTECT, related_name="+")
    subject_kind = models.CharField(max_length=16, choices=SubjectKind.choices)
    subject_id = models.CharField(max_length=256)
    scope = models.CharField(max_length=16, choices=Scope.choices)
    type = models.CharField(max_length=32, choices=Type.choices)
    content = models.JSONField()
    sensitivity = models.CharField(max_length=16, choices=Sensitivity.choices, default=Sensitivity.INTERNAL)
    confidence = models.FloatField(default=1.0)
    retention_policy = models.CharField(
        max_length=32, choices=RetentionPolicy.choices, default=RetentionPolicy.PERSISTENT
    )
    ttl_seconds = models.PositiveIntegerField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    valid_from = models.DateTimeField(null=True, blank=True)
    valid_to = models.DateTimeField(null=True, blank=True)
    dedupe_key = models.CharField(max_length=256, blank=True)
    state = models.CharField(max_length=16, choices=State.choices, default=State.ACTIVE)
    state_reason = models.TextField(blank=True, help_text="Why it was expired, revoked or deleted")
    revision = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()
    # When its create proposal was submitted and its position in that request (a batch's item
    # index): after ``occurred_at``, the order of an episode (``memory_core.episodes``). Apply
    # order is not it: a worker applies a claimed batch in outbox order, not submission order.
    submitted_at = models.DateTimeField(null=True, blank=True)
    submission_index = models.PositiveIntegerField(default=0)
    # When what it records happened: the content's ``occurred_at`` (a date alone is its midnight,
    # a time without offset is UTC), else when it was submitted. Stored by the executor with the
    # content, so an episode is put in order by the database, not by parsing text per search.
    happened_at = models.DateTimeField(null=True, blank=True)
    # The episode this revision belongs to: the first evidence source it rests on (a conversation
    # session, a document), stored with the revision so a search finds a hit's neighbours from the
    # memories table alone (``memory_core.episodes``).
    episode = models.UUIDField(null=True, blank=True, editable=False)
    # What recall searches, stored so ranking never re-parses text. On PostgreSQL a trigger
    # (migration 0006) computes it from ``search.search_document()``; SQLite leaves it empty.
    # History rows carry their own, computed by their own trigger (migration 0020) from the
    # revision's content: point-in-time recall searches what a memory said then.
    search_vector = SearchVectorField(null=True, editable=False)

    objects = MemoryQuerySet.as_manager()
    history = HistoricalRecords(get_user=human_history_user)
    fenced: bool  # annotated by MemoryQuerySet.with_fence()
    _change_reason: str  # set by the executor before a save: the receipt the history row points to

    class Meta:
        verbose_name_plural = "memories"
        indexes = [
            models.Index(fields=["tenant", "subject_kind", "subject_id", "state"], name="memory_subject_idx"),
            # A search's named subjects' memories, newest first (``memory_core.subjects``): an ordered
            # scan that stops at the first stage's pool, however many memories a subject has.
            models.Index(
                fields=["tenant", "subject_id", "state", "-updated_at", "id"],
                name="memory_subject_recent_idx",
            ),
            models.Index(fields=["tenant", "dedupe_key", "state"], name="memory_dedupe_idx"),
            models.Index(fields=["tenant", "scope", "type", "state"], name="memory_scope_type_idx"),
            models.Index(
                fields=["expires_at"],
                condition=models.Q(state="active", expires_at__isnull=False),
                name="memory_ttl_idx",
            ),
            # The dormancy sweep's path: a type's active memories not changed since a cutoff, oldest first.
            models.Index(
                fields=["tenant", "type", "updated_at", "id"],
                condition=models.Q(state="active"),
                name="memory_dormancy_idx",
            ),
            # An episode's memories in the order things happened (``memory_core.episodes``).
            models.Index(
                fields=["episode", "happened_at", "submission_index"],
                condition=models.Q(episode__isnull=False),
                name="memory_episode_idx",
            ),
            # The compaction sweep's path: a type's active memories counted per subject and scope
            # (and which of them may be members), from the index alone on PostgreSQL.
            models.Index(
                fields=["tenant", "type", "subject_kind", "subject_id", "scope"],
                include=["expires_at", "retention_policy"],
                condition=models.Q(state="active"),
                name="memory_capacity_idx",
            ),
        ]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(confidence__gte=0) & models.Q(confidence__lte=1),
                name="memory_confidence_0_1",
            ),
            models.CheckConstraint(condition=models.Q(revision__gte=1), name="memory_revision_gte_1"),
            # One active memory per dedupe key; the executor checks first and refuses with a
            # receipt, this is the backstop when two workers race.
            models.UniqueConstraint(
                fields=["tenant", "dedupe_key"],
                condition=models.Q(state="active") & ~models.Q(dedupe_key=""),
                name="memory_one_active_per_dedupe_key",
            ),
        ]

    def __str__(self) -> str:
        # Never the statement: admin titles, breadcrumbs, history and logs print this for
        # people the read policy may give metadata only.
        return f"{self.type} {self.id}"

    @property
    def statement(self) -> str:
        return str((self.content or {}).get("statement", ""))

    @property
    def is_active(self) -> bool:
        return self.state == self.State.ACTIVE

    def place_in_time(self) -> None:
        """Set ``happened_at`` from the content's ``occurred_at``, else from the submission.

        A type's schema lets ``occurred_at`` be a date or a time without offset: a date is its
        midnight, a time without offset is UTC; text that is no moment counts as not given.
        """
        moment = _moment((self.content or {}).get("occurred_at"))
        self.happened_at = moment or self.submitted_at or self.created_at

    @property
    def is_fenced(self) -> bool:
        """True while the memory rests on invalidated evidence (set by ``with_fence``)."""
        return bool(getattr(self, "fenced", False))

    @property
    def content_hash(self) -> str:
        """Hash of everything a revision asserts; receipts record it before and after."""
        return digest(self.snapshot())

    def snapshot(self) -> dict[str, Any]:
        """Return the governed fields as JSON (what a proposal can set)."""
        return self.snapshot_of({column: getattr(self, column) for column in self.SNAPSHOT_COLUMNS})

    @classmethod
    def snapshot_of(cls, row: Mapping[str, Any]) -> dict[str, Any]:
        """Return the snapshot of a memory given as a row of :attr:`SNAPSHOT_COLUMNS` values.

        ``verify_receipts`` hashes rows straight from ``values_list``.
        """
        snapshot: dict[str, Any] = {"subject": {"kind": row["subject_kind"], "id": row["subject_id"]}}
        for column in cls.SNAPSHOT_COLUMNS[2:]:
            snapshot[column] = _iso(row[column]) if column in cls.DATETIME_FIELDS else row[column]
        return snapshot

    @classmethod
    def optional_field_defaults(cls) -> dict[str, Any]:
        """Return what each optional field a proposal may set defaults to, as JSON: its column's default."""
        defaults = {}
        for name in cls.CHANGEABLE_FIELDS:
            field = cls._meta.get_field(name)
            assert isinstance(field, models.Field)
            if field.has_default() or field.null or field.blank:
                default = field.get_default()
                defaults[name] = default.value if isinstance(default, enum.Enum) else default
        return defaults


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


class MemoryEvidence(models.Model):
    """Binds one memory revision to one exact evidence revision it rests on.

    Kept as explicit rows (not an M2M) so history and queries by evidence
    ("which memories rest on this backtest?") stay simple and indexed.
    """

    id = models.BigAutoField(primary_key=True)
    tenant = models.ForeignKey(Tenant, on_delete=models.PROTECT, related_name="+")
    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="evidence_links")
    memory_revision = models.PositiveIntegerField()
    evidence_revision = models.ForeignKey(
        EvidenceRevision, on_delete=models.PROTECT, related_name="memory_links"
    )
    content_hash = models.CharField(max_length=64)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["memory", "memory_revision", "evidence_revision"],
                name="memory_evidence_unique",
            )
        ]

    def __str__(self) -> str:
        return f"{self.memory_id}@{self.memory_revision} ← {self.evidence_revision_id}"


class MemoryVector(models.Model):
    """The embedding of one memory revision's text by one embedder (``memory_core.embeddings``).

    Written by the executor when it applies the revision, never on a request;
    removed with the memory (cascade) when it is purged. Recall compares a
    vector only for an item served ``raw`` (so a fenced, masked or summarised
    memory's text never moves it) and only with the same embedder's query
    vector. float32 bytes in an ordinary column: pgvector is not installed.
    """

    id = models.BigAutoField(primary_key=True)
    tenant = models.ForeignKey(Tenant, on_delete=models.PROTECT, related_name="+")
    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="vectors")
    memory_revision = models.PositiveIntegerField()
    embedder = models.CharField(max_length=64)
    vector = models.BinaryField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["memory", "memory_revision", "embedder"], name="memory_vector_per_revision"
            )
        ]

    def __str__(self) -> str:
        return f"{self.embedder} vector of {self.memory_id}@{self.memory_revision}"


class AccessEventQuerySet(AppendOnlyQuerySet["AccessEvent"]):
    def blank_queries(self) -> int:
        """Blank the query text of these events (a purge's scrub); the one change they ever take.

        A PostgreSQL trigger (migration 0007) lets exactly this UPDATE through.
        """
        return models.QuerySet.update(self, query="")

    blank_queries.alters_data = True  # type: ignore[attr-defined]  # templates must not call it


class AccessEvent(AppendOnlyModel):
    """One audited read: a search or a get, allowed, denied or not found. Its id is the recall id.

    Items returned are rows of :class:`AccessEventItem`; denied items are only
    counted. ``next_offset`` lets a cursor (the recall id) continue a search
    without telling the caller how many rows were skipped. Subject ids in
    ``filters`` and ``policy_context`` are kept only as keyed digests, and a
    purge blanks the ``query`` of the events that served the purged memory.
    """

    class Action(models.TextChoices):
        SEARCH = "search"
        GET = "get"

    class Outcome(models.TextChoices):
        OK = "ok"
        DENIED = "denied"
        NOT_FOUND = "not_found"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.PROTECT, related_name="+")
    agent = models.ForeignKey(Agent, null=True, on_delete=models.PROTECT, related_name="+")
    action = models.CharField(max_length=8, choices=Action.choices)
    outcome = models.CharField(max_length=12, choices=Outcome.choices)
    target_memory_id = models.UUIDField(null=True, blank=True)
    query = models.TextField(blank=True)
    filters = models.JSONField(default=dict)
    policy_context = models.JSONField(default=dict)
    correlation_id = models.CharField(max_length=200, blank=True)
    omitted_count = models.PositiveIntegerField(default=0)
    next_offset = models.PositiveIntegerField(null=True, blank=True)
    policy_fingerprint = models.CharField(max_length=64)
    # The version of ``memory_core.ranking.WEIGHTS`` a search ranked with (empty for gets).
    ranking_version = models.CharField(max_length=200, blank=True, default="")
    registration_version = models.PositiveIntegerField(
        null=True, blank=True, help_text="The tenant's registration version the read ran under"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    objects = AccessEventQuerySet.as_manager()  # type: ignore[misc]  # append-only, plus blank_queries()

    class Meta:
        indexes = [
            models.Index(fields=["tenant", "-created_at", "-id"], name="access_recent_idx"),
            models.Index(fields=["tenant", "correlation_id"], name="access_correlation_idx"),
            models.Index(fields=["tenant", "agent", "-created_at"], name="access_agent_idx"),
            models.Index(fields=["tenant", "target_memory_id"], name="access_target_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.action} {self.outcome} {self.created_at:%Y-%m-%d %H:%M}"


class AccessEventItem(AppendOnlyModel):
    """One memory an access event returned, with the revision and the view it was served in."""

    id = models.BigAutoField(primary_key=True)
    event = models.ForeignKey(AccessEvent, on_delete=models.PROTECT, related_name="items")
    tenant = models.ForeignKey(Tenant, on_delete=models.PROTECT, related_name="+")
    memory_id = models.UUIDField()
    revision = models.PositiveIntegerField()
    mode = models.CharField(max_length=16)
    rule = models.CharField(max_length=100)

    class Meta:
        indexes = [models.Index(fields=["tenant", "memory_id"], name="access_item_memory_idx")]

    def __str__(self) -> str:
        return f"{self.memory_id}@{self.revision} as {self.mode}"


class MemoryReads(models.Model):
    """How often one memory was explicitly read (a GET that served it) on one day.

    The compact use history ranking's activation reads: derived from the access
    events, which stay the record, and kept per memory and day so a window of
    candidates costs a few index rows each at any size (scanning the events
    grew with the tenant's whole read history).
    """

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    memory_id = models.UUIDField()
    day = models.DateField()
    reads = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tenant", "memory_id", "day"], name="memory_reads_one_row_a_day")
        ]
        verbose_name_plural = "memory reads"

    def __str__(self) -> str:
        return f"{self.memory_id} read {self.reads}× on {self.day}"

    @classmethod
    def count(cls, tenant_id: uuid.UUID, memory_id: uuid.UUID) -> None:
        """Add one read today, in one statement (an upsert: concurrent reads never lose a count)."""
        # How this database spells a UUID parameter.
        uuid_field: models.UUIDField[uuid.UUID, uuid.UUID] = models.UUIDField()
        values = [
            uuid_field.get_db_prep_value(tenant_id, connection),
            uuid_field.get_db_prep_value(memory_id, connection),
            timezone.now().date(),
        ]
        with connection.cursor() as cursor:
            cursor.execute(
                "INSERT INTO memory_core_memoryreads (tenant_id, memory_id, day, reads)"
                " VALUES (%s, %s, %s, 1) ON CONFLICT (tenant_id, memory_id, day)"
                " DO UPDATE SET reads = memory_core_memoryreads.reads + 1",
                values,
            )


class RecallFeedback(AppendOnlyModel):
    """An agent's vote that one item a recall served (memory and revision, as served) was useful or not.

    Only the agent that recalled may vote, once per memory revision (whichever
    recall served it), so repeating a search never adds weight. Votes rank
    later searches within bounds (``memory_core.ranking``) and never change
    the memory. A vote on an older revision does not count for a newer one.
    """

    class Verdict(models.TextChoices):
        USEFUL = "useful"
        NOT_USEFUL = "not_useful"

    id = models.BigAutoField(primary_key=True)
    tenant = models.ForeignKey(Tenant, on_delete=models.PROTECT, related_name="+")
    recall = models.ForeignKey(AccessEvent, on_delete=models.PROTECT, related_name="feedback")
    agent = models.ForeignKey(Agent, on_delete=models.PROTECT, related_name="+")
    memory_id = models.UUIDField()
    revision = models.PositiveIntegerField()
    verdict = models.CharField(max_length=16, choices=Verdict.choices)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "recall feedback"
        indexes = [models.Index(fields=["tenant", "memory_id"], name="recall_feedback_memory_idx")]
        constraints = [
            models.UniqueConstraint(
                fields=["agent", "memory_id", "revision"], name="recall_feedback_once_per_revision"
            )
        ]

    def __str__(self) -> str:
        return f"{self.verdict} on {self.memory_id}@{self.revision}"


class SearchCorpus(models.Model):
    """Per-tenant size of what recall ranks: active memories and their distinct lexemes (PostgreSQL).

    Kept by statement triggers on memories (migration 0009), in the writing
    transaction: BM25's average document length comes from here. Only active
    memories count, so an expired, revoked, deleted or purged memory never
    weighs on the ranking of what is served.
    """

    tenant = models.OneToOneField(
        "tenancy.Tenant", primary_key=True, on_delete=models.DO_NOTHING, db_constraint=False, related_name="+"
    )
    documents = models.BigIntegerField(default=0)
    lexemes = models.BigIntegerField(default=0)

    def __str__(self) -> str:
        return f"{self.documents} memories, {self.lexemes} lexemes"


class SearchTerm(models.Model):
    """How many active memories of a tenant contain a lexeme (BM25 document frequency; PostgreSQL).

    A row goes when its count reaches zero, so a purged memory's words leave
    no trace here.
    """

    tenant = models.ForeignKey(
        "tenancy.Tenant", on_delete=models.DO_NOTHING, db_constraint=False, related_name="+"
    )
    lexeme = models.TextField()
    documents = models.BigIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["tenant", "lexeme"], name="search_term_per_tenant")]

    def __str__(self) -> str:
        return f"{self.lexeme}: {self.documents}"


class MemoryLink(models.Model):
    """A typed edge from a memory to a memory of its tenant and scope, or to an entity; executor-written.

    ``relation`` comes from the source type's registration allowlist
    (``links.relations``); an entity end takes ``about`` only, which makes
    these rows the index of memories by the entities they are about.
    ``evidence`` freezes what each end rested on as the link proposal saw it
    (a memory's evidence bindings; an entity's last receipt). Purging the
    source or a memory end removes the link with it.
    """

    class Relation(models.TextChoices):
        SUPPORTS = "supports"
        CONTRADICTS = "contradicts"
        SUPERSEDES = "supersedes"
        ABOUT = "about"
        SAME_AS = "same_as"

    ENTITY_RELATIONS = (Relation.ABOUT,)

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.PROTECT, related_name="+")
    source = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="links_out")
    target = models.ForeignKey(Memory, null=True, on_delete=models.CASCADE, related_name="links_in")
    target_entity = models.ForeignKey(
        "Entity", null=True, on_delete=models.PROTECT, related_name="about_links"
    )
    relation = models.CharField(max_length=32, choices=Relation.choices)
    scope = models.CharField(max_length=16, choices=Memory.Scope.choices)
    evidence = models.JSONField(default=dict)
    receipt_id = models.UUIDField()
    created_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["source", "target", "relation"], name="memory_link_unique"),
            models.UniqueConstraint(
                fields=["source", "target_entity", "relation"], name="memory_link_entity_unique"
            ),
            models.CheckConstraint(
                condition=~models.Q(source=models.F("target")), name="memory_link_not_self"
            ),
            models.CheckConstraint(
                condition=models.Q(target__isnull=False, target_entity__isnull=True)
                | models.Q(target__isnull=True, target_entity__isnull=False, relation="about"),
                name="memory_link_one_end",
            ),
        ]
        indexes = [
            models.Index(
                fields=["tenant", "target_entity"],
                condition=models.Q(target_entity__isnull=False),
                name="memory_link_entity_idx",
            )
        ]

    def __str__(self) -> str:
        return f"{self.source_id} {self.relation} {self.target_id or f'entity {self.target_entity_id}'}"


class Entity(models.Model):
    """A tenant's canonical entity (person, organisation, factor…) with its aliases; executor-written.

    A merge is a redirect: the losing entity points at the winner and both
    rows stay, so an unmerge clears the pointer and nothing is lost. Memories
    keep the mention they were written with; resolution follows redirects.
    """

    class Kind(models.TextChoices):
        PERSON = "person"
        ORGANISATION = "organisation"
        FACTOR = "factor"
        INSTRUMENT = "instrument"
        PROJECT = "project"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.PROTECT, related_name="+")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    name = models.CharField(max_length=300)
    aliases = models.JSONField(default=list)
    redirect_to = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="redirected_from"
    )
    receipt_id = models.UUIDField(help_text="the receipt of the last change")
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    class Meta:
        verbose_name_plural = "entities"
        indexes = [models.Index(fields=["tenant", "kind"], name="entity_tenant_kind")]

    def __str__(self) -> str:
        return f"{self.kind}:{self.name}"

    @property
    def names(self) -> tuple[str, ...]:
        return (self.name, *self.aliases)


class MemoryLineage(models.Model):
    """One source revision a compaction summary (the successor) was derived from; executor-written.

    The successor's evidence bindings are the union of its sources', so a
    fence on any source's evidence fences the summary too. Purging a source
    removes its row (purge means gone) and the summary is re-proposed without
    it; purging the successor removes all of its rows.
    """

    id = models.BigAutoField(primary_key=True)
    tenant = models.ForeignKey(Tenant, on_delete=models.PROTECT, related_name="+")
    successor = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="derived_from")
    source = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="summarised_in")
    source_revision = models.PositiveIntegerField(help_text="The revision the compaction plan froze")
    receipt_id = models.UUIDField(help_text="The compaction's receipt")
    created_at = models.DateTimeField()

    class Meta:
        verbose_name_plural = "memory lineage"
        constraints = [
            models.UniqueConstraint(fields=["successor", "source"], name="memory_lineage_unique"),
            models.CheckConstraint(
                condition=~models.Q(successor=models.F("source")), name="memory_lineage_not_self"
            ),
        ]
        indexes = [models.Index(fields=["tenant", "source"], name="memory_lineage_source_idx")]

    def __str__(self) -> str:
        return f"{self.successor_id} derived from {self.source_id}@{self.source_revision}"


def _moment(value: object) -> datetime | None:
    """A moment from JSON text: an ISO 8601 time (UTC when it names no offset) or date (midnight UTC)."""
    if not isinstance(value, str):
        return None
    try:
        moment = parse_datetime(value)
        if moment is None and (day := parse_date(value)) is not None:
            moment = datetime(day.year, day.month, day.day)
    except ValueError:  # well formed, but no such day or hour
        return None
    if moment is not None and moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment
