"""Signals of the memory layer, for the apps above it that keep their own rows about memories.

``memory_purged`` is sent by the executor inside a purge's transaction, after
the memory and everything of it below the executor are gone; kwargs:
``tenant_id`` and ``memory_ids``. A receiver removes what its app kept about
those memories and returns ``{"app.Model": rows}`` for the purge receipt; if
it raises, the whole purge rolls back, so nothing is half-purged.
"""

from django.dispatch import Signal

memory_purged = Signal()
