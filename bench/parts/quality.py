"""Quality: does recall find what an agent asks for? Generated conversations through the real API.

Every session is registered as one evidence source (kind ``conversation``)
and every turn is proposed as one ``episodic_event`` memory citing it (in
batches of 500), so
policy gates it and the executor workers apply it, as in production. Each
question is then sent to POST /api/v1/recall/search with ``limit: 10`` and
the served memories are scored against the question's gold turns
(``bench.quality``), next to plain BM25 over the same turns.
"""

import time
from concurrent.futures import ThreadPoolExecutor

from django.db import connection

from bench import conversations, long_chats
from bench.client import ApiClient
from bench.context import Context
from bench.conversations import Conversation, Dataset, Turn
from bench.parts.recall import _vacuum_analyze
from bench.parts.submit import wait_for_outbox
from bench.quality import adjacency, baseline, evaluate
from bench.stats import Run
from bench.world import grant_users, make_world
from memory_core.models import Memory

CLIENTS = 2  # each sends its share of the turns in batches (POST /api/v1/proposals/batch)
BATCH_SIZE = 500
LOAD_TIMEOUT = 3600  # s; the embedded broker applies the full long-chat set in about 30 minutes

# Each set in its own tenant, so neither's turns rank against the other's.
SETS = {
    "templated": ("bench-quality", lambda scale: conversations.generate(
        conversations=scale.quality_conversations[0], sessions=scale.quality_conversations[1])),
    "long_chats": ("bench-quality-long", lambda scale: long_chats.generate(
        conversations=scale.long_chats[0], sessions=scale.long_chats[1])),
    # The same turns without "Name: " in their text: who said each is only its subject.
    "long_chats_unnamed": ("bench-quality-unnamed", lambda scale: long_chats.generate(
        conversations=scale.long_chats[0], sessions=scale.long_chats[1], names_in_text=False)),
}  # fmt: skip


def run(ctx: Context) -> dict:
    return {"sets": {name: _measure(ctx, name) for name in ctx.scale.quality_sets}}


def _measure(ctx: Context, name: str) -> dict:
    tenant, make = SETS[name]
    dataset = make(ctx.scale)
    world = make_world(tenant)
    grant_users(
        world.agent, sorted({_subject(c, t) for c in dataset.conversations for s in c.sessions for t in s})
    )
    ctx.stack.start_workers(1)
    try:
        started = time.perf_counter()
        refused = _load(ctx, world, dataset, tenant)
        wait_for_outbox(world.tenant, timeout=LOAD_TIMEOUT)
        load_seconds = time.perf_counter() - started
    finally:
        ctx.stack.stop_workers()
    if connection.vendor == "postgresql":
        _vacuum_analyze()
    keys = _turn_keys(world.tenant, dataset)
    answers, latency = _ask(ctx, world, dataset, keys)
    return {
        "conversations": len(dataset.conversations),
        "sessions": sum(len(c.sessions) for c in dataset.conversations),
        "turns": len(dataset.turns),
        "memories": len(keys),
        "refused_turns": refused,
        "questions": len(dataset.questions),
        "load_seconds": round(load_seconds, 1),
        "custodian": evaluate(dataset.questions, answers),
        "bm25": baseline(dataset),
        "neighbours": _neighbours(ctx, world, dataset, keys),
        "search": latency.summary(),
    }


def _subject(conversation: Conversation, turn: Turn) -> str:
    return f"c{conversation.number}-{turn.speaker.lower()}"


def _load(ctx: Context, world, dataset: Dataset, source: str) -> int:
    """Register each session as evidence, then propose its turns; return how many were not accepted."""
    payloads = turn_payloads(ApiClient("127.0.0.1", ctx.stack.port, world.token), dataset, source)

    def submit(chunk: list[tuple[str, dict]]) -> int:
        own, refused = ApiClient("127.0.0.1", ctx.stack.port, world.token), 0
        for start in range(0, len(chunk), BATCH_SIZE):
            batch = chunk[start : start + BATCH_SIZE]
            items = [{"idempotency_key": key, "proposal": payload} for key, payload in batch]
            status, body, _ = own.request("POST", "/api/v1/proposals/batch", {"items": items})
            if status != 200:
                refused += len(batch)
            else:
                refused += sum(
                    r["status"] != 201
                    or r["proposal"]["classification"] not in ("auto_apply", "policy_gated")
                    for r in body["results"]
                )
            bar.update(len(batch))
        return refused

    with ctx.progress(len(payloads), "quality: propose turns") as bar, ThreadPoolExecutor(CLIENTS) as pool:
        return sum(pool.map(submit, [payloads[n::CLIENTS] for n in range(CLIENTS)]))


