"""Rows made once for a module of tests that only read them, as Django's ``TestCase.setUpTestData``."""

import contextlib
from collections.abc import Iterator

from django.db import transaction


@contextlib.contextmanager
def shared_rows(django_db_blocker) -> Iterator[None]:
    """Open a transaction that each test's own (a savepoint inside it) nests in; roll it back after.

    For a module-scoped fixture whose rows many tests read: each test still rolls back what it
    wrote, and the module leaves nothing behind. Only for tests on the ``db`` fixture: a
    transactional test or a live server commits outside it and would not see its rows.
    """
    with django_db_blocker.unblock():
        atomic = transaction.atomic()
        # As TestCase marks its own blocks: the code under test may open durable ones inside.
        atomic._from_testcase = True
        with atomic:
            yield
            transaction.set_rollback(True)
