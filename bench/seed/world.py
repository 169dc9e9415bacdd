"""What every seeded row shares: the real engine's verdicts, the agent's proposals, the reviewers.

Apart so the three seeders and the floor build proposals one way, each kind
classified once by ``freeze_and_classify``.
"""

import os
import random
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.contrib.auth import get_user_model
from guardian.shortcuts import assign_perm

from bench.seed.rows import new
from bench.textgen import TextGenerator, frozen_fields
from bench.world import grant_users
from core.canonical import digest
from evidence.models import EvidenceRevision
from proposals.models import Proposal, ProposalEvidence
from proposals.services.freezing import freeze_and_classify
from reviews.selectors import DECIDE
from tenancy.models import Agent, Tenant


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
        # Preferences are seeded as said by their users, through an agent they delegated to.
        grant_users(self.agent, self.text.users)
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
            target_id=self.new_id(),
            base_revision=0,
            fields=fields,
            evidence=frozen.bindings,
            # What bind_policy_context returns; __post_init__ granted every subject acted for.
            policy_context={
                **frozen.context,
                "tenant_id": str(self.agent.tenant_id),
                "actor_agent": self.agent.name,
            },
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
        proposal.verdict_seal = proposal.compute_verdict_seal()  # as submission seals it
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
