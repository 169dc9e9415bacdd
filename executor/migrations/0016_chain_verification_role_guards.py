"""PostgreSQL: the web role queues a chain verification; it never inserts a result.

"Verify now" in the admin inserts a ``queued`` row and a Celery task on the
executor records how it went (``custodian_web`` holds no UPDATE). Without
this a web-role INSERT could name any status, progress or problems.
"""

from django.db import migrations

from core.migrations_util import postgres_only

UP = """
CREATE OR REPLACE FUNCTION executor_chainverification_insert_guard() RETURNS trigger AS $$
BEGIN
    IF current_user = 'custodian_web' AND (
        NEW.status <> 'queued' OR NEW.started_at IS NOT NULL OR NEW.finished_at IS NOT NULL
        OR NEW.head_seq IS NOT NULL OR NEW.receipts <> 0 OR NEW.total <> 0
        OR NEW.problems IS DISTINCT FROM '[]'::jsonb
    ) THEN
        RAISE EXCEPTION 'the web role queues chain verifications only; the executor records results';
    END IF;
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER executor_chainverification_insert_guard BEFORE INSERT ON executor_chainverification
    FOR EACH ROW EXECUTE FUNCTION executor_chainverification_insert_guard();
"""
DOWN = """
DROP TRIGGER IF EXISTS executor_chainverification_insert_guard ON executor_chainverification;
DROP FUNCTION IF EXISTS executor_chainverification_insert_guard();
"""


class Migration(migrations.Migration):
    dependencies = [("executor", "0015_receipt_compaction_idx")]

    operations = [postgres_only(UP, DOWN)]
