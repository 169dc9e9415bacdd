"""Create the least-privilege PostgreSQL roles and grant each exactly what it needs.

custodian_web       the web/API process: reads everything; writes proposals,
                    evidence, decisions, outbox rows and audit events; cannot
                    write memories, their history or evidence links, receipts
                    or chain heads at all.
custodian_executor  the Celery executor: the only role that writes memories;
                    may INSERT receipts but never UPDATE or DELETE them.

Migrations keep running as the owner (the URL's own user). Run after migrate.
"""

from django.core.management.base import BaseCommand, CommandError
from django.db import connection

WEB, EXECUTOR = "custodian_web", "custodian_executor"
MEMORY_TABLES = ["memory_core_memory", "memory_core_historicalmemory", "memory_core_memoryevidence"]
RECEIPT_TABLES = ["executor_receipt", "executor_receiptchain"]
APPEND_ONLY = ["executor_receipt", "reviews_reviewdecision"]
COUNTED_IN_PLACE = ["tenancy_deniedrequest"]  # rows take a counter UPDATE, never a DELETE


class Command(BaseCommand):
    help = "Create custodian_web and custodian_executor roles with least-privilege grants (PostgreSQL)."

    def handle(self, *args, **options):
        if connection.vendor != "postgresql":
            raise CommandError("Database roles need PostgreSQL")
        tables = connection.introspection.table_names()
        with connection.cursor() as cursor:
            for role in (WEB, EXECUTOR):
                cursor.execute(
                    "DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = %s) THEN "
                    f"CREATE ROLE {role} LOGIN; END IF; END $$;",
                    [role],
                )
                cursor.execute(f'GRANT CONNECT ON DATABASE "{connection.settings_dict["NAME"]}" TO {role}')
                cursor.execute(f"GRANT USAGE ON SCHEMA public TO {role}")
                cursor.execute(f"REVOKE ALL ON ALL TABLES IN SCHEMA public FROM {role}")
                cursor.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {role}")
                cursor.execute(f"GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO {role}")
            for table in tables:
                web = table not in MEMORY_TABLES + RECEIPT_TABLES
                writes = "INSERT" if table in APPEND_ONLY else "INSERT, UPDATE, DELETE"
                writes = "INSERT, UPDATE" if table in COUNTED_IN_PLACE else writes
                if web:
                    cursor.execute(f'GRANT {writes} ON "{table}" TO {WEB}')
                cursor.execute(f'GRANT {writes} ON "{table}" TO {EXECUTOR}')
            cursor.execute(f"GRANT UPDATE ON executor_receiptchain TO {EXECUTOR}")
        self.stdout.write(f"Roles {WEB} and {EXECUTOR} ready on {len(tables)} tables")