def turn_payloads(client: ApiClient, dataset: Dataset, source: str) -> list[tuple[str, dict]]:
    """Register each session as conversation evidence; return (key, proposal) for every turn."""
    payloads = []
    for conversation in dataset.conversations:
        for session in conversation.sessions:
            status, evidence, _ = client.request(
                "POST",
                "/api/v1/evidence/",
                {
                    "kind": "conversation",
                    "external_ref": f"{source}/{session[0].session}",
                    "content": {"turns": [{"speaker": t.speaker, "text": t.statement} for t in session]},
                },
            )
            assert status == 201, evidence
            binding = {k: evidence[k] for k in ("evidence_id", "revision", "content_hash")}
            payloads += [_proposal(conversation, turn, binding) for turn in session]
    return payloads


def _proposal(conversation: Conversation, turn: Turn, binding: dict) -> tuple[str, dict]:
    subject = {"kind": "user", "id": _subject(conversation, turn)}
    return f"quality-{turn.key}", {
        "action": "create",
        "memory": {
            "subject": subject,
            "scope": "user",
            "type": "episodic_event",
            "content": {
                "statement": turn.statement,
                "session_id": turn.session,
                "occurred_at": turn.occurred_at.isoformat(),
                "participants": list(conversation.speakers),
            },
            "sensitivity": "internal",
        },
        "evidence": [binding],
        "policy_context": {"acting_for_subject": subject, "consent_basis": "explicit", "risk_level": "low"},
        "rationale": "said in the conversation",
    }


def _turn_keys(tenant, dataset: Dataset) -> dict[str, str]:
    """Memory id → turn key, by the (session, subject, statement) each memory was proposed with."""
    by_text = {
        (turn.session, _subject(conversation, turn), turn.statement): turn.key
        for conversation in dataset.conversations
        for session in conversation.sessions
        for turn in session
    }
    rows = Memory.objects.filter(tenant=tenant).values_list("id", "subject_id", "content")
    return {
        str(pk): by_text[content["session_id"], subject, content["statement"]]
        for pk, subject, content in rows
    }


def _ask(ctx: Context, world, dataset: Dataset, keys: dict[str, str]) -> tuple[list[list[str]], Run]:
    client = ApiClient("127.0.0.1", ctx.stack.port, world.token)
    answers, latency = [], Run()
    started = time.perf_counter()
    for question in dataset.questions:
        status, body, seconds = client.request(
            "POST", "/api/v1/recall/search", {"query": question.text, "limit": 10}
        )
        if status != 200:
            latency.errors += 1
            answers.append([])
            continue
        latency.latencies.append(seconds)
        latency.empty += not body["results"]
        answers.append([keys[item["memory"]["memory_id"]] for item in body["results"]])
    latency.wall_seconds = time.perf_counter() - started
    return answers, latency


def _neighbours(ctx: Context, world, dataset: Dataset, keys: dict[str, str]) -> dict:
    """Ask a spread of the questions again with one neighbour each side; score the neighbours shown."""
    client = ApiClient("127.0.0.1", ctx.stack.port, world.token)
    wanted = ctx.scale.adjacency_questions
    served = []
    for question in dataset.questions[:: max(len(dataset.questions) // wanted, 1)][:wanted]:
        status, body, _ = client.request(
            "POST",
            "/api/v1/recall/search",
            {"query": question.text, "limit": 10, "context": {"neighbours": 1}},
        )
        assert status == 200, body
        for item in body["results"]:
            sides = {
                side: [keys[n["memory"]["memory_id"]] for n in item["context"][side]]
                for side in ("before", "after")
            }
            served.append((keys[item["memory"]["memory_id"]], sides))
    return adjacency(dataset, served)
