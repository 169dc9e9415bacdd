"""Signals proposals send; the executor listens.

``proposal_released`` is sent inside the transaction that makes a proposal
executable. The executor's receiver writes the outbox row in that same
transaction, so the dependency arrow still points from executor to
proposals and a release can never commit without its outbox row.
"""

from django.dispatch import Signal

# kwargs: proposal, available_at
proposal_released = Signal()
