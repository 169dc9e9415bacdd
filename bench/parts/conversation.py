"""Conversation: a long generated conversation loaded with batches, from the first POST to all applied.

The turns of ``bench.conversations`` (one evidence source per session, one
``episodic_event`` per turn, as the quality part proposes them) go through
POST /api/v1/proposals/batch, 500 per request from one client, while one
executor worker applies them; the clock stops when the outbox is empty.
"""

import time

from bench.client import ApiClient
from bench.context import Context
from bench.conversations import generate
from bench.parts.quality import _subject, turn_payloads
from bench.parts.submit import wait_for_outbox
from bench.world import grant_users, make_world
from executor.models import Receipt

BATCH_SIZE = 500


def run(ctx: Context) -> dict:
    dataset = generate(conversations=ctx.scale.conversation_turns // 140 + 1, sessions=14)
    world = make_world("bench-conversation")
    grant_users(
        world.agent, sorted({_subject(c, t) for c in dataset.conversations for s in c.sessions for t in s})
    )
    client = ApiClient("127.0.0.1", ctx.stack.port, world.token)
    payloads = turn_payloads(client, dataset, "bench-conversation")[: ctx.scale.conversation_turns]
    ctx.stack.start_workers(1)
    try:
        ctx.stack.wait_until_workers_ready()
        started = time.perf_counter()
        accepted = 0
        for start in range(0, len(payloads), BATCH_SIZE):
            items = [
                {"idempotency_key": key, "proposal": body}
                for key, body in payloads[start : start + BATCH_SIZE]
            ]
            status, answer, _ = client.request("POST", "/api/v1/proposals/batch", {"items": items})
            accepted += answer["created"] if status == 200 else 0
        submitted = time.perf_counter() - started
        wait_for_outbox(world.tenant)
        applied_seconds = time.perf_counter() - started
    finally:
        ctx.stack.stop_workers()
    return {
        "turns": len(payloads),
        "accepted": accepted,
        "applied": Receipt.objects.filter(tenant=world.tenant, outcome="applied").count(),
        "submitted_seconds": round(submitted, 2),
        "submitted_to_all_applied_seconds": round(applied_seconds, 2),
    }
