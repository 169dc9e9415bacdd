"""Admin actions declare the permission they need and refuse the whole selection if any row is foreign."""

import pytest
from django.contrib import admin
from django.contrib.auth.models import Permission
from django.urls import reverse

from evidence.models import EvidenceRevision
from executor.models import Receipt, ReceiptChain
from proposals.models import OutboxEntry

REFUSED = "Refused: a selected row is outside the tenants you may act in."


def _run(client, model, action, rows, **extra):
    url = reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")
    body = {"action": action, "_selected_action": [str(row.pk) for row in rows], **extra}
    return client.post(url, body, follow=True)


def _requeued(entry) -> bool:
    return (
        OutboxEntry.objects.filter(requeued_from=entry).exists()
        or Receipt.objects.filter(outbox_entry=entry).exists()
    )


def test_every_admin_action_declares_its_permission():
    undeclared = [
        f"{model.__name__}.{name}"
        for model, model_admin in admin.site._registry.items()
        for func, name, _ in model_admin._get_base_actions()
        if not getattr(func, "allowed_permissions", None)
    ]
    assert undeclared == []


@pytest.mark.parametrize("whose", ["own", "foreign"])
def test_an_auditor_never_requeues(client, auditor_a, tenant_a, tenant_b, whose):
    entry = (tenant_a if whose == "own" else tenant_b).dead_entry
    client.force_login(auditor_a)
    response = _run(client, OutboxEntry, "requeue", [entry])
    assert response.status_code == 200
    assert not _requeued(entry)
    assert OutboxEntry.objects.get(pk=entry.pk).status == OutboxEntry.Status.DEAD


def test_an_operator_requeues_a_dead_entry_of_their_tenant(client, operator_a, tenant_a):
    client.force_login(operator_a)
    response = _run(client, OutboxEntry, "requeue", [tenant_a.dead_entry])
    assert "Requeued 1 dead entries." in response.content.decode()
    assert OutboxEntry.objects.get(requeued_from=tenant_a.dead_entry).requested_by == "a-operator"


def test_one_foreign_row_refuses_the_whole_requeue(client, operator_a, tenant_a, tenant_b):
    client.force_login(operator_a)
    response = _run(client, OutboxEntry, "requeue", [tenant_a.dead_entry, tenant_b.dead_entry])
    assert REFUSED in response.content.decode()
    assert not _requeued(tenant_a.dead_entry) and not _requeued(tenant_b.dead_entry)


def test_requeue_is_refused_where_the_operator_only_audits(client, operator_a, tenant_a, tenant_b):
    from guardian.shortcuts import assign_perm

    assign_perm("tenancy.audit_tenant", operator_a, tenant_b.tenant)
    client.force_login(operator_a)
    response = _run(client, OutboxEntry, "requeue", [tenant_b.dead_entry])
    assert REFUSED in response.content.decode()
    assert not _requeued(tenant_b.dead_entry)


def test_a_forged_selection_is_refused_not_a_server_error(client, operator_a, tenant_a):
    client.force_login(operator_a)
    url = reverse("admin:proposals_outboxentry_changelist")
    response = client.post(url, {"action": "requeue", "_selected_action": ["not-a-uuid"]}, follow=True)
    assert response.status_code == 200
    assert not _requeued(tenant_a.dead_entry)


def test_foreign_evidence_cannot_be_invalidated(client, operator_a, tenant_b):
    revision = EvidenceRevision.objects.filter(tenant=tenant_b.tenant).first()
    client.force_login(operator_a)
    response = _run(client, EvidenceRevision, "invalidate", [revision])
    assert response.status_code == 200
    assert EvidenceRevision.objects.get(pk=revision.pk).status == EvidenceRevision.Status.VALID


def test_an_auditor_cannot_invalidate_evidence_even_with_the_model_permission(client, auditor_a, tenant_a):
    auditor_a.user_permissions.add(Permission.objects.get(codename="invalidate_evidencerevision"))
    revision = EvidenceRevision.objects.filter(tenant=tenant_a.tenant).first()
    client.force_login(auditor_a)
    _run(client, EvidenceRevision, "invalidate", [revision])
    assert EvidenceRevision.objects.get(pk=revision.pk).status == EvidenceRevision.Status.VALID


def test_verifying_a_foreign_chain_is_refused_and_reveals_nothing(client, auditor_a, tenant_a, tenant_b):
    client.force_login(auditor_a)
    foreign = ReceiptChain.objects.get(tenant=tenant_b.tenant)
    html = _run(client, ReceiptChain, "verify", [foreign]).content.decode().lower()
    assert REFUSED.lower() in html and tenant_b.tenant.name not in html
    own = ReceiptChain.objects.get(tenant=tenant_a.tenant)
    # The verdict itself is another test's business (SQLite has a known UUID-format issue there).
    assert f"{tenant_a.tenant.name}: " in _run(client, ReceiptChain, "verify", [own]).content.decode().lower()


def test_an_operator_grants_and_revokes_a_delegation_of_their_tenant_only(
    client, operator_a, tenant_a, tenant_b
):
    from tenancy.models import Delegation

    client.force_login(operator_a)
    url = reverse("admin:tenancy_delegation_add")
    grant = {"subject_kind": "user", "subject_id": "carol", "reason": "Carol's assistant"}
    foreign = client.post(url, {**grant, "agent": str(tenant_b.handle.agent.pk)})
    assert foreign.status_code == 200 and "Select a valid choice" in foreign.content.decode()
    assert client.post(url, {**grant, "agent": str(tenant_a.handle.agent.pk)}).status_code == 302
    delegation = Delegation.objects.get(subject_id="carol")
    assert (delegation.tenant, delegation.granted_by) == (tenant_a.tenant, operator_a)
    _run(client, Delegation, "revoke", [delegation])
    assert Delegation.objects.get(pk=delegation.pk).revoked_at is not None
    foreign_grant = Delegation.objects.filter(tenant=tenant_b.tenant).first()
    assert REFUSED in _run(client, Delegation, "revoke", [foreign_grant]).content.decode()
    assert Delegation.objects.get(pk=foreign_grant.pk).revoked_at is None
