"""Conversation: a long generated conversation loaded with batches, from the first POST to all applied.

The turns of ``bench.conversations`` (one evidence source per session, one
``episodic_event`` per turn, as the quality part proposes them) go through
POST /api/v1/proposals/batch, 500 per request from one client, while one
executor worker applies them; the clock stops when the outbox is empty.
With ``CUSTODIAN_VECTORS=queued`` and an embedder, it then also reports how far
the vectors (written by their own worker) trail the applies.
"""

import time

from django.conf import settings

from bench.client import ApiClient
from bench.context import Context
from bench.conversations import generate
from bench.parts.quality import _subject, turn_payloads
from bench.parts.submit import wait_for_outbox
from bench.world import grant_users, make_world
from executor.models import Receipt
from memory_core.embeddings import EMBEDDERS, embeds
from memory_core.models import Memory, MemoryVector
from proposals.models import OutboxEntry

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
        backlog = _wait_for_outbox_sampling_vectors(world.tenant)
        applied_seconds = time.perf_counter() - started
        vectors = _wait_for_vectors(world.tenant, started) if backlog is not None else {}
    finally:
        ctx.stack.stop_workers()
    return {
        "turns": len(payloads),
        "accepted": accepted,
        "applied": Receipt.objects.filter(tenant=world.tenant, outcome="applied").count(),
        "submitted_seconds": round(submitted, 2),
        "submitted_to_all_applied_seconds": round(applied_seconds, 2),
        **({"vector_backlog_max": backlog, **vectors} if backlog is not None else {}),
    }


def _queued_vectors() -> bool:
    return settings.CUSTODIAN_VECTORS == "queued" and embeds()


def _wait_for_outbox_sampling_vectors(tenant) -> int | None:
    """Wait for the outbox; with queued vectors, return the most memories ever applied without one."""
    if not _queued_vectors():
        wait_for_outbox(tenant)
        return None
    most = 0
    while True:
        done = not OutboxEntry.objects.filter(tenant=tenant).exclude(status__in=["done", "dead"]).exists()
        most = max(most, _unvectored(tenant))
        if done:
            return most
        time.sleep(0.5)


def _wait_for_vectors(tenant, started: float, timeout: float = 600) -> dict:
    """Wait until every applied memory has its vector; return when, and how long after the last apply."""
    applied_at = time.perf_counter()
    while _unvectored(tenant):
        if time.perf_counter() - applied_at > timeout:
            raise RuntimeError(f"vectors still missing after {timeout} s")
        time.sleep(0.2)
    now = time.perf_counter()
    return {
        "submitted_to_all_vectored_seconds": round(now - started, 2),
        "vectors_after_last_apply_seconds": round(now - applied_at, 2),
    }


def _embedder_name() -> str:
    return EMBEDDERS[settings.CUSTODIAN_EMBEDDER].name  # type: ignore[attr-defined]  # the class's, unloaded


def _unvectored(tenant) -> int:
    memories = Memory.objects.filter(tenant=tenant).count()
    return memories - MemoryVector.objects.filter(tenant=tenant, embedder=_embedder_name()).count()
