"""Dreaming: a consolidation pass over N memories, and observation ingest for a conversation batch.

``selection`` times ``select_windows`` alone over the whole tenant (read-only:
keyset-ordered scans of the active memories, grouped by subject+scope+type and
clustered in memory, resumed part by part as passes do); ``pass`` runs
``dreaming_pass`` for real (freeze, plan, check, and propose each window's
actions as the system agent, one durable transaction per window) for about
the scale's ``dreaming_windows`` windows. The seeded
text gives every user a few preferences per key, so most windows come from
structured-key collisions (contradictions: reviewed updates); 5 % of the
tenant restates an earlier preference word for word (exact duplicates:
merges). ``observations`` posts a generated conversation's turns as
utterance observations (every fifth with an explicit "I prefer …", which the
rule extractor turns into a preference proposal) through POST
/api/v1/observations/batch (50 per request, the API's bound) and reports
observations/s and proposals made.
"""

import time

from bench.client import ApiClient
from bench.context import Context
from bench.conversations import generate
from bench.parts.quality import _subject
from bench.seed import seed_applied_memories
from bench.textgen import PREFERENCE, TextGenerator
from bench.world import grant_users, make_world
from maintenance.dreaming.runs import dreaming_pass
from maintenance.dreaming.windows import select_windows
from memory_core.models import Memory
from proposals.models import DreamingRun, Proposal

OBSERVATION_BATCH = 50
SEED = 17
DUPLICATES = 0.05  # share of the tenant that restates an earlier preference word for word


class _Restated(TextGenerator):
    """Memory ``i`` is the original generator's memory ``sources[i]`` again (same subject, same words)."""

    OFFSET = 10**9  # its own indices, so its proposals' idempotency keys are new

    def __init__(self, sources: list[int]):
        super().__init__(seed=SEED)
        self.sources = sources
        self._next = self.OFFSET

    def memory_payload(self, i: int, *, kind: str | None = None) -> dict:
        # Under a key of its own: a create without one would claim its statement's key, which the
        # original holds (restatements stored before such keys, or under other keys, are what
        # Dreaming merges).
        memory = super().memory_payload(self.sources[i - self.OFFSET], kind=kind)
        return {**memory, "dedupe_key": f"restated:{SEED}-{i}"}


def run(ctx: Context) -> dict:
    size, windows_cap = ctx.scale.dreaming_memories, ctx.scale.dreaming_windows
    world = make_world("bench-dreaming")
    present = Memory.objects.filter(tenant=world.tenant).count()
    if present < size:
        restated = int(size * DUPLICATES)
        original = TextGenerator(seed=SEED)
        seed_applied_memories(
            tenant=world.tenant,
            agent=world.agent,
            evidence=world.evidence,
            count=size - restated,
            text=original,
        )
        preferences = [i for i in range(size - restated) if original.kind(i) == PREFERENCE]
        seed_applied_memories(
            tenant=world.tenant,
            agent=world.agent,
            evidence=world.evidence,
            count=restated,
            text=_Restated(preferences[::3][:restated]),
        )
    started = time.perf_counter()
    windows, after, parts = [], None, 0
    while True:  # the whole tenant, part by part as passes resume (large groups are read in parts)
        found, after, _ = select_windows(tenant_id=world.tenant.id, limit=10**9, scan=size, after=after)
        windows, parts = windows + found, parts + 1
        if after is None:
            break
    selection_seconds = time.perf_counter() - started
    started = time.perf_counter()
    result = dreaming_pass(tenant_id=world.tenant.id, limit=windows_cap, scan=size)
    pass_seconds = time.perf_counter() - started
    by_trigger: dict[str, int] = {}
    for window in windows:
        by_trigger[window.window.trigger] = by_trigger.get(window.window.trigger, 0) + 1
    return {
        "memories": size,
        "selection": {
            "windows": len(windows),
            "parts": parts,
            "by_trigger": by_trigger,
            "seconds": round(selection_seconds, 3),
            "memories_per_second": round(size / selection_seconds) if selection_seconds else None,
        },
        "pass": {
            "windows": result.windows,
            "runs": result.runs,
            "proposals": result.proposals,
            "stale": result.stale,
            "refused": result.refused,
            "seconds": round(pass_seconds, 3),
            "windows_per_second": round(result.windows / pass_seconds, 1) if pass_seconds else None,
            "proposals_per_second": round(result.proposals / pass_seconds, 1) if pass_seconds else None,
            "pending_review": Proposal.objects.filter(
                dreaming_run__tenant=world.tenant, status=Proposal.Status.PENDING_REVIEW
            ).count(),
            "runs_total": DreamingRun.objects.filter(tenant=world.tenant).count(),
        },
        "observations": _observations(ctx),
    }


def _observations(ctx: Context) -> dict:
    """Post a conversation's turns as observations in batches of 50; time it."""
    dataset = generate(conversations=ctx.scale.conversation_turns // 140 + 1, sessions=14)
    world = make_world("bench-observations")
    subjects = sorted({_subject(c, t) for c in dataset.conversations for s in c.sessions for t in s})
    grant_users(world.agent, subjects)
    client = ApiClient("127.0.0.1", ctx.stack.port, world.token)
    observations = []
    for conversation in dataset.conversations:
        for session in conversation.sessions:
            status, evidence, _ = client.request(
                "POST",
                "/api/v1/evidence/",
                {
                    "kind": "conversation",
                    "external_ref": f"bench-observations/{session[0].session}",
                    "content": {"turns": [{"speaker": t.speaker, "text": t.statement} for t in session]},
                },
            )
            assert status == 201, evidence
            binding = {k: evidence[k] for k in ("evidence_id", "revision", "content_hash")}
            for turn in session:
                subject = {"kind": "user", "id": _subject(conversation, turn)}
                # Every fifth turn states a preference, so the extractor proposes something.
                text = turn.statement
                if len(observations) % 5 == 0:
                    text = f"{text} I prefer summaries of {' '.join(text.split()[:4])}."
                observations.append(
                    {
                        "kind": "utterance",
                        "text": text,
                        "subject": subject,
                        "scope": "user",
                        "evidence": [binding],
                        "policy_context": {
                            "acting_for_subject": subject,
                            "consent_basis": "explicit",
                            "risk_level": "low",
                        },
                    }
                )
    observations = observations[: ctx.scale.conversation_turns]
    proposals = refused = 0
    started = time.perf_counter()
    for start in range(0, len(observations), OBSERVATION_BATCH):
        body = {"observations": observations[start : start + OBSERVATION_BATCH]}
        status, answer, _ = client.request("POST", "/api/v1/observations/batch/", body)
        if status != 200:
            refused += len(body["observations"])
            continue
        for item in answer["observations"]:
            proposals += sum(1 for c in item.get("candidates", []) if c.get("proposal_id"))
    seconds = time.perf_counter() - started
    return {
        "observations": len(observations),
        "batch": OBSERVATION_BATCH,
        "proposals": proposals,
        "refused": refused,
        "seconds": round(seconds, 2),
        "observations_per_second": round(len(observations) / seconds, 1) if seconds else None,
    }
