"""Access events record the version of the ranking weights a search ranked with.

Adding a column with a constant default rewrites no row, so the append-only
trigger (0007) is not involved; existing events keep an empty version.
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("memory_core", "0009_search_statistics")]

    operations = [
        migrations.AddField(
            model_name="accessevent",
            name="ranking_version",
            field=models.CharField(blank=True, default="", max_length=32),
        ),
    ]
