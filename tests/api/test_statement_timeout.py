"""Web processes bound every statement; the executor and management commands do not.

Each case starts a fresh interpreter the way its process starts (gunicorn loads
``config/gunicorn.py`` before the application; Celery and ``manage.py`` do not) and asks
PostgreSQL which ``statement_timeout`` its connection got, as the web role.
"""

import os
import subprocess
import sys

import pytest
from django.core.management import call_command

from tests import workers

# Committed, so the roles are there for the interpreters this starts, on a fresh server too.
pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

SHOW = (
    "import django; django.setup(); from django.db import connection;"
    " cursor = connection.cursor(); cursor.execute('SHOW statement_timeout'); print(cursor.fetchone()[0])"
)


@pytest.fixture(autouse=True)
def _roles():
    call_command("setup_db_roles", verbosity=0)


def _statement_timeout(prelude: str, **env: str) -> str:
    environment = {k: v for k, v in os.environ.items() if k != "CUSTODIAN_STATEMENT_TIMEOUT_MS"}
    environment |= {
        "DATABASE_URL": workers.test_database_url("custodian_web"),
        "DJANGO_SETTINGS_MODULE": "config.settings",
        **env,
    }
    result = subprocess.run(
        [sys.executable, "-c", f"{prelude}{SHOW}"],
        cwd=workers.BASE_DIR,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return result.stdout.strip().splitlines()[-1]


def test_a_gunicorn_worker_connection_gives_up_before_gunicorn_does():
    assert _statement_timeout("import config.gunicorn;") == "5s"


def test_gunicorn_refuses_a_statement_budget_it_would_kill_the_worker_before():
    with pytest.raises(subprocess.CalledProcessError) as refused:
        _statement_timeout("import config.gunicorn;", CUSTODIAN_STATEMENT_TIMEOUT_MS="30000")
    assert "below gunicorn's timeout" in refused.value.stderr


def test_the_executor_and_management_commands_run_unbounded():
    assert _statement_timeout("") == "0"
