"""Auditors read receipts in the admin: readable links, the viewer's tenants only, nothing changeable."""

import uuid

from django.contrib.auth import get_user_model
from django.urls import reverse

from executor.models import Receipt
from reviews.models import ReviewDecision
from tests.factories import approve, create_payload, factor_fact, make_evidence, make_person, submit


def _receipt_url(receipt) -> str:
    return reverse("admin:executor_receipt_change", args=[receipt.pk])


def _factor_receipt(world) -> Receipt:
    decided = ReviewDecision.objects.filter(tenant=world.tenant).values_list("proposal_id", flat=True)
    return Receipt.objects.get(tenant=world.tenant, proposal_id__in=decided)


def test_the_proposal_field_shows_the_proposal_id_not_the_memory_id(client, auditor_a, tenant_a):
    client.force_login(auditor_a)
    receipt = _factor_receipt(tenant_a)
    page = client.get(_receipt_url(receipt)).content.decode()
    proposal_url = reverse("admin:proposals_proposal_change", args=[receipt.proposal_id])
    assert f'<a href="{proposal_url}">{receipt.proposal_id}</a>' in page
    assert f"{receipt.memory_id}</a>" in page  # linked as the memory, to its history
    assert f"{receipt.proposal.action} {receipt.memory_id}" not in page


def test_decisions_read_as_actor_decision_and_time_with_links(client, auditor_a, tenant_a):
    client.force_login(auditor_a)
    receipt = _factor_receipt(tenant_a)
    decision = ReviewDecision.objects.get(pk=receipt.decision_ids[0])
    page = client.get(_receipt_url(receipt)).content.decode()
    assert reverse("admin:reviews_reviewdecision_change", args=[decision.pk]) in page
    link = reverse("admin:reviews_reviewdecision_change", args=[decision.pk])
    assert f'<a href="{link}">{decision.actor.get_username()}</a>' in page
    assert f"<td>{decision.reason}</td>" in page and "<td>approve</td>" in page


def test_the_actor_filter_lists_only_people_who_decided_in_the_viewers_tenants(
    client, auditor_a, tenant_a, tenant_b
):
    second = make_person("a-second-reviewer", tenant_a.tenant)
    agent = tenant_a.handle.agent
    fact = factor_fact(dedupe_key="factor:value:ic")
    approve(second, submit(agent, create_payload(fact, [make_evidence(agent)])))
    client.force_login(auditor_a)
    response = client.get(reverse("admin:reviews_reviewdecision_changelist"))
    (actors,) = [spec for spec in response.context["cl"].filter_specs if spec.field_path == "actor"]
    listed = {label for _, label in actors.lookup_choices}
    assert listed == {tenant_a.reviewer.get_username(), "a-second-reviewer"}
    assert get_user_model().objects.filter(username="AnonymousUser").exists()  # guardian's, never listed


def test_a_superuser_sees_only_real_actors_in_the_actor_filter(admin_client, tenant_a, tenant_b):
    response = admin_client.get(reverse("admin:reviews_reviewdecision_changelist"))
    (actors,) = [spec for spec in response.context["cl"].filter_specs if spec.field_path == "actor"]
    listed = {label for _, label in actors.lookup_choices}
    assert listed == {tenant_a.reviewer.get_username(), tenant_b.reviewer.get_username()}


def test_a_foreign_receipt_answers_as_missing(client, auditor_a, tenant_a, tenant_b):
    client.force_login(auditor_a)
    foreign = client.get(_receipt_url(Receipt.objects.filter(tenant=tenant_b.tenant).first()))
    missing = client.get(reverse("admin:executor_receipt_change", args=[uuid.uuid4()]))
    assert (foreign.status_code, foreign.get("Location")) == (missing.status_code, missing.get("Location"))
