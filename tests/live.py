"""Fixtures for tests that talk to Custodian over real HTTP: a live server, a real executor worker,
and people who review with personal tokens. Conftests import what they use.
"""

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
import redis
from django.conf import settings
from django.db import connection

from tenancy.services import issue_user_token
from tests.factories import make_person
from tests.workers import celery_worker

# Whom the test agent acts for, and the context that makes a preference the owner's explicit one.
ALICE = {"kind": "user", "id": "pm-alice"}
OWNER_CONTEXT = {"acting_for_subject": ALICE, "consent_basis": "explicit", "risk_level": "low"}


def alice_preference(statement: str, key: str = "summary_cadence", value: str = "weekly") -> dict:
    return {
        "subject": ALICE,
        "scope": "user",
        "type": "preference",
        "content": {"statement": statement, "preference_key": key, "preference_value": value},
    }


@dataclass
class Reviewer:
    username: str
    token: str


def make_reviewer(username: str, tenant) -> Reviewer:
    """A person allowed to decide the tenant's proposals, with a personal (``csu_``) token."""
    _, raw = issue_user_token(user=make_person(username, tenant))
    return Reviewer(username, raw)


@pytest.fixture
def executor(tmp_path) -> Iterator[None]:
    """A real Celery executor worker (and beat) against this test database and Redis.

    Killed outright once the test is over (nothing checks its shutdown; a warm one takes seconds).
    """
    redis.Redis.from_url(settings.CELERY_BROKER_URL).flushdb()
    with celery_worker(tmp_path, beat=True, kill=True):
        yield


@contextlib.contextmanager
def refusing_database() -> Iterator[None]:
    """Make every new database connection fail (as when PostgreSQL is down) until the block ends.

    The live server closes its connection after each request, so its next one is refused.
    """
    saved = dict(connection.settings_dict)
    connection.close()
    connection.settings_dict["PORT"] = "1"
    try:
        yield
    finally:
        connection.close()
        connection.settings_dict.update(saved)
