"""Least privilege in the database: each role writes only what its process needs.

Append-only tables refuse UPDATE and DELETE by trigger, for every role
including the owner; evidence status only moves forward, also by trigger.
"""

import psycopg
import pytest
from django.core.management import call_command
from django.db import connection

from evidence.models import EvidenceRevision
from provenance.services import invalidate_evidence_revision
from tests.factories import approve, create_payload, factor_fact, make_evidence, make_person, submit
from tests.workers import connect_as as _connect

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]
OWNER, WEB, EXECUTOR = None, "custodian_web", "custodian_executor"
REFUSED = (psycopg.errors.InsufficientPrivilege, psycopg.errors.RaiseException)


@pytest.fixture
def roles(applied_memory):
    call_command("setup_db_roles")
    return applied_memory


@pytest.fixture
def audited(roles, agent, api):
    """A row in every append-only table: a decision (and its history), a search with items and a
    vote on one, receipts."""
    proposal = submit(agent.agent, create_payload(factor_fact(), [make_evidence(agent.agent)]))
    approve(make_person("pm-roles", agent.tenant), proposal)
    response = api.post("/api/v1/recall/search", {"query": "weekly"}, format="json")
    assert response.status_code == 200 and response.json()["results"]
    served = response.json()["results"][0]["memory"]
    vote = {"memory_id": served["memory_id"], "revision": served["revision"], "verdict": "useful"}
    assert (
        api.post(f"/api/v1/recall/{response.json()['recall_id']}/feedback", vote, format="json").status_code
        == 201
    )
    return roles


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE memory_core_memory SET confidence = 0.1",
        "DELETE FROM memory_core_memory",
        "UPDATE memory_core_historicalmemory SET confidence = 0.1",
        "INSERT INTO executor_receiptchain (tenant_id, seq, head_hash) VALUES (gen_random_uuid(), 0, 'x')",
        "UPDATE executor_receipt SET outcome = 'stale'",
        "DELETE FROM memory_core_memoryvector",
    ],
)
def test_web_role_cannot_write_memories_or_receipts(roles, statement):
    with _connect(WEB) as web, pytest.raises(psycopg.errors.InsufficientPrivilege):
        web.execute(statement)


def test_web_role_reads_and_writes_what_the_api_needs(roles):
    with _connect(WEB) as web:
        assert web.execute("SELECT count(*) FROM memory_core_memory").fetchone()[0] == 1
        web.execute("UPDATE proposals_proposal SET rationale = rationale")


def test_executor_role_writes_memories_but_never_rewrites_receipts_or_decisions(roles):
    with _connect(EXECUTOR) as executor:
        executor.execute("UPDATE memory_core_memory SET confidence = confidence")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            executor.execute("DELETE FROM executor_receipt")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            executor.execute("UPDATE reviews_reviewdecision SET reason = 'x'")


def test_decisions_are_append_only_in_the_database(agent):
    proposal = submit(agent.agent, create_payload(factor_fact(), [make_evidence(agent.agent)]))
    approve(make_person("pm-db", agent.tenant), proposal)
    with connection.cursor() as cursor, pytest.raises(Exception, match="append-only"):
        cursor.execute("DELETE FROM reviews_reviewdecision")


@pytest.mark.parametrize("role", [WEB, EXECUTOR, OWNER], ids=["web", "executor", "owner"])
@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE reviews_reviewdecision SET reason = 'rewritten'",
        "DELETE FROM reviews_reviewdecision",
        "UPDATE reviews_historicalreviewdecision SET reason = 'rewritten'",
        "DELETE FROM reviews_historicalreviewdecision",
        "UPDATE memory_core_accessevent SET outcome = 'denied'",
        "UPDATE memory_core_accessevent SET query = 'something else'",
        "UPDATE memory_core_accessevent SET ranking_version = 'tuned'",
        "DELETE FROM memory_core_accessevent",
        "UPDATE memory_core_accesseventitem SET mode = 'metadata_only'",
        "DELETE FROM memory_core_accesseventitem",
        "UPDATE memory_core_recallfeedback SET verdict = 'useful'",
        "DELETE FROM memory_core_recallfeedback",
        "UPDATE executor_receipt SET reason = 'rewritten'",
        "DELETE FROM executor_receipt",
    ],
)
def test_append_only_tables_refuse_update_and_delete_for_every_role(audited, role, statement):
    with _connect(role) as conn, pytest.raises(REFUSED):
        conn.execute(statement)


