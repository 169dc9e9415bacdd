"""The admin lets auditors browse everything, change nothing, and requeue dead entries."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from evidence.models import EvidenceRevision, EvidenceSource
from executor.models import Receipt
from proposals.models import OutboxEntry, Proposal
from tests.factories import create_payload, make_evidence, submit, user_preference


def _changelist(model) -> str:
    return reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")


def _change(obj) -> str:
    return reverse(f"admin:{obj._meta.app_label}_{obj._meta.model_name}_change", args=[obj.pk])


def _listed(response) -> list:
    return list(response.context["cl"].result_list)


@pytest.mark.parametrize("model", [Receipt, OutboxEntry, Proposal, EvidenceSource, EvidenceRevision])
def test_changelist_and_change_page_render(admin_client, applied_memory, model):
    assert admin_client.get(_changelist(model)).status_code == 200
    assert admin_client.get(_change(model.objects.first())).status_code == 200


def test_memory_changelist_change_and_history_pages_render(admin_client, applied_memory):
    assert admin_client.get(_changelist(type(applied_memory))).status_code == 200
    assert admin_client.get(_change(applied_memory)).status_code == 200
    history = admin_client.get(f"/admin/memory_core/memory/{applied_memory.id}/history/")
    assert history.status_code == 200
    assert str(applied_memory.id) in history.content.decode()


def test_receipt_change_page_links_proposal_memory_history_and_evidence(admin_client, applied_memory):
    receipt = Receipt.objects.get()
    page = admin_client.get(_change(receipt)).content.decode()
    assert _change(receipt.proposal) in page
    assert f"/admin/memory_core/memory/{applied_memory.id}/history/" in page
    evidence_id = receipt.evidence[0]["evidence_id"]
    assert reverse("admin:evidence_evidencesource_change", args=[evidence_id]) in page


def test_receipt_admin_has_no_add_page(admin_client, applied_memory):
    assert admin_client.get(reverse("admin:executor_receipt_add")).status_code == 403


def test_posting_to_the_receipt_change_page_changes_nothing(admin_client, applied_memory):
    receipt = Receipt.objects.get()
    response = admin_client.post(_change(receipt), {"outcome": "stale", "reason": "edited", "seq": 99})
    assert response.status_code == 403
    after = Receipt.objects.get()
    assert (after.outcome, after.reason, after.seq, after.hash) == (
        receipt.outcome,
        receipt.reason,
        receipt.seq,
        receipt.hash,
    )


def test_receipts_cannot_be_deleted_from_the_admin(admin_client, applied_memory):
    receipt = Receipt.objects.get()
    delete_url = reverse("admin:executor_receipt_delete", args=[receipt.pk])
    assert admin_client.post(delete_url, {"post": "yes"}).status_code == 403
    assert Receipt.objects.filter(pk=receipt.pk).exists()


def test_receipt_changelist_filters_by_outcome(admin_client, agent, applied_memory):
    applied = admin_client.get(_changelist(Receipt), {"outcome": "applied"})
    stale = admin_client.get(_changelist(Receipt), {"outcome": "stale"})
    assert [r.outcome for r in _listed(applied)] == ["applied"]
    assert _listed(stale) == []


def test_receipt_changelist_filters_by_tenant(admin_client, agent, other_agent, applied_memory_factory):
    applied_memory_factory(agent)
    applied_memory_factory(other_agent)
    applied_memory_factory(other_agent)
    response = admin_client.get(_changelist(Receipt), {"tenant__id__exact": str(other_agent.tenant.id)})
    assert response.status_code == 200
    listed = _listed(response)
    assert len(listed) == 2
    assert {r.tenant_id for r in listed} == {other_agent.tenant.id}


def test_receipt_changelist_searches_by_proposal_id(admin_client, agent, applied_memory_factory):
    applied_memory_factory(agent)
    wanted = applied_memory_factory(agent)
    proposal = Proposal.objects.get(target_id=wanted.id)
    response = admin_client.get(_changelist(Receipt), {"q": str(proposal.id)})
    assert response.status_code == 200
    assert [r.proposal_id for r in _listed(response)] == [proposal.id]


def _changelist_queries(client, url) -> int:
    with CaptureQueriesContext(connection) as queries:
        assert client.get(url).status_code == 200
    return len(queries)


@pytest.mark.parametrize("model", [Receipt, OutboxEntry, Proposal, EvidenceSource, EvidenceRevision])
def test_changelist_queries_do_not_grow_with_rows(admin_client, agent, applied_memory_factory, model):
    for _ in range(3):
        applied_memory_factory(agent)
    few = _changelist_queries(admin_client, _changelist(model))
    for _ in range(9):
        applied_memory_factory(agent)
    assert model.objects.count() >= 12
    assert _changelist_queries(admin_client, _changelist(model)) == few


def _dead_entry(agent) -> OutboxEntry:
    proposal = submit(agent.agent, create_payload(user_preference(), [make_evidence(agent.agent)]))
    entry = OutboxEntry.objects.get(proposal=proposal)
    OutboxEntry.objects.filter(pk=entry.pk).update(status=OutboxEntry.Status.DEAD, last_error="broker down")
    return entry


def _run_requeue(client, *entries):
    return client.post(
        _changelist(OutboxEntry),
        {"action": "requeue", "_selected_action": [str(e.pk) for e in entries]},
        follow=True,
    )


def test_requeue_action_writes_a_requeued_receipt_for_a_dead_entry(admin_client, agent, admin_user):
    entry = _dead_entry(agent)
    response = _run_requeue(admin_client, entry)
    assert response.status_code == 200
    assert "Requeued 1 dead entries." in response.content.decode()
    assert not Receipt.objects.filter(outbox_entry=entry).exists()  # the web side writes no receipt
    successor = OutboxEntry.objects.get(requeued_from=entry)
    assert successor.status == OutboxEntry.Status.PENDING
    from tests.factories import apply_entry

    apply_entry(successor.id, {"host": "t", "pid": 1, "task_id": "t"})
    receipt = Receipt.objects.get(outbox_entry=entry)
    assert receipt.outcome == Receipt.Outcome.REQUEUED
    assert admin_user.get_username() in receipt.reason
    entry.refresh_from_db()
    assert entry.status == OutboxEntry.Status.DONE


def test_requeue_action_skips_entries_that_are_not_dead(admin_client, agent):
    dead = _dead_entry(agent)
    proposal = submit(agent.agent, create_payload(user_preference(), [make_evidence(agent.agent)]))
    pending = OutboxEntry.objects.get(proposal=proposal)
    response = _run_requeue(admin_client, dead, pending)
    assert "Requeued 1 dead entries." in response.content.decode()
    assert not Receipt.objects.filter(outbox_entry=pending).exists()
    assert not OutboxEntry.objects.filter(requeued_from=pending).exists()
    assert OutboxEntry.objects.get(pk=pending.pk).status == OutboxEntry.Status.PENDING


def test_injected_markup_is_escaped_in_the_admin(admin_client, agent):
    from tests.factories import apply_released

    script = "<script>alert('x')</script>"
    payload = create_payload(user_preference(content={"statement": script}), [make_evidence(agent.agent)])
    payload["rationale"] = "<img src=x onerror=alert(1)>"
    proposal = submit(agent.agent, payload)
    apply_released(proposal)
    for url in [
        f"/admin/memory_core/memory/{proposal.target_id}/change/",
        f"/admin/proposals/proposal/{proposal.pk}/change/",
        "/admin/proposals/proposal/",
    ]:
        html = admin_client.get(url).content.decode()
        assert script not in html and "<img src=x" not in html


def test_path_traversal_in_evidence_refs_is_just_text(agent, api):
    ref = "../../../../etc/passwd"
    response = api.post(
        "/api/v1/evidence/", {"kind": "document", "external_ref": ref, "content": {}}, format="json"
    )
    assert response.status_code == 201
    detail = api.get(f"/api/v1/evidence/{response.json()['evidence_id']}/").json()
    assert detail["external_ref"] == ref
