"""Evidence revisions are immutable and their status only moves forward, for every database role.

valid → superseded | invalidated, superseded → invalidated; invalidated is
final; no column but status (and its reason, with it) ever changes; rows are
never deleted. Un-invalidating a revision would silently un-fence every
memory resting on it.
"""

from django.db import migrations

from core.migrations_util import postgres_only

UP = """
CREATE OR REPLACE FUNCTION evidence_revision_moves_forward() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        RAISE EXCEPTION 'evidence revisions are never deleted';
    END IF;
    IF (to_jsonb(NEW) - 'status' - 'status_reason') <> (to_jsonb(OLD) - 'status' - 'status_reason') THEN
        RAISE EXCEPTION USING MESSAGE = 'evidence revision ' || OLD.id || ' is immutable; only its status moves forward';
    END IF;
    IF NEW.status = OLD.status AND NEW.status_reason = OLD.status_reason AND OLD.status <> 'invalidated' THEN
        RETURN NEW;
    END IF;
    IF (OLD.status = 'valid' AND NEW.status IN ('superseded', 'invalidated'))
       OR (OLD.status = 'superseded' AND NEW.status = 'invalidated') THEN
        RETURN NEW;
    END IF;
    RAISE EXCEPTION USING MESSAGE = 'evidence status only moves forward: '
        || OLD.status || ' cannot become ' || NEW.status || ' (revision ' || OLD.id || ')';
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER evidence_revision_moves_forward BEFORE UPDATE OR DELETE ON evidence_evidencerevision
    FOR EACH ROW EXECUTE FUNCTION evidence_revision_moves_forward();
"""
DOWN = """
DROP TRIGGER IF EXISTS evidence_revision_moves_forward ON evidence_evidencerevision;
DROP FUNCTION IF EXISTS evidence_revision_moves_forward();
"""


class Migration(migrations.Migration):
    dependencies = [("evidence", "0002_alter_evidencerevision_options")]
    operations = [postgres_only(UP, DOWN)]
