"""Embed the current revision of every recallable memory that has no vector from the active embedder.

For memories applied before ``CUSTODIAN_EMBEDDER`` was set (or changed), and
after ``import_tenant`` (vectors are derived, not exported). Runs as the
executor: it writes through ``memory_core.mutations.write_vectors``, one
transaction per batch. Until it has run, such memories rank without the
dense signal (their explanation says "no vector for this revision").
"""

from typing import Any

from django.core.management.base import BaseCommand
from django.db import transaction

from memory_core.embeddings import active_embedder
from memory_core.models import Memory
from memory_core.mutations import write_vectors
from memory_core.selectors import revisions_without_vector

BATCH = 100


class Command(BaseCommand):
    help = "Embed current memory revisions that have no vector from the active embedder."

    def handle(self, *args: Any, **options: Any) -> None:
        embedder = active_embedder()
        if not embedder.dimensions:
            self.stdout.write("CUSTODIAN_EMBEDDER is none: nothing to embed")
            return
        missing = revisions_without_vector(embedder=embedder.name).values_list("pk", flat=True)
        ids, stored = list(missing), 0
        for start in range(0, len(ids), BATCH):
            with transaction.atomic():
                stored += write_vectors(list(Memory.objects.filter(pk__in=ids[start : start + BATCH])))
        self.stdout.write(f"{stored} revisions embedded with {embedder.name}")
