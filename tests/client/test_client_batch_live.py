"""propose_batch against a live Custodian: one request, per-item answers, a real executor applies them all."""

import asyncio

import pytest
from custodian_client import AsyncCustodian, Custodian
from django.core.management import call_command

from executor.models import Receipt
from memory_core.models import Memory
from tests.live import OWNER_CONTEXT, alice_preference
from tests.workers import wait_until

live = pytest.mark.django_db(transaction=True)


def _items(evidence: dict, count: int, prefix: str) -> list[dict]:
    return [
        {
            "action": "create",
            "memory": alice_preference(f"Alice said thing {n}", key=f"{prefix}_{n}", value=str(n)),
            "evidence": [evidence],
            "policy_context": OWNER_CONTEXT,
            "idempotency_key": f"{prefix}-{n}",
        }
        for n in range(count)
    ]


@pytest.mark.services
@live
def test_a_batch_is_applied_by_the_executor_and_replays_on_resend(live_server, agent, executor, capsys):
    with Custodian(live_server.url, agent.token) as custodian:
        evidence = custodian.register_evidence("conversation", "chat/alice/batch", {"text": "many turns"})
        items = _items(evidence, 25, "turn")
        items[3]["memory"] = {**items[3]["memory"], "scope": "galaxy"}  # one bad item fails alone
        answer = custodian.propose_batch(items)
        assert [r["status"] for r in answer["results"]] == [201] * 3 + [400] + [201] * 21
        assert (answer["created"], answer["refused"]) == (24, 1)
        ids = [r["proposal"]["id"] for r in answer["results"] if r["status"] == 201]
        wait_until(lambda: Receipt.objects.filter(proposal_id__in=ids).count() == 24, what="24 receipts")
        assert set(Receipt.objects.filter(proposal_id__in=ids).values_list("outcome", flat=True)) == {
            "applied"
        }
        assert Memory.objects.filter(tenant=agent.tenant).count() == 24
        again = custodian.propose_batch(items)
        assert (again["created"], again["replayed"], again["refused"]) == (0, 24, 1)
    assert Receipt.objects.filter(proposal_id__in=ids).count() == 24  # a replay applies nothing twice
    call_command("verify_receipts")
    assert "24 receipts verified" in capsys.readouterr().out


@pytest.mark.services
@live
def test_the_async_client_submits_a_batch(live_server, agent, executor):
    async def flow() -> dict:
        async with AsyncCustodian(live_server.url, agent.token) as custodian:
            evidence = await custodian.register_evidence("conversation", "chat/alice/async", {"text": "x"})
            return await custodian.propose_batch(_items(evidence, 3, "async"))

    answer = asyncio.run(flow())
    assert [r["status"] for r in answer["results"]] == [201, 201, 201]
    ids = [r["proposal"]["id"] for r in answer["results"]]
    wait_until(lambda: Receipt.objects.filter(proposal_id__in=ids).count() == 3, what="3 receipts")
