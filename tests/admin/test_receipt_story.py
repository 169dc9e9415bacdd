"""A receipt's page tells its story: action, diff (read policy), verdict, decisions, evidence, chain."""

from django.contrib.auth.models import Group, Permission
from django.urls import reverse

from executor.models import Receipt
from provenance.services import invalidate_evidence_revision
from reviews.selectors import AUDIT
from tests.admin.conftest import ORG_FACT
from tests.admin.test_read_policy import _update
from tests.factories import make_evidence, make_person


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
    assert "rev-a</a></td><td>user:pm-alice</td><td>approve</td><td>ok</td><td>api</td>" in page


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


def test_a_create_reads_created_at_revision_1(auditor_client, remember, marker):
    remember(f"{marker}", **ORG_FACT)
    page = _page(auditor_client, _latest())
    assert "What changed (created at revision 1)" in page
    assert "none → 1" not in page


def test_evidence_shows_its_kind_reference_and_revision_linked_to_their_pages(
    auditor_client, agent, remember, marker
):
    evidence = make_evidence(agent.agent)
    remember(f"{marker}", evidence=evidence)
    page = _page(auditor_client, _latest())
    source = reverse("admin:evidence_evidencesource_change", args=[evidence.source_id])
    revision = reverse("admin:evidence_evidencerevision_change", args=[evidence.pk])
    assert "<td>backtest run</td>" in page
    assert f'<a href="{source}">{evidence.source.external_ref}</a>' in page
    assert f'<a href="{revision}">revision 1</a>' in page
    assert auditor_client.get(source).status_code == 200 and auditor_client.get(revision).status_code == 200


def test_evidence_is_plain_text_for_an_auditor_the_evidence_pages_refuse(client, agent, remember, marker):
    evidence = make_evidence(agent.agent)
    remember(f"{marker}", evidence=evidence)
    person = make_person("receipts-only", agent.tenant, AUDIT)
    person.is_staff = True
    person.save(update_fields=["is_staff"])
    person.user_permissions.set(Permission.objects.filter(codename="view_receipt"))
    client.force_login(person)
    page = _page(client, _latest())
    assert f"<td>{evidence.source.external_ref}</td>" in page
    assert "revision 1</td>" in page
    assert reverse("admin:evidence_evidencesource_change", args=[evidence.source_id]) not in page


def test_another_tenants_auditor_gets_nothing_of_the_receipt(client, agent, other_agent, remember, marker):
    evidence = make_evidence(agent.agent)
    remember(f"{marker}", evidence=evidence)
    foreign = make_person("foreign-auditor", other_agent.tenant, AUDIT)
    foreign.is_staff = True
    foreign.save(update_fields=["is_staff"])
    foreign.groups.add(Group.objects.get(name="auditors"))
    client.force_login(foreign)
    response = client.get(reverse("admin:executor_receipt_change", args=[_latest().pk]), follow=True)
    page = response.content.decode()
    assert marker not in page and evidence.source.external_ref not in page
    assert "created at revision" not in page