def test_the_only_change_to_an_access_event_is_the_executors_purge_scrub_of_its_query(audited):
    with _connect(WEB) as web, pytest.raises(psycopg.errors.InsufficientPrivilege):
        web.execute("UPDATE memory_core_accessevent SET query = ''")
    with _connect(EXECUTOR) as executor:
        scrubbed = executor.execute("UPDATE memory_core_accessevent SET query = '' WHERE query <> ''")
        assert scrubbed.rowcount == 1
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            executor.execute(
                "INSERT INTO memory_core_accesseventitem SELECT * FROM memory_core_accesseventitem"
            )


def test_an_invalidated_evidence_revision_never_becomes_valid_again(roles, agent):
    revision = make_evidence(agent.agent)
    invalidate_evidence_revision(revision=revision, reason="look-ahead bug")
    for role in (WEB, OWNER):
        with _connect(role) as conn, pytest.raises(REFUSED):
            conn.execute("UPDATE evidence_evidencerevision SET status = 'valid' WHERE status = 'invalidated'")


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE evidence_evidencerevision SET status = 'valid' WHERE status = 'superseded'",
        "UPDATE evidence_evidencerevision SET content = '{\"ic_mean\": 0.5}'",
        "UPDATE evidence_evidencerevision SET content_hash = repeat('0', 64)",
        "UPDATE evidence_evidencerevision SET status_reason = 'no reason'",
        "DELETE FROM evidence_evidencerevision",
    ],
)
def test_evidence_revisions_are_immutable_but_for_a_forward_status(roles, agent, statement):
    source = make_evidence(agent.agent).source
    from provenance.services import add_evidence_revision

    add_evidence_revision(source=source, agent=agent.agent, content={"corrected": True})
    for role in (WEB, OWNER):
        with _connect(role) as conn, pytest.raises(REFUSED):
            conn.execute(statement)


RETRACT = (
    "UPDATE evidence_evidencerevision SET content = '{\"retracted\": true}', status = 'invalidated',"
    " status_reason = 'retracted', admission_findings = '[]'"
)


def test_only_the_executor_retracts_evidence_and_only_to_the_retracted_marker(roles, agent):
    make_evidence(agent.agent)
    with _connect(WEB) as web, pytest.raises(psycopg.errors.InsufficientPrivilege):
        web.execute(RETRACT)
    with _connect(EXECUTOR) as executor:
        for other in (
            RETRACT.replace('{"retracted": true}', '{"ic_mean": 0.5}'),
            RETRACT.replace("'invalidated'", "'valid'"),
            RETRACT.replace("'[]'", "'[{}]'"),
        ):
            with pytest.raises(REFUSED):
                executor.execute(other)
        assert executor.execute(RETRACT).rowcount == EvidenceRevision.objects.count()


@pytest.mark.parametrize(
    "statement",
    [
        "INSERT INTO auth_user (password, is_superuser, username, first_name, last_name, email,"
        " is_staff, is_active, date_joined) VALUES ('x', true, 'evil', '', '', '', true, true, now())",
        "UPDATE auth_user SET is_superuser = true",
        "INSERT INTO auth_user_groups (user_id, group_id) SELECT u.id, g.id FROM auth_user u, auth_group g",
        "UPDATE auth_group SET name = name",
        "INSERT INTO guardian_userobjectpermission (object_pk, content_type_id, permission_id, user_id)"
        " SELECT t.id::text, p.content_type_id, p.id, u.id"
        " FROM tenancy_tenant t, auth_permission p, auth_user u WHERE p.codename = 'decide_proposal'",
        "UPDATE guardian_userobjectpermission SET object_pk = object_pk",
        "DELETE FROM guardian_groupobjectpermission",
        "INSERT INTO tenancy_agenttoken (id, key_hash, hint, created_at, agent_id)"
        " SELECT gen_random_uuid(), md5(random()::text), 'cst_x', now(), id FROM tenancy_agent",
        "UPDATE tenancy_agenttoken SET revoked_at = NULL, expires_at = NULL",
        "UPDATE tenancy_usertoken SET revoked_at = NULL",
        "DELETE FROM django_session",
        "UPDATE evidence_evidencerevision SET content_hash = content_hash",
        "UPDATE evidence_evidencesource SET kind = kind",
        "INSERT INTO reviews_reviewdecision SELECT * FROM reviews_reviewdecision",
    ],
)
def test_executor_role_cannot_write_people_permissions_tokens_sessions_evidence_or_decisions(
    roles, statement
):
    with _connect(EXECUTOR) as executor, pytest.raises(psycopg.errors.InsufficientPrivilege):
        executor.execute(statement)


