"""A receipt's page tells its story: action, diff (read policy), verdict, decisions, evidence, chain."""

from django.urls import reverse

from executor.models import Receipt
from provenance.services import invalidate_evidence_revision
from tests.admin.conftest import ORG_FACT
from tests.admin.test_read_policy import _update
from tests.factories import make_evidence


def _page(client, receipt) -> str:
    response = client.get(reverse("admin:executor_receipt_change", args=[receipt.pk]))
    assert response.status_code == 200
    return response.content.decode()


def _latest() -> Receipt:
    return Receipt.objects.order_by("-seq").first()


def test_the_diff_shows_the_revision_before_and_the_one_written(auditor_client, agent, remember, marker):
    memory = remember(f"{marker} before", **ORG_FACT)
    _update(agent, memory, {"content": {"statement": f"{marker} after"}})
    page = _page(auditor_client, _latest())
    assert f"<td>{marker} before</td>" in page
    assert f"<strong>{marker} after</strong>" in page
    assert "revision 1 → 2" in page


def test_a_confidential_change_is_masked_on_the_receipt(auditor_client, agent, remember, marker):
    memory = remember(f"{marker} before", sensitivity="confidential")
    _update(agent, memory, {"content": {"statement": f"{marker} after"}})
    page = _page(auditor_client, _latest())
    assert marker not in page
    assert "masked, text hidden</span> (read rule read-confidential)" in page


def test_a_restricted_change_shows_no_content_on_the_receipt(auditor_client, agent, remember, marker):
    memory = remember(f"{marker} before", sensitivity="restricted")
    _update(agent, memory, {"content": {"statement": f"{marker} after"}})
    page = _page(auditor_client, _latest())
    assert marker not in page
    assert "details withheld, metadata only</span> (read rule read-restricted)" in page


def test_verdict_decisions_and_action_digest_are_shown(auditor_client, remember, marker):
    remember(f"{marker}", **ORG_FACT)
    receipt = _latest()
    page = _page(auditor_client, receipt)
    assert receipt.action_digest in page and receipt.policy_fingerprint in page
    assert f"<code>{receipt.proposal.matched_rule}</code>" in page
    assert "rev-a</a></td><td>desk</td><td>approve</td><td>ok</td><td>api</td>" in page


def test_evidence_is_shown_with_its_status_now(auditor_client, agent, remember, marker):
    evidence = make_evidence(agent.agent)
    remember(f"{marker}", evidence=evidence)
    invalidate_evidence_revision(revision=evidence, reason="look-ahead bug")
    page = _page(auditor_client, Receipt.objects.get(proposal__target_id__isnull=False, seq=1))
    assert "invalidated: look-ahead bug" in page
    assert "the memory is fenced" in page


def test_hashes_link_to_the_neighbouring_receipts(auditor_client, remember, marker):
    for n in range(3):
        remember(f"{marker} {n}", dedupe_key=f"n-{n}")
    middle = Receipt.objects.get(seq=2)
    page = _page(auditor_client, middle)
    assert middle.hash in page and middle.prev_hash in page
    for seq in (1, 3):
        assert reverse("admin:executor_receipt_change", args=[Receipt.objects.get(seq=seq).pk]) in page
