"""Hybrid ranking: explained, versioned, bounded, and blind to what a view hides."""

from datetime import timedelta

from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from memory_core.activation import base_level, signal
from memory_core.models import AccessEvent, MemoryReads
from memory_core.ranking import DEFAULT_VERSION
from provenance.services import invalidate_evidence_revision
from tests.recall.searching import search

SIGNALS = {
    "lexical",
    "dense",
    "episode",
    "coverage",
    "subject",
    "when",
    "happening",
    "narrating",
    "person",
    "recency",
    "validity",
    "corroboration",
    "activation",
    "feedback",
}


def order(body: dict) -> list[str]:
    return [item["memory"]["memory_id"] for item in body["results"]]


def test_every_item_explains_its_score_and_the_event_records_the_weights_version(api, remember):
    remember("Alice prefers weekly summaries")
    body = search(api, "weekly summaries")
    assert body["weights_version"] == DEFAULT_VERSION
    item = body["results"][0]
    assert set(item["explanation"]) == SIGNALS
    contributions = [signal["contribution"] for signal in item["explanation"].values()]
    assert abs(sum(contributions) - item["score"]) < 1e-3
    assert item["explanation"]["lexical"]["value"] == 1.0  # the best raw match of its window
    assert item["explanation"]["corroboration"]["value"] > 0  # one valid evidence source
    assert AccessEvent.objects.get(pk=body["recall_id"]).ranking_version == DEFAULT_VERSION


def test_gets_record_no_weights_version(api, remember):
    memory = remember("Alice prefers weekly summaries")
    assert api.get(f"/api/v1/memories/{memory.id}/").status_code == 200
    assert AccessEvent.objects.get(action="get").ranking_version == ""


def test_the_newer_of_two_equally_matching_facts_comes_first(api, remember):
    old = remember("Maya lives in Lisbon")
    new = remember("Maya lives in Oslo")
    assert order(search(api, "where does Maya live now")) == [str(new.id), str(old.id)]


def test_events_are_ordered_by_when_they_happened_not_when_they_were_applied(api, remember):
    """A conversation loaded out of order (or applied in one batch) still knows which turn is newer."""

    def event(statement: str, occurred_at: str) -> dict:
        return {"type": "episodic_event", "content": {"statement": statement, "occurred_at": occurred_at}}

    new = remember("Maya lives in Oslo", **event("Maya lives in Oslo", "2024-03-01T10:00:00Z"))
    old = remember("Maya lives in Lisbon", **event("Maya lives in Lisbon", "2023-01-01T10:00:00Z"))
    body = search(api, "where does Maya live now")
    assert order(body) == [str(new.id), str(old.id)]
    assert body["results"][0]["explanation"]["recency"]["value"] == 1.0


def test_a_fact_whose_validity_ended_ranks_below_the_valid_one_even_if_it_matches_better(api, remember):
    ended = (timezone.now() - timedelta(days=1)).isoformat()
    stale = remember(
        "Maya works as a nurse at Cedar Health, a nurse job",
        valid_from="2020-01-01T00:00:00Z",
        valid_to=ended,
    )
    current = remember("Maya started a new nurse job at Northwind")
    body = search(api, "Maya nurse job")
    assert order(body) == [str(current.id), str(stale.id)]
    assert body["results"][1]["explanation"]["validity"]["value"] == 0.0


def test_a_masked_statement_never_moves_its_item(api, remember, marker):
    """The hidden words of a masked memory do not change its score: querying them reveals nothing."""
    remember("ledger note for the desk")
    masked = remember(
        f"ledger {marker} salary band",
        sensitivity="confidential",
        subject={"kind": "user", "id": "bob"},
    )
    plain, probing = search(api, "ledger"), search(api, f"ledger {marker}")
    first, second = (
        next(item for item in body["results"] if item["memory"]["memory_id"] == str(masked.id))
        for body in (plain, probing)
    )
    assert first["return_mode"] == "masked"
    assert first["explanation"] == second["explanation"]
    assert first["score"] == second["score"]
    assert first["explanation"]["lexical"]["contribution"] == 0.0
    assert first["explanation"]["corroboration"]["value"] == 0.0  # its evidence is not shown either
    assert order(probing)[0] != str(masked.id)


def test_a_summary_item_matches_only_on_its_summary(api, remember, marker):
    memory = remember(
        f"weekly digest {marker}", content={"statement": f"weekly digest {marker}", "summary": "a digest"}
    )
    body = search(api, f"weekly {marker}", policy_context={"data_zone": "external"})
    item = body["results"][0]
    assert (item["memory"]["memory_id"], item["return_mode"]) == (str(memory.id), "summary")
    assert item["explanation"]["lexical"]["value"] == 0.0  # neither word is in "a digest"


def test_recall_costs_the_same_queries_for_one_result_or_ten(api, remember):
    remember("cadence note 0")

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert search(api, "cadence note")["results"]
        return len(captured)

    one = queries()
    for n in range(1, 10):
        remember(f"cadence note {n}")
    assert queries() == one


def test_a_search_reads_the_evidence_of_what_it_serves_once_with_what_corroboration_counts(api, remember):
    for n in range(3):
        remember(f"cadence note {n}")
    with CaptureQueriesContext(connection) as captured:
        body = search(api, "cadence note")
    links = [q["sql"] for q in captured if q["sql"].startswith('SELECT "memory_core_memoryevidence".')]
    assert len(links) == 1, links  # ranking's read serves the page too
    for item in body["results"]:
        assert item["memory"]["evidence"] and item["explanation"]["corroboration"]["value"] > 0


def test_a_fenced_memory_never_moves_another(agent, api, remember):
    kept = remember("desk cadence note")
    before = search(api, "desk cadence")["results"][0]
    newer = remember("desk cadence note, revised")
    invalidate_evidence_revision(
        revision=newer.evidence_links.get().evidence_revision, reason="look-ahead bug"
    )
    after = next(
        item for item in search(api, "desk cadence")["results"] if item["memory"]["memory_id"] == str(kept.id)
    )
    assert after["explanation"] == before["explanation"] and after["score"] == before["score"]


def test_explicit_reads_raise_activation_and_searches_do_not(api, remember):
    """Three gets of one of two equal matches lift it; the searches that served both count for nothing."""
    read = remember("Maya keeps a desk plant")
    unread = remember("Maya keeps a desk lamp", subject={"kind": "user", "id": "pm-bob"})
    for _ in range(3):
        search(api, "Maya desk")
    for _ in range(3):
        assert api.get(f"/api/v1/memories/{read.id}/").status_code == 200
    body = search(api, "Maya desk")
    activation = {item["memory"]["memory_id"]: item["explanation"]["activation"] for item in body["results"]}
    level = base_level([(timezone.now().date(), 3)])
    assert activation[str(read.id)]["base_level"] == round(level, 4)
    assert activation[str(read.id)]["value"] == round(signal(level), 4)
    assert activation[str(unread.id)]["value"] == 0.0
    assert order(body)[0] == str(read.id)
    assert MemoryReads.objects.get(memory_id=read.id).reads == 3
