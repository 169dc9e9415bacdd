"""Create the least-privilege PostgreSQL roles and grant each exactly what its process writes.

custodian_web       the web/API process (and its admin): reads everything; writes
                    people, sessions and object permissions (the admin manages
                    them), evidence (revision status only, never content),
                    proposals, decisions, outbox rows, access events and recall
                    feedback; cannot write memories, their history or evidence
                    links, receipts or chain heads at all.
custodian_executor  the Celery executor: the only role that writes memories and
                    their vectors; may INSERT receipts but never UPDATE or
                    DELETE them; writes
                    proposals (outcomes, retention and system proposals, purge
                    scrubs) and outbox rows; no write at all on people, groups,
                    permissions, tokens or sessions; on evidence only an
                    erasure's retraction of a source; on grants, decisions and
                    the admin's log only an erasure's revoking and pseudonymising;
                    and its own heartbeat (``health``), which the web role only reads.

Both record the notifications their events cause (webhook deliveries, reviewer email); the web
role manages endpoints and preferences and may only make a delivery due again (a replay); the
worker, which also delivers, settles deliveries and appends attempts that no role rewrites.

A row that records an authority decision is written only by the role that
made the decision. Where a role needs a table but not every state of its
rows, a trigger holds the line: the web role inserts registrations only as
drafts and never makes one active (``registrations`` 0002, 0003), and inserts
chain verifications only as queued requests, never a result (``executor`` 0016).

Append-only tables refuse UPDATE and DELETE by trigger for every role too
(receipts, decisions and their history, grants' history, access events and
their items), but for the one change an erasure makes: a person's id becomes
its pseudonym (``reviews`` 0006, ``tenancy`` 0011); a grant otherwise changes
only by being revoked or expiring. Evidence status only moves forward
(``evidence`` migration 0003).

Every table must be listed below or the command fails: a new table gets no
write privilege by accident. Migrations keep running as the owner (the URL's
own user). Run after migrate.
"""

from typing import Any

from django.core.management.base import BaseCommand, CommandError
from django.db import connection

WEB, EXECUTOR = "custodian_web", "custodian_executor"
MANAGED_BY_ADMIN = "INSERT, UPDATE, DELETE"

