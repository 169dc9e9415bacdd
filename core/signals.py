"""Signals of the shared kernel.

``request_denied`` is sent for every refused request (401, 403, 404, 429)
so it can be audited; kwargs: request (Django's), status, code.
"""

from django.dispatch import Signal

request_denied = Signal()
