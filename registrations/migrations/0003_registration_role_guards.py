"""PostgreSQL: the web role inserts only candidates in draft, never a published registration.

Publishing is the executor's decision (a reviewed publish proposal); 0002
keeps the web role from moving a row to ``active`` or ``superseded``, and
this keeps it from inserting one so, or with a version, a publication time
or a receipt already filled in.
"""

from django.db import migrations

from core.migrations_util import postgres_only

UP = """
CREATE OR REPLACE FUNCTION registrations_registration_insert_guard() RETURNS trigger AS $$
BEGIN
    IF current_user = 'custodian_web' AND (
        NEW.status <> 'draft' OR NEW.version IS NOT NULL
        OR NEW.published_at IS NOT NULL OR NEW.receipt_id IS NOT NULL
    ) THEN
        RAISE EXCEPTION USING MESSAGE = 'the web role inserts draft registrations only (not ' || NEW.status || ')';
    END IF;
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER registrations_registration_insert_guard BEFORE INSERT ON registrations_registration
    FOR EACH ROW EXECUTE FUNCTION registrations_registration_insert_guard();
"""
DOWN = """
DROP TRIGGER IF EXISTS registrations_registration_insert_guard ON registrations_registration;
DROP FUNCTION IF EXISTS registrations_registration_insert_guard();
"""


class Migration(migrations.Migration):
    dependencies = [("registrations", "0002_published_rows_are_fixed")]

    operations = [postgres_only(UP, DOWN)]
