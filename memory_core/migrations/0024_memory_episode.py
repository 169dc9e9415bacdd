"""Store each memory's episode (the first evidence source its revision rests on) on the row."""

from django.db import migrations, models
from django.db.models import OuterRef, Subquery


def place_in_episodes(apps, schema_editor):
    """Each row's episode: the source of the first evidence link of its revision."""
    MemoryEvidence = apps.get_model("memory_core", "MemoryEvidence")
    # History rows too: point-in-time recall shows a revision's neighbours in its own episode.
    for model in ("Memory", "HistoricalMemory"):
        first = (
            MemoryEvidence.objects.filter(memory_id=OuterRef("id"), memory_revision=OuterRef("revision"))
            .order_by("id")
            .values("evidence_revision__source_id")[:1]
        )
        apps.get_model("memory_core", model).objects.update(episode=Subquery(first))


class Migration(migrations.Migration):
    dependencies = [
        ("memory_core", "0023_search_index_without_pending_list"),
        ("tenancy", "0011_delegations_pseudonymisable"),
    ]

    operations = [
        migrations.AddField(
            model_name="historicalmemory",
            name="episode",
            field=models.UUIDField(blank=True, editable=False, null=True),
        ),
        migrations.AddField(
            model_name="memory",
            name="episode",
            field=models.UUIDField(blank=True, editable=False, null=True),
        ),
        migrations.RunPython(place_in_episodes, migrations.RunPython.noop, elidable=True),
        migrations.AddIndex(
            model_name="memory",
            index=models.Index(
                condition=models.Q(("episode__isnull", False)),
                fields=["episode", "happened_at", "submission_index"],
                name="memory_episode_idx",
            ),
        ),
    ]