WEB_WRITES = {
    "auth_group": MANAGED_BY_ADMIN,
    "auth_group_permissions": MANAGED_BY_ADMIN,
    "auth_user": MANAGED_BY_ADMIN,  # and last_login on every login
    "auth_user_groups": MANAGED_BY_ADMIN,
    "auth_user_user_permissions": MANAGED_BY_ADMIN,
    "django_admin_log": MANAGED_BY_ADMIN,
    "django_session": MANAGED_BY_ADMIN,
    "guardian_groupobjectpermission": MANAGED_BY_ADMIN,
    "guardian_userobjectpermission": MANAGED_BY_ADMIN,
    "tenancy_tenant": MANAGED_BY_ADMIN,
    "tenancy_agent": MANAGED_BY_ADMIN,
    "tenancy_agenttoken": MANAGED_BY_ADMIN,
    "tenancy_usertoken": MANAGED_BY_ADMIN,
    "tenancy_deniedrequest": "INSERT, UPDATE",  # counted in place (a trigger allows the counter only)
    "tenancy_delegation": "INSERT, UPDATE (revoked_at)",  # operators grant in the admin and revoke
    "tenancy_historicaldelegation": "INSERT",
    "evidence_evidencesource": "INSERT, UPDATE",
    "evidence_evidencerevision": "INSERT, UPDATE (status, status_reason)",
    "proposals_proposal": "INSERT, UPDATE",
    "proposals_historicalproposal": "INSERT",
    # An amendment replaces its evidence links; blocking proposals on invalidated evidence locks
    # them (SELECT … FOR UPDATE over the join), which takes UPDATE.
    "proposals_proposalevidence": "INSERT, UPDATE, DELETE",
    "reviews_reviewdecision": "INSERT",
    "reviews_historicalreviewdecision": "INSERT",
    "proposals_outboxentry": "INSERT, UPDATE (updated_at)",  # UPDATE only to lock a dead entry to requeue it
    "memory_core_accessevent": "INSERT",
    "memory_core_accesseventitem": "INSERT",
    "memory_core_memoryreads": "INSERT, UPDATE (reads)",  # a get counts one read (ranking's activation)
    "memory_core_recallfeedback": "INSERT",  # an agent's vote on a recalled item (append-only)
    "executor_chainverification": "INSERT",  # a queued "verify now" only (trigger); never a result
    "mgp_mgprecord": "INSERT, UPDATE, DELETE",  # an MGP id, freed when its proposal fails or memory is purged
    "mgp_mgptask": "INSERT, UPDATE",  # an MGP task follows its proposal
    "mgp_mgpevent": "INSERT",  # MGP refusals and bulk reads no other row records (append-only)
    # Operators draft, edit and validate candidates and ask to publish them; only the executor
    # makes one active (version, published_at and receipt_id are the executor's columns; the web
    # role inserts drafts only, by trigger).
    "registrations_registration": "INSERT, UPDATE (document, fingerprint, status, validation, updated_at)",
    # Operators manage their tenants' webhook endpoints; the events the web process causes
    # (submissions, decisions, invalidated evidence) insert deliveries, and a replay makes one due again.
    "notifications_webhookendpoint": MANAGED_BY_ADMIN,
    "notifications_emailpreference": MANAGED_BY_ADMIN,  # each person's choice, or an operator's
    "notifications_emaildelivery": "INSERT",  # reviewers' messages about the web's events
    "notifications_webhookdelivery": "INSERT, UPDATE (status, attempts, next_attempt_at, lease_expires_at)",
}
EXECUTOR_WRITES = {
    "proposals_outboxentry": "INSERT, UPDATE",  # INSERT: proposals it makes itself may release at once
    "executor_receipt": "INSERT",
    "executor_tenantexport": "INSERT",  # export_tenant records each export of content it writes
    # An erasure of a source retracts it: each revision invalidated, its content the retracted
    # marker (a trigger allows exactly that), the source's reference blanked.
    "evidence_evidencerevision": "UPDATE (content, status, status_reason, admission_findings)",
    "evidence_evidencesource": "UPDATE (external_ref)",
    "executor_receiptchain": "INSERT, UPDATE",  # and the last signed checkpoint (checkpoint_receipts)
    "executor_chainverification": "UPDATE",  # the result of a "verify now"
    "memory_core_memory": "INSERT, UPDATE, DELETE",
    "memory_core_historicalmemory": "INSERT, UPDATE, DELETE",
    "memory_core_memoryevidence": "INSERT, DELETE",
    "memory_core_entity": "INSERT, UPDATE (redirect_to_id, receipt_id, updated_at)",  # merges are redirects
    "memory_core_memorylink": "INSERT, DELETE",  # allowlisted links; a purge of either end removes them
    "memory_core_memoryvector": "INSERT, DELETE",  # embedded when a revision is applied; purged with it
    "memory_core_memorylineage": "INSERT, DELETE",  # compaction lineage; a purge of a source removes its row
    # BM25 statistics, kept by triggers on memories in the executor's own transaction.
    "memory_core_searchcorpus": "INSERT, UPDATE",
    "memory_core_searchterm": "INSERT, UPDATE, DELETE",
    "memory_core_accessevent": "UPDATE (query)",  # a purge blanks the queries that served the memory
    "proposals_proposal": "INSERT, UPDATE",
    "proposals_historicalproposal": "INSERT, UPDATE",
    "proposals_proposalevidence": "INSERT",
    # Bounded Dreaming runs (the beat task runs in the executor's worker); the executor closes a
    # run stale when its window moved (and locks it, which takes UPDATE); a purge of a member
    # blanks its subject and planned content.
    "proposals_dreamingrun": "INSERT, UPDATE (subject_id, plan, closed, closed_reason, closed_at)",
    "tenancy_agent": "INSERT",  # a tenant's system agent, on its first retention sweep
    # An erasure of a subject revokes the grants to act for them, and it and the records of
    # authority that name them (decisions made for them, history, the admin's log of the grant)
    # keep only their pseudonym; triggers allow a clear id to become a pseudonym, nothing else.
    "tenancy_delegation": "UPDATE (subject_id, revoked_at)",
    "tenancy_historicaldelegation": "INSERT, UPDATE (subject_id)",
    "reviews_reviewdecision": "UPDATE (represented_owner)",
    "reviews_historicalreviewdecision": "UPDATE (represented_owner)",
    "django_admin_log": "UPDATE (object_repr)",
    "registrations_registration": "UPDATE (status, version, published_at, receipt_id, updated_at)",  # publish
    # A purge removes the memory's MGP id and scrubs the MGP tasks naming it (mgp's memory_purged receiver).
    "mgp_mgprecord": "DELETE",
    "mgp_mgptask": "UPDATE (request, result, subject_kind, subject_id, updated_at)",
    "mgp_mgpevent": "UPDATE (target)",  # and blanks the MGP id the refusals named (append-only otherwise)
    "health_workerheartbeat": "INSERT, UPDATE, DELETE",  # when each worker node was last seen (GET /readyz)
    # The worker records the events it causes (receipts, fences, expiries) and delivers every
    # delivery: it claims, counts and settles them, and appends each attempt (never rewritten).
    "notifications_webhookdelivery": "INSERT, UPDATE",
    "notifications_deliveryattempt": "INSERT",
    "notifications_emaildelivery": "INSERT, UPDATE",
    "notifications_announcement": "INSERT",  # proposal.expiring, announced once by the beat sweep
}
READ_ONLY = {"auth_permission", "django_content_type", "django_migrations"}  # written by migrate only
GRANTS = {WEB: WEB_WRITES, EXECUTOR: EXECUTOR_WRITES}


