"""Shared fixtures. Tests run against whatever DATABASE_URL / REDIS_URL name.

Tests marked ``postgres`` or ``services`` need the real services. Outside CI
they are skipped when the services are not configured; with
``CUSTODIAN_REQUIRE_SERVICES=1`` (set by ``.ci/run``) they fail instead.
"""

import itertools
import os
import uuid

import pytest
from django.conf import settings
from django.db import connection
from rest_framework.test import APIClient

from memory_core.models import Memory
from tests.factories import (
    AgentHandle,
    apply_released,
    approve,
    create_payload,
    make_agent,
    make_evidence,
    make_person,
    owner_context,
    submit,
    user_preference,
)

REQUIRE_SERVICES = os.environ.get("CUSTODIAN_REQUIRE_SERVICES") == "1"
# .ci/run runs the suite twice, on the embedded default and on PostgreSQL + Redis; a test marked
# ``mode_independent`` would run the same both times, so one of the passes leaves it out.
SKIP_MODE_INDEPENDENT = os.environ.get("CUSTODIAN_SKIP_MODE_INDEPENDENT") == "1"
DATABASE_FIXTURES = {"db", "transactional_db", "live_server", "django_db_reset_sequences"}


def pytest_collection_modifyitems(config, items):
    """Refuse ``mode_independent`` on a test that uses the test database; drop such tests if asked.

    A browser test outside tests/browser/ is refused too: ``make test`` runs that folder alone.
    """
    kept, dropped = [], []
    for item in items:
        if item.get_closest_marker("browser") and "tests/browser/" not in item.nodeid:
            raise pytest.UsageError(f"{item.nodeid}: browser tests live in tests/browser/ (make test)")
        if not item.get_closest_marker("mode_independent"):
            kept.append(item)
            continue
        if item.get_closest_marker("django_db") or DATABASE_FIXTURES & set(getattr(item, "fixturenames", ())):
            raise pytest.UsageError(f"{item.nodeid}: uses the test database, so it is not mode_independent")
        (dropped if SKIP_MODE_INDEPENDENT else kept).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


def _missing_services(marker: str) -> str:
    if connection.vendor != "postgresql":
        return "DATABASE_URL does not point to PostgreSQL"
    if marker == "services":
        if not settings.CELERY_BROKER_URL.startswith("redis"):
            return "REDIS_URL is not set"
        import redis

        try:
            redis.Redis.from_url(settings.CELERY_BROKER_URL, socket_connect_timeout=2).ping()
        except redis.RedisError as exc:
            return f"Redis unreachable: {exc}"
    return ""


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """Skip (or, with CUSTODIAN_REQUIRE_SERVICES=1, fail) a test whose services are missing.

    Before any fixture is set up, as skipif markers are: a skipped test costs no database setup.
    """
    for marker in ("postgres", "services"):
        if item.get_closest_marker(marker):
            missing = _missing_services(marker)
            if missing and REQUIRE_SERVICES:
                pytest.fail(f"required service missing: {missing}")
            if missing:
                pytest.skip(f"needs {marker}: {missing}")


@pytest.fixture
def agent(db) -> AgentHandle:
    return make_agent("quant-desk", "research-agent")


@pytest.fixture
def other_agent(db) -> AgentHandle:
    return make_agent("other-desk", "intruder-agent")


@pytest.fixture
def api(agent) -> APIClient:
    return agent.client


@pytest.fixture
def anonymous() -> APIClient:
    return APIClient()


@pytest.fixture
def applied_memory_factory(db):
    """Return a function that auto-applies a preference memory through the real executor service.

    Each call's memory says something new (a restatement of an active memory is refused).
    """
    from memory_core.models import Memory

    made = itertools.count(1)

    def make(handle: AgentHandle) -> Memory:
        n = next(made)
        memory = user_preference()
        if n > 1:
            memory["content"] = {**memory["content"], "statement": f"Alice prefers weekly summaries, {n}"}
        proposal = submit(handle.agent, create_payload(memory, [make_evidence(handle.agent)]))
        apply_released(proposal)
        return Memory.objects.get(pk=proposal.target_id)

    return make


@pytest.fixture
def applied_memory(agent, applied_memory_factory):
    """An auto-applied preference memory at revision 1."""
    return applied_memory_factory(agent)


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    """Hash test passwords cheaply; production keeps Django's default hasher."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def marker() -> str:
    return f"zq{uuid.uuid4().hex[:12]}"


@pytest.fixture
def remember(agent):
    """Return a function that makes a memory exist through proposal, approvals and executor.

    Its memories claim no key derived from their statement, as MGP's writes and memories
    stored before such keys: tests build restatements on purpose (for Dreaming to merge, say).
    """
    reviewers = [make_person("rev-a", agent.tenant), make_person("rev-b", agent.tenant)]

    def make(statement: str, *, handle=None, evidence=None, **fields) -> Memory:
        handle = handle or agent
        memory = {
            "subject": {"kind": "user", "id": "pm-alice"},
            "scope": "user",
            "type": "preference",
            "content": {"statement": statement},
            "sensitivity": "internal",
            **fields,
        }
        payload = create_payload(memory, [evidence or make_evidence(handle.agent)], owner_context())
        proposal = submit(handle.agent, {**payload, "identified_by_client": True})
        people = (
            reviewers
            if handle is agent
            else [make_person(f"r-{uuid.uuid4().hex[:6]}", handle.tenant) for _ in range(2)]
        )
        for person in people[: proposal.required_approvals]:
            approve(person, proposal)
        assert apply_released(proposal).outcome == "applied"
        return Memory.objects.get(pk=proposal.target_id)

    return make


@pytest.fixture(autouse=True)
def _fresh_cache():
    """Throttle counters live in the cache; every test starts with none."""
    from django.core.cache import cache

    cache.clear()
