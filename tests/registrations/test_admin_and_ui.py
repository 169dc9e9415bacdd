"""Registrations in the admin (read-only but a draft's document) and publish proposals in the review UI."""

import json

from django.contrib.auth.models import Permission
from django.test import Client
from guardian.shortcuts import assign_perm

from maintenance.schema_evolution import request_publication, validate_candidate
from registrations.document import DEFAULT_DOCUMENT
from registrations.models import Registration
from registrations.services import draft_registration
from tests.factories import make_person
from tests.registrations.conftest import with_sector


def _staff(username, tenant, *perms):
    person = make_person(username, tenant)
    person.is_staff = True
    person.save(update_fields=["is_staff"])
    for codename in perms:
        person.user_permissions.add(Permission.objects.get(codename=codename))
    client = Client()
    client.force_login(person)
    return person, client


def _url(candidate) -> str:
    return f"/admin/registrations/registration/{candidate.pk}/change/"


def test_an_operator_with_permission_edits_a_draft_through_the_same_checks(agent):
    candidate = draft_registration(tenant_id=agent.tenant.pk, document=DEFAULT_DOCUMENT, created_by="op")
    _, client = _staff("op", agent.tenant, "change_registration", "view_registration")
    broken = {"format": 1, "types": {}}
    refused = client.post(_url(candidate), {"document": json.dumps(broken)})
    assert refused.status_code == 200 and "every memory type must be registered" in refused.content.decode()
    saved = client.post(_url(candidate), {"document": json.dumps(with_sector())})
    assert saved.status_code == 302
    candidate.refresh_from_db()
    assert "sector" in candidate.document["types"]["semantic_fact"]["schema"]["properties"]


def test_the_admin_is_read_only_without_the_change_permission_and_for_requested_candidates(agent):
    candidate = draft_registration(tenant_id=agent.tenant.pk, document=with_sector(), created_by="op")
    _, viewer = _staff("viewer", agent.tenant, "view_registration")
    assert viewer.post(_url(candidate), {"document": "{}"}).status_code == 403
    operator, editor = _staff("op2", agent.tenant, "change_registration", "view_registration")
    assign_perm("tenancy.publish_registration", operator, agent.tenant)
    validate_candidate(candidate=candidate)
    request_publication(tenant=agent.tenant, candidate_id=candidate.pk, requested_by=operator, reason="")
    assert editor.post(_url(candidate), {"document": json.dumps(DEFAULT_DOCUMENT)}).status_code == 403
    candidate.refresh_from_db()
    assert candidate.status == Registration.Status.REQUESTED and candidate.fingerprint


def test_a_publish_proposal_renders_in_the_review_queue_and_page(agent, operator, publisher):
    candidate = draft_registration(tenant_id=agent.tenant.pk, document=with_sector(), created_by="op")
    validate_candidate(candidate=candidate)
    proposal = request_publication(
        tenant=agent.tenant, candidate_id=candidate.pk, requested_by=operator, reason=""
    )
    client = Client()
    client.force_login(publisher)
    assert client.get("/review/").status_code == 200
    assert client.get(f"/review/proposals/{proposal.pk}/").status_code == 200


def test_a_publish_receipt_reads_in_the_auditors_receipt_pages(agent, operator, publisher):
    from django.contrib.auth.models import User

    from tests.factories import apply_released, approve

    candidate = draft_registration(tenant_id=agent.tenant.pk, document=with_sector(), created_by="op")
    validate_candidate(candidate=candidate)
    proposal = request_publication(
        tenant=agent.tenant, candidate_id=candidate.pk, requested_by=operator, reason=""
    )
    approve(publisher, proposal)
    receipt = apply_released(proposal)
    client = Client()
    client.force_login(User.objects.create_superuser("root", password="pw"))
    assert client.get("/admin/executor/receipt/").status_code == 200
    assert client.get(f"/admin/executor/receipt/{receipt.pk}/change/").status_code == 200
    assert client.get(f"/admin/proposals/proposal/{proposal.pk}/change/").status_code == 200
    assert client.get(f"/admin/registrations/registration/{candidate.pk}/change/").status_code == 200


def test_the_review_page_labels_content_as_the_tenants_registration_words_it(agent, operator, publisher):
    from tests.factories import apply_released, approve, create_payload, factor_fact, make_evidence, submit

    document = with_sector()
    document["types"]["semantic_fact"]["labels"]["sector"] = "GICS sector"
    candidate = draft_registration(tenant_id=agent.tenant.pk, document=document, created_by="op")
    validate_candidate(candidate=candidate)
    publish = request_publication(
        tenant=agent.tenant, candidate_id=candidate.pk, requested_by=operator, reason=""
    )
    approve(publisher, publish)
    apply_released(publish)
    fact = factor_fact(content={**factor_fact()["content"], "sector": "banks"})
    proposal = submit(agent.agent, create_payload(fact, [make_evidence(agent.agent)]))
    client = Client()
    client.force_login(publisher)
    page = client.get(f"/review/proposals/{proposal.pk}/").content.decode()
    assert 'title="content.sector">GICS sector<' in page