def test_web_asks_for_a_chain_verification_and_only_the_executor_records_its_result(roles, agent):
    insert = (
        "INSERT INTO executor_chainverification (id, tenant_id, requested_by, requested_at, status, receipts,"
        " total, problems) VALUES (gen_random_uuid(), %s, 'auditor', now(), 'queued', 0, 0, '[]')"
    )
    record = (
        "UPDATE executor_chainverification SET status = 'ok', finished_at = now(), receipts = receipts + 1"
    )
    with _connect(WEB) as web:
        web.execute(insert, [agent.tenant.id])
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            web.execute(record)
    with _connect(EXECUTOR) as executor:
        assert executor.execute(record).rowcount == 1
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            executor.execute("DELETE FROM executor_chainverification")


def test_web_role_writes_an_outbox_rows_trace_context_but_never_rewrites_it(roles, agent):
    proposal = submit(agent.agent, create_payload(factor_fact(), [make_evidence(agent.agent)]))
    with _connect(WEB) as web:
        web.execute(
            "INSERT INTO proposals_outboxentry (id, tenant_id, proposal_id, action_digest, status, attempts,"
            " available_at, last_error, requested_by, trace_context, created_at, updated_at)"
            " VALUES (gen_random_uuid(), %s, %s, 'd', 'pending', 0, now(), '', '',"
            ' \'{"request_id": "r-1", "correlation_id": "c-1"}\', now(), now())',
            [agent.tenant.pk, proposal.pk],
        )
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            web.execute("UPDATE proposals_outboxentry SET trace_context = '{}'")


@pytest.fixture
def notified(roles, agent):
    """A webhook endpoint of the tenant, and one delivery to it with one attempt."""
    from django.utils import timezone

    from notifications.models import DeliveryAttempt, WebhookDelivery, WebhookEndpoint

    hook = WebhookEndpoint.objects.create(
        tenant=agent.tenant, url="https://e.example/", event_types=["receipt.written"]
    )
    now = timezone.now()
    delivery = WebhookDelivery.objects.create(
        tenant=agent.tenant,
        endpoint=hook,
        event_type="receipt.written",
        payload={},
        occurred_at=now,
        next_attempt_at=now,
    )
    DeliveryAttempt.objects.create(delivery=delivery, started_at=now, duration_ms=1, status_code=200)
    return delivery


def test_both_roles_record_events_the_worker_delivers_them_and_attempts_are_never_rewritten(notified):
    columns = (
        "tenant_id, endpoint_id, event_type, payload, occurred_at, status, attempts, next_attempt_at,"
        " last_error, created_at"
    )
    copy = (
        f"INSERT INTO notifications_webhookdelivery (id, {columns})"
        f" SELECT gen_random_uuid(), {columns} FROM notifications_webhookdelivery"
    )
    with _connect(WEB) as web, _connect(EXECUTOR) as executor:
        web.execute(copy)  # submissions, decisions and invalidated evidence are the web's events
        executor.execute(copy)  # receipts, fences, expiries and failed verifications the worker's
        web.execute("UPDATE notifications_webhookdelivery SET status = 'pending', attempts = 0")  # replay
        executor.execute(
            "UPDATE notifications_webhookdelivery SET status = 'delivered', last_status_code = 200"
        )
        executor.execute(
            "INSERT INTO notifications_deliveryattempt (delivery_id, started_at, duration_ms, status_code,"
            " error_class, excerpt) SELECT id, now(), 1, 200, '', '' FROM notifications_webhookdelivery"
        )
        web.execute("UPDATE notifications_webhookendpoint SET active = false")  # operators, in the admin
        for conn, statement in [
            (web, "UPDATE notifications_webhookdelivery SET payload = '{}'"),
            (web, "UPDATE notifications_webhookdelivery SET last_status_code = 200"),
            (web, "INSERT INTO notifications_deliveryattempt SELECT * FROM notifications_deliveryattempt"),
            (executor, "UPDATE notifications_deliveryattempt SET status_code = 500"),
            (executor, "DELETE FROM notifications_deliveryattempt"),
            (executor, "UPDATE notifications_webhookendpoint SET url = 'https://attacker.example/'"),
            (executor, "DELETE FROM notifications_webhookdelivery"),
        ]:
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(statement)
