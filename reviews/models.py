"""Review decisions: who decided what, for whom, why, on exactly which action."""

import uuid
from typing import Any

from django.conf import settings
from django.db import models
from django.utils.crypto import constant_time_compare
from simple_history.models import HistoricalRecords

from core.history import human_history_user
from core.keyed import keyed_digest
from core.models import AppendOnlyModel
from core.pseudonyms import pseudonymised
from proposals.models import Proposal
from tenancy.models import Tenant


class ReviewDecision(AppendOnlyModel):
    """One person's decision on one frozen action (``action_digest``). Immutable.

    A decision counts only while its digest is the proposal's current one;
    an amendment makes it stale. ``actor`` is who decided, ``represented_owner``
    whom they decided for (Gerrit's on-behalf-of), recorded separately.
    """

    class Decision(models.TextChoices):
        APPROVE = "approve"
        REJECT = "reject"
        REQUEST_CHANGES = "request_changes"

    class Channel(models.TextChoices):
        UI = "ui"
        API = "api"
        BULK = "bulk"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.PROTECT, related_name="+")
    proposal = models.ForeignKey(Proposal, on_delete=models.PROTECT, related_name="decisions")
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="review_decisions"
    )
    represented_owner = models.CharField(max_length=200)
    decision = models.CharField(max_length=16, choices=Decision.choices)
    reason = models.TextField()
    action_digest = models.CharField(max_length=64)
    proposal_version = models.PositiveIntegerField()
    policy_fingerprint = models.CharField(max_length=64)
    channel = models.CharField(max_length=8, choices=Channel.choices)
    created_at = models.DateTimeField(auto_now_add=True)
    seal = models.CharField(
        max_length=64,
        blank=True,
        default="",
        db_default="",
        help_text="Keyed digest by the deciding process: who decided what on which action",
    )
    # 1 where not said (rows, and exported rows, from before version 2); record_decision says 2.
    seal_version = models.PositiveSmallIntegerField(
        default=1,
        db_default=1,
        help_text="What the seal covers: 1, who decided what on which action; 2, also whom for, by pseudonym",
    )

    history = HistoricalRecords(get_user=human_history_user)
    # Not a column: ``reviews.selectors.decision_history`` marks a decision made on an older digest.
    stale: bool

    class Meta:
        ordering = ["created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["proposal", "actor", "action_digest"], name="decision_one_per_actor_per_digest"
            ),
            models.CheckConstraint(condition=~models.Q(reason=""), name="decision_reason_not_blank"),
        ]
        indexes = [
            models.Index(fields=["proposal", "action_digest", "decision"], name="decision_digest_idx"),
            models.Index(fields=["tenant", "-created_at"], name="decision_recent_idx"),
            models.Index(fields=["actor", "-created_at"], name="decision_actor_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.decision} by {self.actor_id} on {self.proposal_id}"

    def is_stale_for(self, proposal: Proposal) -> bool:
        """True once the proposal was amended after this decision."""
        return self.action_digest != proposal.action_digest

    def compute_seal(self) -> str:
        """Seal the decision with the server's key; the executor counts only sealed approvals."""
        return decision_seal(self._sealed_json())

    def has_valid_seal(self) -> bool:
        """True if a Custodian process recorded exactly this decision (needs ``actor`` loaded)."""
        return self._sealing_secret() is not None

    def owner_pseudonym(self) -> str:
        """Return the owner's pseudonym as an erasure writes it: under the key this decision was
        sealed with (if it has since been rotated, so the seal still verifies), else the current key."""
        return pseudonymised(self.represented_owner, secret=self._sealing_secret())

    def _sealing_secret(self) -> str | bytes | None:
        """The key (current or a fallback) under which the seal verifies, or None if it does not.

        Each key is tried with the owner's pseudonym under that same key, since a version 2
        seal covers it.
        """
        if not self.seal:
            return None
        for secret in [settings.SECRET_KEY, *settings.SECRET_KEY_FALLBACKS]:
            if constant_time_compare(
                self.seal, decision_seal(self._sealed_json(secret=secret), secret=secret)
            ):
                return secret
        return None

    def _sealed_json(self, *, secret: str | bytes | None = None) -> dict[str, str]:
        # The actor by username, the key that survives export and import. Version 2 adds whom the
        # decision was for as its pseudonym, the form an erasure leaves, so the seal outlives it.
        sealed = {
            "id": str(self.id),
            "tenant_id": str(self.tenant_id),
            "proposal_id": str(self.proposal_id),
            "actor": self.actor.get_username(),
            "decision": self.decision,
            "action_digest": self.action_digest,
        }
        if self.seal_version != 1:
            sealed["seal_version"] = str(self.seal_version)
            sealed["represented_owner"] = pseudonymised(self.represented_owner, secret=secret)
        return sealed


DECISION_SEAL = "reviews.decision"
SEAL_VERSION = 2  # what record_decision seals now: who decided what on which action, for whom


def decision_seal(sealed: dict[str, Any], *, secret: str | bytes | None = None) -> str:
    """Return the seal of a decision given as its sealed JSON (migrations use it)."""
    return keyed_digest(DECISION_SEAL, sealed, secret=secret)
