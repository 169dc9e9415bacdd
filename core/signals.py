"""Signals of the shared kernel.

``request_denied`` is sent for every refused request (401, 403, 404, 429)
so it can be audited; kwargs: request (Django's), status, code.

``proposals_submitted`` and ``receipts_appended`` are sent once their transaction has
committed, so observers (the ``metrics`` app) count what exists without the apps that write
importing them; kwargs: ``verdicts`` (``(classification, rule id)`` pairs) and ``outcomes``
(receipt outcomes). Both carry labels only, never ids or content.
"""

from django.dispatch import Signal

request_denied = Signal()
proposals_submitted = Signal()
receipts_appended = Signal()
