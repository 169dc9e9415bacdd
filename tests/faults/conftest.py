"""Fixtures for the fault-injection tests: a whole throwaway world per test.

These tests never use pytest-django's database (no ``db`` fixture, no
``django_db`` mark): the code under test runs in subprocesses pointed at the
throwaway PostgreSQL and Redis, and the test reads results back with psycopg.
"""

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from tests.faults.harness import SCALE, Stack, missing_tools


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if report.when == "call":
        item.fault_report = report
    return report


@pytest.fixture
def fault_root():
    """A tmp dir the ``postgres`` user can traverse (pytest's tmp_path is 0700 root when run as root)."""
    if not os.environ.get("DATABASE_URL", "").startswith("postgres"):
        # They kill PostgreSQL and Redis: they run with the PostgreSQL + Redis suite (.ci/run's
        # second pass), not again on the embedded default.
        pytest.skip("fault tests run with DATABASE_URL pointing to PostgreSQL")
    missing = missing_tools()
    if missing:
        if os.environ.get("CUSTODIAN_REQUIRE_SERVICES") == "1":
            pytest.fail(f"fault tests cannot run: {missing}")
        pytest.skip(f"fault tests need local server binaries: {missing}")
    root = Path(tempfile.mkdtemp(prefix="custodian-faults-"))
    root.chmod(0o711)
    yield root
    if os.environ.get("CUSTODIAN_FAULT_KEEP") == "1":
        print(f"[faults] kept {root}")
    else:
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def make_stack(request, fault_root):
    """Return a function that brings up this test's PostgreSQL + Redis (migrated); tear all down after."""
    stacks: list[Stack] = []

    def make(**options) -> Stack:
        stack = Stack(fault_root, **options)
        stacks.append(stack)
        return stack.up()

    yield make
    report = getattr(request.node, "fault_report", None)
    for stack in stacks:
        if report is None or report.failed or os.environ.get("CUSTODIAN_SHOW_WORKER_LOG"):
            print(f"\n[faults] logs from {fault_root} (scale {SCALE}):\n{stack.logs()}")
        stack.down()
