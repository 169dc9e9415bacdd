"""Instances from hand-written SELECTs equal what the ORM loads, on SQLite as on PostgreSQL
(where SQLite stores a UUID, foreign keys included, as text the converters must turn back)."""

from django.db import connection

from core.hydrate import selected
from evidence.models import EvidenceRevision
from tenancy.models import AgentToken
from tenancy.services import issue_agent_token
from tests.factories import make_evidence


def _rows(sql: str, params: list) -> list:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def _fields(instance, names) -> dict:
    return {name: getattr(instance, name) for name in names}


def test_every_column_converts_as_the_orm_converts_it(agent):
    token, _ = issue_agent_token(tenant=agent.tenant, agent_name="hydrated")
    columns = selected(AgentToken, "t")
    (row,) = _rows(
        f"SELECT {columns.sql} FROM {AgentToken._meta.db_table} t WHERE t.key_hash = %s",
        [token.key_hash],
    )
    loaded = columns.instance(row)
    stored = AgentToken.objects.get(pk=token.pk)
    assert _fields(loaded, columns.attnames) == _fields(stored, columns.attnames)
    assert loaded.agent_id == token.agent_id and not loaded._state.adding


def test_a_subset_of_columns_leaves_the_rest_deferred_and_runs_the_models_from_db(agent):
    revision = make_evidence(agent.agent)
    columns = selected(EvidenceRevision, "r", names=["id", "source", "revision", "status"], start=1)
    (row,) = _rows(
        f"SELECT 'x', {columns.sql} FROM {EvidenceRevision._meta.db_table} r WHERE r.id = %s",
        [EvidenceRevision._meta.pk.get_db_prep_value(revision.pk, connection)],
    )
    loaded = columns.instance(row)
    assert (loaded.pk, loaded.source_id, loaded.revision, loaded.status) == (
        revision.pk,
        revision.source_id,
        revision.revision,
        revision.status,
    )
    assert "content_hash" in loaded.get_deferred_fields()
    assert loaded._stored_status == revision.status  # EvidenceRevision.from_db ran
