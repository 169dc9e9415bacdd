"""``Proposal.target_memory_id`` becomes ``target_id``: it also names entities and registration
candidates. State only: the column keeps its name, so no table is rewritten."""

from django.db import migrations, models

HELP = "The memory (an entity for entity actions, a candidate for register); assigned for create"


class Migration(migrations.Migration):
    dependencies = [("proposals", "0013_outbox_lease_holder")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RemoveIndex("proposal", "proposal_target_idx"),
                migrations.RenameField("proposal", "target_memory_id", "target_id"),
                migrations.AlterField(
                    "proposal",
                    "target_id",
                    models.UUIDField(db_column="target_memory_id", help_text=HELP),
                ),
                migrations.AddIndex(
                    "proposal",
                    models.Index(fields=["tenant", "target_id", "status"], name="proposal_target_idx"),
                ),
                migrations.RenameField("historicalproposal", "target_memory_id", "target_id"),
                migrations.AlterField(
                    "historicalproposal",
                    "target_id",
                    models.UUIDField(db_column="target_memory_id", help_text=HELP),
                ),
            ],
        ),
    ]
