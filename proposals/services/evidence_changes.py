"""When evidence changes, what rests on it follows, in the same transaction.

Invalidating a revision blocks the open proposals that cite it and proposes
fences for the memories resting on it; a new revision of a source proposes
revalidating the memories its invalidated revisions fenced. Both are direct
calls, so the whole consequence reads top to bottom here.
"""

from typing import Any

from django.db import transaction

from evidence.models import EvidenceRevision, EvidenceSource
from evidence.services import append_revision, mark_invalidated
from proposals.services.system_proposals import block_proposals_citing, propose_fences, propose_revalidations
from tenancy.models import Agent


@transaction.atomic(durable=True)
def add_evidence_revision(*, source: EvidenceSource, agent: Agent, content: Any) -> EvidenceRevision:
    """Append revision n+1 (n becomes superseded) and propose revalidating what an invalidation fenced."""
    revision = append_revision(source=source, agent=agent, content=content)
    propose_revalidations(revision)
    return revision


@transaction.atomic(durable=True)
def invalidate_evidence_revision(*, revision: EvidenceRevision, reason: str) -> EvidenceRevision:
    """Invalidate one revision (e.g. the backtest had a look-ahead bug); block and fence what rests on it."""
    revision, changed = mark_invalidated(revision=revision, reason=reason)
    if changed:
        block_proposals_citing(revision)
        propose_fences(revision)
    return revision
