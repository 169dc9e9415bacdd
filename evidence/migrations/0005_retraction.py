"""An erasure may retract a source: each revision becomes invalidated and loses its content.

The one change besides the status that an evidence revision ever takes: its
content becomes exactly ``{"retracted": true}`` and its admission findings
empty, with the status invalidated, in one UPDATE; id, source, number, hash,
author and time stay. Every other content change is refused as before.
Only the executor's role holds UPDATE on the content column
(``setup_db_roles``), so the web role still moves status only.
"""

import importlib

from django.db import migrations

from core.migrations_util import postgres_only

UP = """
CREATE OR REPLACE FUNCTION evidence_revision_moves_forward() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        RAISE EXCEPTION 'evidence revisions are never deleted';
    END IF;
    IF NEW.content = '{"retracted": true}'::jsonb AND OLD.content <> NEW.content
       AND NEW.status = 'invalidated' AND NEW.admission_findings = '[]'::jsonb
       AND (to_jsonb(NEW) - 'status' - 'status_reason' - 'content' - 'admission_findings')
           = (to_jsonb(OLD) - 'status' - 'status_reason' - 'content' - 'admission_findings') THEN
        RETURN NEW;
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
"""
# Going back restores the function as migration 0003 wrote it.
DOWN = importlib.import_module("evidence.migrations.0003_revision_status_moves_forward").UP.split(
    "CREATE TRIGGER"
)[0]


class Migration(migrations.Migration):
    dependencies = [("evidence", "0004_admission_findings")]
    operations = [postgres_only(UP, DOWN)]
