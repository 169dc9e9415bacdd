"""Episode context: a hit's neighbours in its evidence source, each through policy, modes and audit."""

import uuid

from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from memory_core.models import AccessEventItem, Memory, MemoryEvidence
from memory_core.mutations import update_memory
from proposals.models import OutboxEntry, Proposal
from tests.factories import apply_entry, create_payload, make_evidence, owner_context, user_preference
from tests.lifecycle.test_lifecycle_verbs import drive


def search(api, query, around=1, **body) -> dict:
    body = {"query": query, "context": {"neighbours": around}, **body}
    response = api.post("/api/v1/recall/search", body, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def ids(items: list[dict]) -> list[str]:
    return [item["memory"]["memory_id"] for item in items]


def test_a_hit_brings_the_turns_before_and_after_it_in_its_session(agent, api, remember):
    session, other = make_evidence(agent.agent, kind="conversation"), make_evidence(agent.agent)
    first = remember("Maya said hello", evidence=session)
    remember("unrelated turn elsewhere", evidence=other)
    hit = remember("Maya won the chess tournament", evidence=session)
    after = remember("Maya then flew to Porto", evidence=session)
    remember("Maya said goodbye", evidence=session)
    body = search(api, "chess tournament", limit=1)  # the turns beside it would come next as hits
    item = body["results"][0]
    assert item["memory"]["memory_id"] == str(hit.id)
    assert (ids(item["context"]["before"]), ids(item["context"]["after"])) == (
        [str(first.id)],
        [str(after.id)],
    )
    assert item["context"]["after"][0]["consumable_text"] == "Maya then flew to Porto"
    audited = set(
        AccessEventItem.objects.filter(event_id=body["recall_id"]).values_list("memory_id", flat=True)
    )
    assert audited == {hit.id, first.id, after.id}


def test_no_context_unless_asked(agent, api, remember):
    session = make_evidence(agent.agent, kind="conversation")
    remember("Maya said hello", evidence=session)
    remember("Maya won the chess tournament", evidence=session)
    response = api.post("/api/v1/recall/search", {"query": "chess"}, format="json").json()
    assert "context" not in response["results"][0]


def test_neighbours_pass_the_read_policy_and_lifecycle_like_hits(agent, api, remember, marker):
    session = make_evidence(agent.agent, kind="conversation")
    secret = remember(f"salary {marker}", evidence=session, sensitivity="confidential",
                      subject={"kind": "user", "id": "bob"})  # fmt: skip
    hit = remember("Maya won the chess tournament", evidence=session)
    revoked = remember(f"retracted {marker}", evidence=session)
    drive(agent, revoked, "revoke", [])
    internal = search(api, "chess")["results"][0]
    assert internal["memory"]["memory_id"] == str(hit.id)
    assert [n["return_mode"] for n in internal["context"]["before"]] == ["masked"]
    assert ids(internal["context"]["before"]) == [str(secret.id)] and internal["context"]["after"] == []
    external = api.post(
        "/api/v1/recall/search",
        {"query": "chess", "context": {"neighbours": 1}, "policy_context": {"data_zone": "external"}},
        format="json",
    )
    assert external.json()["results"][0]["context"] == {"before": [], "after": []}
    assert marker not in external.content.decode()


def test_context_costs_the_same_queries_for_one_hit_or_several(agent, api, remember):
    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert search(api, "chess")["results"]
        return len(captured)

    session = make_evidence(agent.agent, kind="conversation")
    remember("chess opening", evidence=session)
    remember("small talk", evidence=session)
    one = queries()
    for n in range(4):
        episode = make_evidence(agent.agent, kind="conversation")
        remember(f"chess game {n}", evidence=episode)
        remember(f"small talk {n}", evidence=episode)
    assert queries() == one


def _turn(n: int, **content) -> dict:
    return user_preference(
        content={
            "statement": f"Alice turn {n} about chess openings",
            "preference_key": f"turn_{n}",
            "preference_value": f"v{n}",
            **content,
        }
    )


def _submit_turns(api, session, memories: list[dict]) -> list[str]:
    items = [
        {"idempotency_key": f"turn-{n}", "proposal": create_payload(memory, [session], owner_context())}
        for n, memory in enumerate(memories)
    ]
    response = api.post("/api/v1/proposals/batch", {"items": items}, format="json")
    assert response.status_code == 200, response.content
    return [result["proposal"]["id"] for result in response.json()["results"]]


def _apply(proposal_ids: list[str], *, reverse: bool = False) -> list[str]:
    """Apply each through the executor (``reverse``: last submitted first, as a worker may claim them)."""
    entries = dict(OutboxEntry.objects.filter(proposal_id__in=proposal_ids).values_list("proposal_id", "id"))
    for proposal_id in reversed(proposal_ids) if reverse else proposal_ids:
        assert apply_entry(entries[uuid.UUID(proposal_id)]).outcome == "applied"
    targets = dict(Proposal.objects.filter(id__in=proposal_ids).values_list("id", "target_id"))
    return [str(targets[uuid.UUID(proposal_id)]) for proposal_id in proposal_ids]


def test_a_batch_applied_out_of_order_keeps_the_order_it_was_sent_in(agent, api):
    session = make_evidence(agent.agent, kind="conversation")
    memories = _apply(_submit_turns(api, session, [_turn(n) for n in range(5)]), reverse=True)
    response = api.post(
        "/api/v1/recall/search",
        {"query": "Alice turn 2 chess", "context": {"neighbours": 1}, "limit": 5},
        format="json",
    )
    by_id = {item["memory"]["memory_id"]: item for item in response.json()["results"]}
    middle = by_id[memories[2]]["context"]
    assert (ids(middle["before"]), ids(middle["after"])) == ([memories[1]], [memories[3]])
    first = by_id[memories[0]]["context"]
    assert (ids(first["before"]), ids(first["after"])) == ([], [memories[1]])


def test_when_a_turn_happened_comes_before_when_it_was_sent(agent, api):
    session = make_evidence(agent.agent, kind="conversation")
    late, early = (
        user_preference(
            type="episodic_event",
            content={"statement": f"Alice {word} chess move", "occurred_at": at, "participants": ["alice"]},
        )
        for word, at in (("late", "2026-11-30T10:00:00Z"), ("early", "2026-11-29T10:00:00Z"))
    )
    later_sent, sooner_sent = _apply(_submit_turns(api, session, [late, early]))  # sent, applied late first
    response = api.post(
        "/api/v1/recall/search", {"query": "early chess move", "context": {"neighbours": 1}}, format="json"
    )
    hit = response.json()["results"][0]
    assert hit["memory"]["memory_id"] == sooner_sent
    assert (ids(hit["context"]["before"]), ids(hit["context"]["after"])) == ([], [later_sent])


def test_turns_are_ordered_by_the_moment_they_happened_whatever_its_spelling(agent, api):
    """Offsets are compared as moments, a date is its midnight (UTC), a time without offset is UTC."""
    session = make_evidence(agent.agent, kind="conversation")
    said = [  # sent in this order; they happened in the order of the words' numbers
        ("third", "2026-11-30T01:00:00Z"),
        ("second", "2026-11-29T23:30:00-01:00"),  # 00:30 on the 30th
        ("first", "2026-11-29"),
        ("fourth", "2026-11-30T02:00:00"),
    ]
    turns = [
        user_preference(
            type="episodic_event",
            content={"statement": f"Alice {word} bishop move", "occurred_at": at, "participants": ["alice"]},
        )
        for word, at in said
    ]
    sent = dict(zip([word for word, _ in said], _apply(_submit_turns(api, session, turns)), strict=True))
    hit = next(
        item
        for item in search(api, "second bishop")["results"]
        if item["memory"]["memory_id"] == sent["second"]
    )
    assert (ids(hit["context"]["before"]), ids(hit["context"]["after"])) == ([sent["first"]], [sent["third"]])
    last = next(
        item
        for item in search(api, "fourth bishop")["results"]
        if item["memory"]["memory_id"] == sent["fourth"]
    )
    assert (ids(last["context"]["before"]), ids(last["context"]["after"])) == ([sent["third"]], [])


def test_a_new_revision_that_changes_when_it_happened_moves_the_turn(agent, api):
    session = make_evidence(agent.agent, kind="conversation")
    turns = [
        user_preference(
            type="episodic_event",
            content={"statement": f"Alice {word} rook move", "occurred_at": at, "participants": ["alice"]},
        )
        for word, at in (("opening", "2026-11-29T10:00:00Z"), ("ending", "2026-11-29T11:00:00Z"))
    ]
    opening, ending = _apply(_submit_turns(api, session, turns))
    memory = Memory.objects.get(id=opening)
    content = {**memory.content, "occurred_at": "2026-11-29T12:00:00Z"}
    evidence = [link.evidence_revision for link in MemoryEvidence.objects.filter(memory=memory)]
    update_memory(
        memory=memory,
        changes={"content": content},
        evidence=evidence,
        now=timezone.now(),
        change_reason="test",
    )
    assert Memory.objects.get(id=opening).happened_at.isoformat() == "2026-11-29T12:00:00+00:00"
    hit = next(
        item for item in search(api, "ending rook")["results"] if item["memory"]["memory_id"] == ending
    )
    assert (ids(hit["context"]["before"]), ids(hit["context"]["after"])) == ([], [opening])
