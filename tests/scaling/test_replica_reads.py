"""The web behind PgBouncer (transaction mode) with recall and get reading a streaming replica.

Real HTTP to the live server, whose connections go through PgBouncer; a real Celery worker
connected straight to PostgreSQL applies. Pausing the standby's replay shows which reads are the
replica's: a memory applied meanwhile is missing from recall and get, while the submit, its
idempotent retry, its receipt and its proposal (all on the primary) see it at once.
"""

import contextlib
import uuid
from collections.abc import Iterator

import httpx
import pytest
from custodian_client import Custodian
from django.db import connections

from core import replica
from core.databases import REPLICA
from memory_core.models import Memory
from proposals.models import Proposal
from tests.live import ALICE, OWNER_CONTEXT, alice_preference, make_reviewer
from tests.scaling.conftest import SCALED_DATABASES
from tests.workers import connect_as

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True, databases=SCALED_DATABASES)]

ACTING_FOR = "user:pm-alice"
UNPRIVILEGED = "custodian_test_replica_reader"  # a login with no grant on any table


@pytest.fixture(autouse=True)
def _patient_replica(settings):
    """A paused standby falls further behind every second: bound the lag loosely unless a test says."""
    settings.CUSTODIAN_REPLICA_MAX_LAG_SECONDS = 3600
    settings.CUSTODIAN_API_RATE = "100000/min"


def _remember(custodian: Custodian, statement: str, *, key: str | None = None) -> dict:
    """Propose a memory Alice asked for (auto-applied) and wait for its receipt; retried once if keyed."""
    evidence = custodian.register_evidence("conversation", f"chat/alice/{uuid.uuid4()}", {"text": statement})
    fields = {
        "memory": alice_preference(statement, key=f"k{uuid.uuid4().hex[:8]}"),
        "evidence": [evidence],
        "policy_context": OWNER_CONTEXT,
        "idempotency_key": key,
    }
    proposal = custodian.propose("create", **fields)
    assert proposal["classification"] == "auto_apply", proposal
    custodian.wait_for_receipt(proposal["id"], timeout=60)
    if key:
        assert custodian.propose("create", **fields)["id"] == proposal["id"]  # the retry found its own write
    return proposal


def _recalled(custodian: Custodian, text: str) -> set[str]:
    found = custodian.recall(text, policy_context={"acting_for_subject": ALICE}, limit=50)
    return {item["memory"]["memory_id"] for item in found["results"]}


def _get(live_server, agent, memory_id: str) -> httpx.Response:
    return httpx.get(
        f"{live_server.url}/api/v1/memories/{memory_id}/",
        params={"acting_for": ACTING_FOR},
        headers={"Authorization": f"Bearer {agent.token}"},
        timeout=30,
    )


def test_recall_and_get_read_the_replica_while_writes_read_their_own(scaled_web, live_server, agent):
    standby, pooler = scaled_web.standby, scaled_web.pooler
    before = pooler.transactions()
    reviewer = make_reviewer("pm-replica", agent.tenant)
    with (
        Custodian(live_server.url, agent.token) as custodian,
        Custodian(live_server.url, reviewer.token) as pm,
    ):
        first = _remember(custodian, "Alice prefers weekly summaries")
        standby.wait_for_replay()
        assert first["memory_id"] in _recalled(custodian, "weekly summaries")

        standby.pause_replay()
        try:
            second = _remember(custodian, "Alice prefers quarterly reviews", key="replica-paused")
            assert Proposal.objects.filter(idempotency_key="replica-paused").count() == 1
            assert custodian.proposal(second["id"])["status"] == "applied"
            assert Memory.objects.filter(pk=second["memory_id"]).exists()

            assert _get(live_server, agent, second["memory_id"]).status_code == 404
            assert second["memory_id"] not in _recalled(custodian, "quarterly reviews")
            assert first["memory_id"] in _recalled(custodian, "weekly summaries")

            evidence = custodian.register_evidence(
                "conversation", "chat/alice/unsure", {"text": "Maybe calls?"}
            )
            unsure = custodian.propose(
                "create", memory=alice_preference("Alice may prefer calls"), evidence=[evidence]
            )
            assert unsure["status"] == "pending_review", unsure
            assert unsure["id"] not in {queued["id"] for queued in pm.review_queue()}
        finally:
            standby.resume_replay()
        standby.wait_for_replay()
        assert _get(live_server, agent, second["memory_id"]).status_code == 200
        assert second["memory_id"] in _recalled(custodian, "quarterly reviews")
        assert unsure["id"] in {queued["id"] for queued in pm.review_queue()}
    assert pooler.transactions() > before  # the web's transactions went through PgBouncer


def test_a_replica_further_behind_than_the_bound_is_not_read(scaled_web, live_server, agent, settings):
    standby = scaled_web.standby
    with Custodian(live_server.url, agent.token) as custodian:
        standby.pause_replay()
        try:
            late = _remember(custodian, "Alice prefers monthly digests")
            assert _get(live_server, agent, late["memory_id"]).status_code == 404
            settings.CUSTODIAN_REPLICA_MAX_LAG_SECONDS = 0
            assert _get(live_server, agent, late["memory_id"]).status_code == 200
            assert late["memory_id"] in _recalled(custodian, "monthly digests")
        finally:
            standby.resume_replay()


