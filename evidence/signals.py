"""Signals evidence sends inside its transactions; proposals listens and fences or revalidates.

kwargs: ``revision`` (evidence_invalidated); ``revision`` and ``source`` (evidence_revised).
"""

from django.dispatch import Signal

evidence_invalidated = Signal()
evidence_revised = Signal()
