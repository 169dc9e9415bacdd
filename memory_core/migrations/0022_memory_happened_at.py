"""Store when each memory's content happened, so an episode is ordered by the database."""

from django.db import migrations, models
from django.db.models.functions import Coalesce

from memory_core.models import _moment

BATCH = 2000


def place_in_time(apps, schema_editor):
    """As ``Memory.place_in_time``: the content's ``occurred_at``, else the submission."""
    Memory = apps.get_model("memory_core", "Memory")
    Memory.objects.update(happened_at=Coalesce("submitted_at", "created_at"))
    told = Memory.objects.filter(content__has_key="occurred_at").values_list("pk", "content__occurred_at")
    placed = []
    for pk, occurred_at in told.iterator(chunk_size=BATCH):
        if (moment := _moment(occurred_at)) is not None:
            placed.append(Memory(pk=pk, happened_at=moment))
        if len(placed) == BATCH:
            Memory.objects.bulk_update(placed, ["happened_at"])
            placed = []
    Memory.objects.bulk_update(placed, ["happened_at"])


class Migration(migrations.Migration):
    dependencies = [
        ("memory_core", "0021_submission_order"),
    ]

    operations = [
        migrations.AddField(
            model_name="historicalmemory",
            name="happened_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="memory",
            name="happened_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.RunPython(place_in_time, migrations.RunPython.noop, elidable=True),
    ]
