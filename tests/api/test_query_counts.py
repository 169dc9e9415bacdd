"""List endpoints run a constant number of queries, however many rows a page holds."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.factories import create_payload, submit, user_preference


def _count_queries(client, url) -> int:
    with CaptureQueriesContext(connection) as queries:
        assert client.get(url).status_code == 200
    return len(queries)


@pytest.mark.parametrize("url", ["/api/v1/proposals/", "/api/v1/receipts/"])
def test_list_queries_do_not_grow_with_rows(agent, api, applied_memory_factory, url):
    applied_memory_factory(agent)
    few = _count_queries(api, url)
    for _ in range(10):
        applied_memory_factory(agent)
        submit(agent.agent, create_payload(user_preference(), []))
    assert _count_queries(api, url) == few