class Command(BaseCommand):
    help = "Create custodian_web and custodian_executor roles with least-privilege grants (PostgreSQL)."

    def handle(self, *args: Any, **options: Any) -> None:
        if connection.vendor != "postgresql":
            raise CommandError("Database roles need PostgreSQL")
        tables = connection.introspection.table_names()
        unlisted = sorted(set(tables) - set(WEB_WRITES) - set(EXECUTOR_WRITES) - READ_ONLY)
        if unlisted:
            raise CommandError(f"No grants decided for {', '.join(unlisted)}: add them to setup_db_roles")
        with connection.cursor() as cursor:
            for role, writes in GRANTS.items():
                cursor.execute(
                    "DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = %s) THEN "
                    f"CREATE ROLE {role} LOGIN; END IF; END $$;",
                    [role],
                )
                cursor.execute(f'GRANT CONNECT ON DATABASE "{connection.settings_dict["NAME"]}" TO {role}')
                cursor.execute(f"GRANT USAGE ON SCHEMA public TO {role}")
                cursor.execute(f"REVOKE ALL ON ALL TABLES IN SCHEMA public FROM {role}")
                cursor.execute(f"REVOKE ALL ON ALL SEQUENCES IN SCHEMA public FROM {role}")
                cursor.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {role}")
                for table, privileges in writes.items():
                    if table in tables:
                        cursor.execute(f'GRANT {privileges} ON "{table}" TO {role}')
                        if "INSERT" in privileges:
                            _grant_sequences(cursor, table, role)
        self.stdout.write(f"Roles {WEB} and {EXECUTOR} ready on {len(tables)} tables")


def _grant_sequences(cursor: Any, table: str, role: str) -> None:
    """Let ``role`` draw ids for ``table`` (serial columns; identity columns need nothing)."""
    cursor.execute(
        "SELECT pg_get_serial_sequence(%s, attname) FROM pg_attribute"
        " WHERE attrelid = %s::regclass AND attnum > 0 AND NOT attisdropped",
        [f'"{table}"', f'"{table}"'],
    )
    for (sequence,) in cursor.fetchall():
        if sequence:
            cursor.execute(f"GRANT USAGE ON SEQUENCE {sequence} TO {role}")
