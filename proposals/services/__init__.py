"""Proposals own submission, classification and the proposal state machine.

``submit_proposal`` is the only way a proposal comes to exist; the other
public functions are the steps other apps take on proposals.
"""

from proposals.services.batch import BatchItem, submit_proposals
from proposals.services.purge import scrub_purged_content, withdraw_for_erasure
from proposals.services.submission import Submission, amend_proposal, submit_proposal, withdraw_proposal
from proposals.services.workflow import (
    conclude_review,
    escalate_to_review,
    expire_overdue_reviews,
    record_executions,
)

__all__ = [
    "BatchItem",
    "Submission",
    "amend_proposal",
    "conclude_review",
    "escalate_to_review",
    "expire_overdue_reviews",
    "record_executions",
    "scrub_purged_content",
    "submit_proposal",
    "submit_proposals",
    "withdraw_for_erasure",
    "withdraw_proposal",
]
