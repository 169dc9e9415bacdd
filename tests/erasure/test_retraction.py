"""Retracting a source: its content goes, and so does every memory resting on it, as one reviewed plan."""

import pytest
from django.core.management import call_command

from evidence.models import EvidenceRevision
from maintenance.compaction import propose_compactions
from memory_core.models import Memory
from proposals.models import Proposal
from tests.database_scan import columns_holding
from tests.erasure.test_erasure import _approve_all
from tests.factories import apply_released, create_payload, make_agent, make_evidence, submit
from tests.maintenance.test_compaction import capacity  # noqa: F401


def _retract(api, evidence, key=None):
    body = {
        "source": {"evidence_id": str(evidence.source_id)},
        "reason": "the transcript was shared by mistake",
    }
    return api.post("/api/v1/erasures/", body, format="json", HTTP_IDEMPOTENCY_KEY=key or f"rt-{evidence.pk}")


@pytest.mark.django_db(transaction=True)
def test_retracting_a_source_removes_its_content_and_every_memory_resting_on_it(
    agent, api, remember, subject, reviewers, marker
):
    transcript = make_evidence(
        agent.agent, {"text": f"{marker} said she moves to Lisbon in May"}, "conversation"
    )
    first = remember(f"{marker} moves to Lisbon", evidence=transcript)
    second = remember(f"{marker} moves in May", evidence=transcript, subject=subject)
    kept = remember("alice likes tea in the afternoon")
    pending = submit(
        agent.agent,
        create_payload(
            {
                "subject": subject,
                "scope": "user",
                "type": "preference",
                "content": {"statement": f"{marker} packs in April"},
                "sensitivity": "internal",
            },
            [transcript],
            {"acting_for_subject": subject, "risk_level": "high"},
        ),
    )

    body = _retract(api, transcript).json()
    assert {m["memory_id"] for m in body["plan"]["members"]} == {str(first.pk), str(second.pk)}
    assert body["plan"]["proposals"] == [str(pending.pk)]
    assert _approve_all(body["erasure_id"], reviewers).outcome == "applied"

    certificate = api.get(f"/api/v1/erasures/{body['erasure_id']}/").json()["certificate"]
    assert certificate["clean"] and certificate["source"]["evidence_id"] == str(transcript.source_id)
    assert certificate["source"]["revisions"] == [{"revision": 1, "content_hash": transcript.content_hash}]
    transcript.refresh_from_db()
    assert transcript.content == {"retracted": True} and transcript.status == "invalidated"
    assert transcript.source.external_ref == f"retracted:{transcript.source_id}"
    assert columns_holding(marker) == {}
    assert Memory.objects.filter(pk=kept.pk).exists()
    assert Proposal.objects.get(pk=pending.pk).status == "withdrawn"
    call_command("verify_receipts")  # the retracted revisions are named by the certificate
    cited = submit(
        agent.agent, create_payload(dict(first.snapshot(), content={"statement": "x"}), [transcript])
    )
    assert cited.status == "denied"  # a retracted source is never cited again


@pytest.mark.django_db
def test_only_the_agent_that_registered_a_source_may_retract_it(agent, api, remember, other_agent):
    transcript = make_evidence(agent.agent, {"text": "a transcript"}, "conversation")
    remember("alice moves to Lisbon", evidence=transcript)
    colleague = make_agent(agent.tenant.name, "colleague-retracts", acts_for=())

    refused = _retract(colleague.client, transcript)
    unknown = _retract(other_agent.client, transcript)

    assert refused.status_code == 403 and refused.json()["code"] == "erasure_not_allowed"
    assert unknown.status_code == 422 and unknown.json()["code"] == "erasure_invalid"
    assert not Proposal.objects.filter(action="erase").exists()
    both = {
        "subject": {"kind": "user", "id": "pm-alice"},
        "source": {"evidence_id": str(transcript.source_id)},
    }
    answer = api.post(
        "/api/v1/erasures/", {**both, "reason": "r"}, format="json", HTTP_IDEMPOTENCY_KEY="rt-both"
    )
    assert answer.status_code == 400


@pytest.mark.django_db(transaction=True)
def test_a_summary_that_also_rests_on_other_memories_is_resummarised_from_them(
    agent,
    api,
    remember,
    reviewers,
    marker,
    capacity,  # noqa: F811
):
    transcript = make_evidence(agent.agent, {"text": f"{marker} transcript"}, "conversation")
    retracted = remember(f"{marker} prefers summaries on fridays", evidence=transcript)
    others = [remember(f"alice prefers summary number {n}") for n in range(3)]
    assert propose_compactions() == 1
    compaction = Proposal.objects.get(action="compact")
    assert apply_released(compaction).outcome == "applied"
    assert str(retracted.pk) in {m["memory_id"] for m in compaction.fields["members"]}

    body = _retract(api, transcript).json()
    assert body["plan"]["resummarised"] == [str(compaction.target_id)]
    assert _approve_all(body["erasure_id"], reviewers).outcome == "applied"

    certificate = api.get(f"/api/v1/erasures/{body['erasure_id']}/").json()["certificate"]
    (resummary,) = certificate["resummarised"]
    assert resummary["memory_id"] == str(compaction.target_id)
    # Until the re-summary applies, the summary still quotes the memory: the certificate says so.
    assert not certificate["clean"] and "memory_core_memory" in certificate["scan"]["found"]
    # The summary rests on the retracted source until then (fenced), so its re-summary is reviewed.
    assert _approve_all(resummary["proposal_id"], reviewers).outcome == "applied"
    summary = Memory.objects.get(pk=compaction.target_id)
    assert marker not in str(summary.content)
    assert columns_holding(marker) == {}  # the summary's earlier revision was withdrawn as a purge does
    call_command("verify_receipts")
    assert all(Memory.objects.filter(pk=m.pk).exists() for m in others)
    assert EvidenceRevision.objects.get(pk=transcript.pk).content == {"retracted": True}