def test_a_stopped_replica_sends_reads_to_the_primary_not_a_500(scaled_web, live_server, agent):
    standby = scaled_web.standby
    with Custodian(live_server.url, agent.token) as custodian:
        standby.wait_for_replay()
        standby.stop()
        try:
            kept = _remember(custodian, "Alice prefers short answers")
            read = _get(live_server, agent, kept["memory_id"])
            assert read.status_code == 200, read.text
            assert kept["memory_id"] in _recalled(custodian, "short answers")
        finally:
            standby.start()
    standby.wait_for_replay()


@contextlib.contextmanager
def _replica_entry(**changes: str) -> Iterator[None]:
    """Point the replica entry elsewhere (as a wrong CUSTODIAN_REPLICA_URL would) inside the block."""
    entry = connections.settings[REPLICA]
    saved = {key: entry[key] for key in changes}
    entry.update(changes)
    try:
        yield
    finally:
        entry.update(saved)
        replica._down_until = 0.0


def test_a_replica_url_naming_another_database_is_not_read(scaled_web, live_server, agent):
    with Custodian(live_server.url, agent.token) as custodian:
        kept = _remember(custodian, "Alice prefers plain text")
        with _replica_entry(NAME="postgres"):  # the standby's own, without Custodian's tables
            assert _get(live_server, agent, kept["memory_id"]).status_code == 200
            assert kept["memory_id"] in _recalled(custodian, "plain text")


def test_a_replica_failing_after_its_check_answers_a_503_problem_not_a_500(scaled_web, live_server, agent):
    """A role on the replica that may not read the memories passes the check, then fails the read."""
    with Custodian(live_server.url, agent.token) as custodian:
        kept = _remember(custodian, "Alice prefers bullet points")
    with connect_as() as conn:
        conn.execute(f"DROP ROLE IF EXISTS {UNPRIVILEGED}")
        conn.execute(f"CREATE ROLE {UNPRIVILEGED} LOGIN")
    try:
        scaled_web.standby.wait_for_replay()
        with _replica_entry(USER=UNPRIVILEGED):
            read = _get(live_server, agent, kept["memory_id"])
        assert read.status_code == 503, read.text
        assert read.headers["content-type"] == "application/problem+json"
        assert read.json()["code"] == "service_unavailable"
    finally:
        with connect_as() as conn:
            conn.execute(f"DROP ROLE IF EXISTS {UNPRIVILEGED}")


def test_a_token_revoked_while_the_replica_lags_is_refused_on_replica_routed_reads(
    scaled_web, live_server, agent
):
    """Credentials and grants are read on the primary: a lagging standby cannot revive a revoked token."""
    from django.core.management import call_command

    standby = scaled_web.standby
    with Custodian(live_server.url, agent.token) as custodian:
        first = _remember(custodian, "Alice prefers weekly summaries")
        standby.wait_for_replay()
        assert _get(live_server, agent, first["memory_id"]).status_code == 200
        standby.pause_replay()
        try:
            call_command("revoke_agent_token", tenant=agent.tenant.name, agent=agent.agent.name)
            assert _get(live_server, agent, first["memory_id"]).status_code == 401
            recall = httpx.post(
                f"{live_server.url}/api/v1/recall/search",
                json={"query": "weekly summaries"},
                headers={"Authorization": f"Bearer {agent.token}"},
                timeout=30,
            )
            assert recall.status_code == 401, recall.text
        finally:
            standby.resume_replay()


# What a search reads about the tenant's words and people (the first stage's statistics).
_SEARCH_STATISTICS = ("memory_core_searchterm", "memory_core_searchcorpus", "WITH RECURSIVE subjects")


def test_a_search_reads_its_word_and_subject_statistics_where_it_reads(scaled_web, live_server, agent):
    """The lexemes' counts, the coverage IDF and the tenant's subject ids come from the replica too."""
    from django.test.utils import CaptureQueriesContext

    from memory_core.recall import RecallQuery, recall
    from tenancy.services import bind_policy_context

    with Custodian(live_server.url, agent.token) as custodian:
        _remember(custodian, "Prefers weekly summaries on Mondays")
    scaled_web.standby.wait_for_replay()
    context = bind_policy_context(agent.agent, {"acting_for_subject": ALICE})

    @replica.reads_from_replica
    def search(text: str) -> list:
        query = RecallQuery(text=text)
        return recall(agent=agent.agent, query=query, context=context, limit=10, cursor=None).items

    with (
        CaptureQueriesContext(connections["default"]) as primary,
        CaptureQueriesContext(connections[REPLICA]) as standby,
    ):
        assert search("weekly summaries")  # words match: their counts and IDF
        assert search("What does Alice like?")  # no word matches: the named person's memories stand in
    read = " ".join(query["sql"] for query in standby.captured_queries)
    assert all(table in read for table in _SEARCH_STATISTICS), read
    primary_reads = [query["sql"] for query in primary.captured_queries if "INSERT" not in query["sql"]]
    assert not [sql for sql in primary_reads if any(table in sql for table in _SEARCH_STATISTICS)]
