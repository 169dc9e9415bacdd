"""Arrange steps for the fault tests, run as ``python -m tests.faults.helper <command>`` in a subprocess.

The subprocess talks to the throwaway services named by ``DATABASE_URL`` /
``REDIS_URL`` (never pytest-django's test database) through the real
services. Each command prints one JSON line on stdout as its answer.

    setup                      tenant "faults", agent "fault-agent"; prints its token
    submit --count N [--tag T] N released auto-apply proposals (their on-commit nudges go to Redis,
                               coalesced: see proposals.services.outbox)
    poison [--tag T]           one released proposal whose application always fails (see below)
    crash-before-nudge         dies (exit 137) after COMMIT and before the on-commit nudge
    set-confidence --proposal ID --value X
                               rewrite a released proposal's frozen confidence (poison or cure it),
                               recomputing the digests of the proposal and its unfinished entries
    requeue --proposal ID      requeue the proposal's dead outbox entry (the one without a successor)
"""

import argparse
import json
import os
import sys
import time
import uuid

import django

TENANT, AGENT = "faults", "fault-agent"


def _agent():
    from tenancy.models import Agent

    return Agent.objects.select_related("tenant").get(tenant__name=TENANT, name=AGENT)


def _evidence(agent, tag: str):
    from evidence.services import register_evidence

    return register_evidence(
        agent=agent,
        kind="backtest_run",
        external_ref=f"faults-{tag}-{uuid.uuid4().hex[:12]}",
        content={"ic_mean": 0.021, "ic_ir": 0.35, "tag": tag},
    )


def _payload(revision, tag: str, n: int) -> dict:
    """An auto-apply create (rule ``auto-owner-preference``): Alice's own preference, said by her."""
    from tests.factories import create_payload, owner_context, user_preference

    memory = user_preference(
        content={
            "statement": f"Alice prefers summary variant {tag}-{n}",
            "preference_key": f"summary_{tag}_{n}",
            "preference_value": "weekly",
        }
    )
    return create_payload(memory, [revision], owner_context())


def _validated(payload: dict) -> tuple[dict, str]:
    from core.canonical import digest
    from tests.factories import as_payload

    return as_payload(payload), digest(payload)


def setup(args) -> dict:
    from tests.factories import make_agent

    handle = make_agent(TENANT, AGENT)
    return {"token": handle.token, "tenant_id": str(handle.tenant.id)}


def submit(args) -> dict:
    """Submit ``count`` proposals through ``submit_proposal``; every one must be released auto_apply."""
    from proposals.services import submit_proposal

    agent = _agent()
    started = time.monotonic()
    revision = None
    for n in range(args.count):
        if n % 50 == 0:  # a fresh backtest run every 50 proposals
            revision = _evidence(agent, args.tag)
        data, request_hash = _validated(_payload(revision, args.tag, n))
        proposal = submit_proposal(
            agent=agent, idempotency_key=f"{args.tag}-{n}", payload=data, request_hash=request_hash
        ).proposal
        if (proposal.classification, proposal.status) != ("auto_apply", "released"):
            raise SystemExit(f"proposal {proposal.id} is {proposal.classification}/{proposal.status}")
    return {"created": args.count, "seconds": round(time.monotonic() - started, 2)}


def poison(args) -> dict:
    """One released proposal whose application always fails.

    Its frozen ``fields`` get ``confidence: 5``, which violates the
    ``memory_confidence_0_1`` check constraint when the executor writes the
    memory; the proposal's and the outbox entry's ``action_digest`` are
    recomputed with the model's own ``compute_action_digest`` so the digest
    check passes. All of it in the submitting transaction, so the on-commit
    nudge can only ever see the poisoned version.
    """
    from django.db import transaction

    from proposals.models import OutboxEntry, Proposal
    from proposals.services.submission import create_proposal

    agent = _agent()
    data, request_hash = _validated(_payload(_evidence(agent, args.tag), args.tag, 0))
    with transaction.atomic():
        proposal = create_proposal(
            agent=agent, idempotency_key=f"{args.tag}-poison", payload=data, request_hash=request_hash
        )
        assert proposal.status == Proposal.Status.RELEASED, proposal.status
        proposal.fields = {**proposal.fields, "confidence": 5}
        proposal.action_digest = action_digest = proposal.compute_action_digest()
        Proposal.objects.filter(pk=proposal.pk).update(
            fields=proposal.fields, action_digest=action_digest, verdict_seal=proposal.compute_verdict_seal()
        )
        updated = OutboxEntry.objects.filter(proposal=proposal).update(action_digest=action_digest)
        assert updated == 1
    return {"proposal_id": str(proposal.id), "memory_id": str(proposal.target_id)}


