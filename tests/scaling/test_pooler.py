"""Processes behind PgBouncer in transaction mode: the web works with its budget, the executor refuses.

Each case starts a fresh interpreter the way its process starts (gunicorn loads
``config/gunicorn.py`` first; Celery does not) with ``DATABASE_URL`` naming the PgBouncer the
fixture runs.
"""

import os
import subprocess
import sys

import pytest

from executor.worker import worker_command
from tests import workers
from tests.scaling.conftest import POOLED_STATEMENT_TIMEOUT_MS

pytestmark = [pytest.mark.postgres, pytest.mark.django_db]

# Ten times the same statement: psycopg would prepare it server-side from the fifth on.
SHOW = (
    "import django; django.setup(); from django.db import connection;"
    " print(connection.settings_dict['OPTIONS'].get('prepare_threshold', 'default'));"
    " cursor = connection.cursor();"
    " [cursor.execute('SHOW statement_timeout') for _ in range(10)]; print(cursor.fetchone()[0])"
)


def _run(command: list[str], **env: str) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("CUSTODIAN_DB_POOLER")}
    environment |= {"DJANGO_SETTINGS_MODULE": "config.settings", **env}
    environment.pop("CUSTODIAN_STATEMENT_TIMEOUT_MS", None)
    return subprocess.run(
        command, cwd=workers.BASE_DIR, env=environment, capture_output=True, text=True, timeout=120
    )


def test_a_web_process_behind_the_pooler_gets_its_budget_from_the_pooler(pooler):
    web = _run(
        [sys.executable, "-c", f"import config.gunicorn; {SHOW}"],
        DATABASE_URL=pooler.url(),
        CUSTODIAN_DB_POOLER="transaction",
    )
    assert web.returncode == 0, web.stderr
    assert web.stdout.split() == ["None", f"{POOLED_STATEMENT_TIMEOUT_MS // 1000}s"]


def test_a_web_process_behind_the_pooler_reads_search_candidates_in_binary(pooler):
    """Recall's first stage binds on the server and reads in binary (``core.binary_rows``):
    unnamed statements, which a transaction pooler passes on, ten times over."""
    read = (
        "import django; django.setup(); from core.binary_rows import binary_rows;"
        " from memory_core.models import Memory; from django.db.models import Value;"
        " rows = Memory.objects.annotate(word=Value('tea')).values_list('word', 'revision');"
        " print([binary_rows(rows.filter(subject_id='nobody')[:5]) for _ in range(10)][-1])"
    )
    web = _run(
        [sys.executable, "-c", f"import config.gunicorn; {read}"],
        DATABASE_URL=pooler.url(),
        CUSTODIAN_DB_POOLER="transaction",
    )
    assert web.returncode == 0, web.stderr
    assert web.stdout.strip() == "[]"


def test_without_the_pooler_setting_pgbouncer_refuses_the_budget_startup_parameter(pooler):
    web = _run([sys.executable, "-c", f"import config.gunicorn; {SHOW}"], DATABASE_URL=pooler.url())
    assert web.returncode != 0
    assert "unsupported startup parameter: options" in web.stderr


def test_a_pooler_setting_it_does_not_know_is_refused_in_one_line():
    web = _run(  # the web's entry point, as gunicorn loads it
        [sys.executable, "-c", "import config.wsgi"],
        DATABASE_URL=workers.test_database_url(),
        CUSTODIAN_DB_POOLER="session",
    )
    assert web.returncode != 0
    assert (
        web.stderr.strip() == "custodian: CUSTODIAN_DB_POOLER must be empty or 'transaction', not 'session'"
    )


def test_an_executor_worker_refuses_to_start_behind_the_pooler(pooler):
    worker = _run(
        worker_command(name="pooled@%h", concurrency=1),
        DATABASE_URL=pooler.url(),
        CUSTODIAN_DB_POOLER="transaction",
    )
    assert worker.returncode == 1
    assert (
        worker.stderr.strip()
        .splitlines()[-1]
        .startswith("executor workers must connect to PostgreSQL directly")
    )
