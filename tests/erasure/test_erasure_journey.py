"""A subject whose memories were dreamed about, linked, embedded, compacted, recalled and exported, erased.

Afterwards nothing of them is recallable or stored in any table (the scan reads every
column of every table the database has), the chain verifies, and the certificate,
taken over HTTP from an erasure a real executor worker applied, verifies offline.
"""

import io

import pytest
from django.core.management import call_command

from executor.transfer import export_tenant
from maintenance.compaction import propose_compactions
from memory_core.models import Memory, MemoryLink, MemoryVector
from proposals.models import DreamingRun, Proposal
from tests.database_scan import columns_holding
from tests.erasure.conftest import ask
from tests.erasure.test_erasure import _approve_all
from tests.factories import apply_released
from tests.lifecycle.test_purge_scan import GRANT_TABLES, _decide, _publish, _remember, _search_and_vote
from tests.maintenance.test_compaction import capacity  # noqa: F401
from tests.workers import celery_worker, wait_until


@pytest.mark.django_db(transaction=True)
def test_dreamed_linked_embedded_recalled_and_exported_memories_leave_nothing(
    settings, agent, api, subject, reviewers, marker, remember
):
    settings.CUSTODIAN_EMBEDDER = "hashing"
    _publish(agent, preference={"dreaming": {"mode": "auto"}, "links": {"relations": ["supports"]}})
    key = f"cadence{marker}"
    older = _remember(
        agent,
        reviewers,
        subject,
        f"{marker} wants summaries weekly",
        {"preference_key": key, "preference_value": "w"},
    )
    _remember(
        agent,
        reviewers,
        subject,
        f"{marker} wants summaries daily",
        {"preference_key": key, "preference_value": "d"},
    )
    call_command("dreaming_pass", verbosity=0)
    (merge,) = Proposal.objects.filter(dreaming_run=DreamingRun.objects.get())
    assert _decide(merge, reviewers).outcome == "applied"
    other = remember("alice likes tea in the afternoon")
    link = {
        "action": "link",
        "memory_id": str(older.pk),
        "base_revision": Memory.objects.get(pk=older.pk).revision,
        "link": {"to_memory_id": str(other.pk), "to_revision": other.revision, "relation": "supports"},
        "policy_context": {"acting_for_subject": subject},
    }
    linked = api.post("/api/v1/proposals/", link, format="json", HTTP_IDEMPOTENCY_KEY="link-for-the-journey")
    assert linked.status_code == 201, linked.content
    assert _decide(Proposal.objects.get(pk=linked.json()["id"]), reviewers).outcome == "applied"
    assert MemoryLink.objects.filter(source_id=older.pk).exists()
    assert MemoryVector.objects.filter(memory__subject_id=subject["id"]).exists()
    _search_and_vote(api, marker, subject)
    export_tenant(agent.tenant, io.StringIO())

    erasure_id = ask(api, subject).json()["erasure_id"]
    assert _approve_all(erasure_id, reviewers).outcome == "applied"

    certificate = api.get(f"/api/v1/erasures/{erasure_id}/").json()["certificate"]
    assert certificate["clean"] and len(certificate["exports"]) == 1
    assert columns_holding(marker) == {} and columns_holding(key) == {}
    # The grant, and the decisions whose reviewers decided for the person, name them by pseudonym.
    assert columns_holding(subject["id"]) == {} == certificate["scan"]["retained"]
    assert {rewritten["table"] for rewritten in certificate["pseudonymised"]} == set(GRANT_TABLES)
    assert not MemoryLink.objects.filter(target_id=other.pk).exists()
    assert Memory.objects.filter(pk=other.pk).exists()
    assert DreamingRun.objects.get().subject_id == ""  # the run stays, by ids and digests
    call_command("verify_receipts")


@pytest.mark.django_db(transaction=True)
def test_a_compacted_subject_loses_its_summary_and_its_dormant_sources(
    agent,
    api,
    about,
    subject,
    reviewers,
    marker,
    capacity,  # noqa: F811
):
    sources = about(4)
    assert propose_compactions() == 1
    compaction = Proposal.objects.get(action="compact")
    assert apply_released(compaction).outcome == "applied"
    summary = Memory.objects.get(pk=compaction.target_id)

    body = ask(api, subject).json()
    planned = {m["memory_id"]: m for m in body["plan"]["members"]}
    assert set(planned) == {str(m.pk) for m in [*sources, summary]}
    assert _approve_all(body["erasure_id"], reviewers).outcome == "applied"

    assert not Memory.objects.filter(pk__in=[*map(str, planned)]).exists()
    assert columns_holding(marker) == {}
    call_command("verify_receipts")


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_a_worker_applies_an_erasure_and_its_certificate_verifies_offline(
    agent, api, about, subject, reviewers, marker, tmp_path
):
    about(2)
    erasure_id = ask(api, subject).json()["erasure_id"]
    with celery_worker(tmp_path):
        from tests.factories import approve

        erasure = Proposal.objects.get(pk=erasure_id)
        for person in reviewers:
            approve(person, erasure)
        wait_until(
            lambda: api.get(f"/api/v1/erasures/{erasure_id}/").json()["status"] == "applied",
            timeout=120,
            what="the worker to apply the erasure",
        )
    response = api.get(f"/api/v1/erasures/{erasure_id}/certificate")
    path = tmp_path / "certificate.jsonl"
    path.write_bytes(b"".join(response.streaming_content))
    call_command("verify_export", str(path))
    assert columns_holding(marker) == {}
