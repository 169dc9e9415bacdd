"""PostgreSQL guards on registrations, for every role: published documents never change.

Rows are never deleted. A draft's or validated candidate's document may be
edited; once requested, active or superseded it is fixed. Only an active row
may become superseded, and only a requested one active, and never by the web
role (``custodian_web`` drafts and requests; only the executor publishes).
"""

from django.db import migrations

from core.migrations_util import postgres_only

UP = """
CREATE OR REPLACE FUNCTION registrations_registration_guard() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        RAISE EXCEPTION 'registrations are never deleted';
    END IF;
    IF (NEW.document IS DISTINCT FROM OLD.document OR NEW.fingerprint IS DISTINCT FROM OLD.fingerprint)
       AND OLD.status NOT IN ('draft', 'validated') THEN
        RAISE EXCEPTION USING MESSAGE = 'the document of a ' || OLD.status || ' registration is fixed';
    END IF;
    IF NEW.status IS DISTINCT FROM OLD.status AND (
        OLD.status = 'superseded'
        OR (OLD.status = 'active' AND NEW.status <> 'superseded')
        OR (NEW.status = 'superseded' AND OLD.status <> 'active')
        OR (NEW.status = 'active' AND OLD.status <> 'requested')
        OR (NEW.status IN ('active', 'superseded') AND current_user = 'custodian_web')
    ) THEN
        RAISE EXCEPTION USING MESSAGE = 'a registration cannot move from ' || OLD.status || ' to ' || NEW.status;
    END IF;
    IF NEW.version IS DISTINCT FROM OLD.version AND OLD.version IS NOT NULL THEN
        RAISE EXCEPTION 'a published version number is fixed';
    END IF;
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER registrations_registration_guard BEFORE UPDATE OR DELETE ON registrations_registration
    FOR EACH ROW EXECUTE FUNCTION registrations_registration_guard();
"""
DOWN = """
DROP TRIGGER IF EXISTS registrations_registration_guard ON registrations_registration;
DROP FUNCTION IF EXISTS registrations_registration_guard();
"""


class Migration(migrations.Migration):
    dependencies = [("registrations", "0001_initial")]

    operations = [postgres_only(UP, DOWN)]
