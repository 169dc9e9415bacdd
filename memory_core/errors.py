"""Refusals of recall feedback, each with a stable code."""

from core.errors import DomainError, NotFound


class RecallNotFound(NotFound):
    """No search by this agent has this id (another agent's or tenant's recall looks the same)."""

    code = "recall_not_found"
    title = "Recall not found"


class ItemNotServed(DomainError):
    """The recall never served this memory revision."""

    code = "item_not_served"
    status = 422
    title = "This recall did not serve that memory revision"


class FeedbackAlreadyGiven(DomainError):
    """The agent already voted on this memory revision."""

    code = "feedback_already_given"
    status = 409
    title = "Feedback on this memory revision was already given"
