"""Writes memory_core owns outside the executor: an agent's feedback on what a recall served.

Memories themselves change only through ``memory_core.mutations`` (executor only).
"""

import uuid

from django.db import IntegrityError, transaction

from memory_core.errors import FeedbackAlreadyGiven, ItemNotServed, RecallNotFound
from memory_core.models import AccessEvent, RecallFeedback
from tenancy.models import Agent


@transaction.atomic(durable=True)
def record_feedback(
    *, agent: Agent, recall_id: uuid.UUID, memory_id: uuid.UUID, revision: int, verdict: str
) -> RecallFeedback:
    """Record the agent's vote on one item its own recall served, once per memory revision.

    Raises ``RecallNotFound`` (not this agent's search, in this tenant),
    ``ItemNotServed`` (the recall did not serve that revision) and
    ``FeedbackAlreadyGiven``.
    """
    event = AccessEvent.objects.filter(
        pk=recall_id, tenant_id=agent.tenant_id, agent=agent, action=AccessEvent.Action.SEARCH
    ).first()
    if event is None:
        raise RecallNotFound()
    if not event.items.filter(memory_id=memory_id, revision=revision).exists():
        raise ItemNotServed(memory_id=str(memory_id), revision=revision)
    feedback = RecallFeedback(
        tenant_id=agent.tenant_id,
        recall=event,
        agent=agent,
        memory_id=memory_id,
        revision=revision,
        verdict=verdict,
    )
    feedback.full_clean(validate_constraints=False)
    try:
        with transaction.atomic():
            feedback.save()
    except IntegrityError:
        raise FeedbackAlreadyGiven(memory_id=str(memory_id), revision=revision) from None
    return feedback