def crash_before_nudge(args) -> dict:
    """Commit a released proposal, then die before the executor's on-commit nudge runs.

    ``on_commit`` hooks run in registration order after COMMIT; ours is
    registered first, so the process exits (137, as if SIGKILLed) with the
    proposal and its outbox row committed and no broker message sent.
    """
    from django.db import transaction

    from proposals.services.submission import create_proposal

    agent = _agent()
    tag = f"{args.tag}-{uuid.uuid4().hex[:8]}"
    data, request_hash = _validated(_payload(_evidence(agent, tag), tag, 0))
    with transaction.atomic():
        transaction.on_commit(lambda: os._exit(137))
        proposal = create_proposal(
            agent=agent, idempotency_key=f"{tag}-crash", payload=data, request_hash=request_hash
        )
        print(json.dumps({"proposal_id": str(proposal.id), "status": proposal.status}), flush=True)
    return {"error": "still alive after commit: the on_commit hook did not run"}


def set_confidence(args) -> dict:
    """Poison or cure a released proposal after the fact (as an operator fixing the cause would)."""
    from django.db import transaction

    from proposals.models import OutboxEntry, Proposal

    with transaction.atomic():
        proposal = Proposal.objects.select_for_update().get(pk=args.proposal)
        assert proposal.status == Proposal.Status.RELEASED, proposal.status
        proposal.fields = {**proposal.fields, "confidence": args.value}
        proposal.action_digest = action_digest = proposal.compute_action_digest()
        Proposal.objects.filter(pk=proposal.pk).update(
            fields=proposal.fields, action_digest=action_digest, verdict_seal=proposal.compute_verdict_seal()
        )
        entries = (
            OutboxEntry.objects.filter(proposal=proposal)
            .exclude(status=OutboxEntry.Status.DONE)
            .update(action_digest=action_digest)
        )
    return {"proposal_id": str(proposal.id), "entries": entries, "action_digest": action_digest}


def requeue(args) -> dict:
    from executor.services import requeue_dead_entry
    from proposals.models import OutboxEntry

    entry = OutboxEntry.objects.get(
        proposal_id=args.proposal, status=OutboxEntry.Status.DEAD, requeued_as__isnull=True
    )
    successor = requeue_dead_entry(entry=entry, requested_by="faults-test")
    return {"dead_entry_id": str(entry.id), "successor_id": str(successor.id)}


def main(argv: list[str]) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    parser = argparse.ArgumentParser(prog="tests.faults.helper")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("setup").set_defaults(run=setup)
    p = commands.add_parser("submit")
    p.add_argument("--count", type=int, required=True)
    p.add_argument("--tag", default="batch")
    p.set_defaults(run=submit)
    p = commands.add_parser("poison")
    p.add_argument("--tag", default="poison")
    p.set_defaults(run=poison)
    p = commands.add_parser("crash-before-nudge")
    p.add_argument("--tag", default="crash")
    p.set_defaults(run=crash_before_nudge)
    p = commands.add_parser("set-confidence")
    p.add_argument("--proposal", required=True)
    p.add_argument("--value", type=float, required=True)
    p.set_defaults(run=set_confidence)
    p = commands.add_parser("requeue")
    p.add_argument("--proposal", required=True)
    p.set_defaults(run=requeue)
    args = parser.parse_args(argv)
    django.setup()
    print(json.dumps(args.run(args)), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
