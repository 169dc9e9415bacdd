"""Two tenants, each with a row in every table the admin shows, and staff who see only one of them."""

import uuid
from dataclasses import dataclass, field

import pytest
from django.contrib import admin
from django.contrib.auth.models import Group, Permission
from rest_framework.test import APIClient

from notifications.models import EmailPreference, WebhookEndpoint
from proposals.models import OutboxEntry
from registrations.document import DEFAULT_DOCUMENT
from registrations.services import draft_registration
from reviews.selectors import AUDIT, DECIDE
from tenancy.models import Tenant
from tenancy.services import issue_user_token
from tests.factories import (
    apply_released,
    approve,
    create_payload,
    factor_fact,
    make_agent,
    make_evidence,
    make_person,
    submit,
    user_preference,
)

# A shared fact (needs one approval): its receipt names a decision.
ORG_FACT = {"subject": {"kind": "org", "id": "quant-desk"}, "scope": "org", "type": "semantic_fact"}


@dataclass
class TenantWorld:
    tenant: Tenant
    rows: dict = field(default_factory=dict)  # model -> pks created while building this tenant
    dead_entry: OutboxEntry | None = None

    def markers(self) -> set[str]:
        """Strings that must never appear on another tenant's staff's pages."""
        return {self.tenant.name, str(self.tenant.pk)}


def _all_pks() -> dict:
    return {model: set(model._default_manager.values_list("pk", flat=True)) for model in admin.site._registry}


def dead_entry(handle) -> OutboxEntry:
    """An outbox entry the executor gave up on (dead-lettered after its attempts)."""
    memory = user_preference(content={"statement": "Alice prefers monthly summaries"})
    proposal = submit(handle.agent, create_payload(memory, [make_evidence(handle.agent)]))
    entry = OutboxEntry.objects.get(proposal=proposal)
    OutboxEntry.objects.filter(pk=entry.pk).update(status=OutboxEntry.Status.DEAD, last_error="broker down")
    return entry


def build_tenant_world(name: str) -> TenantWorld:
    """Create, through the real services, at least one row of every admin-registered model for ``name``."""
    before = _all_pks()
    handle = make_agent(name, f"{name}-agent")
    reviewer = make_person(f"{name}-reviewer", handle.tenant)
    reviewer.email = f"{name}-reviewer@example.org"  # so review requests are mailed (EmailDelivery)
    reviewer.save(update_fields=["email"])
    EmailPreference.objects.create(user=reviewer, mode=EmailPreference.Mode.IMMEDIATE)
    issue_user_token(user=reviewer)
    WebhookEndpoint.objects.create(  # receipts and review requests are delivered (WebhookDelivery)
        tenant=handle.tenant,
        url=f"https://{name}.example/hooks",
        event_types=["receipt.written", "proposal.pending_review"],
    )
    Group.objects.create(name=f"{name}-team")
    memory = user_preference(content={"statement": "Alice prefers weekly summaries on Mondays"})
    apply_released(submit(handle.agent, create_payload(memory, [make_evidence(handle.agent)])))
    factor = submit(handle.agent, create_payload(factor_fact(), [make_evidence(handle.agent)]))
    approve(reviewer, factor)
    apply_released(factor)
    entry = dead_entry(handle)
    denied = APIClient()
    denied.credentials(HTTP_AUTHORIZATION=f"Bearer {handle.token}")
    assert denied.get(f"/api/v1/memories/{uuid.uuid4()}/").status_code == 404  # a DeniedRequest row
    recalled = denied.post("/api/v1/recall/search", {"query": ""}, format="json").json()
    served = recalled["results"][0]["memory"]
    vote = {"memory_id": served["memory_id"], "revision": served["revision"], "verdict": "useful"}
    feedback = denied.post(f"/api/v1/recall/{recalled['recall_id']}/feedback", vote, format="json")
    assert feedback.status_code == 201  # a RecallFeedback row
    draft_registration(tenant_id=handle.tenant.pk, document=DEFAULT_DOCUMENT, created_by=reviewer.username)
    erasure = {"subject": {"kind": "user", "id": "pm-alice"}}  # an Erasure, pending review
    submit(handle.agent, {"action": "erase", "erasure": erasure, "reason": "the person asked"})
    after = _all_pks()
    world = TenantWorld(handle.tenant, {model: after[model] - before[model] for model in after}, entry)
    world.handle, world.reviewer = handle, reviewer
    return world


@pytest.fixture
def tenant_b(db) -> TenantWorld:
    return build_tenant_world("zz-foreign-desk")


@pytest.fixture
def tenant_a(db, tenant_b) -> TenantWorld:
    return build_tenant_world("home-desk")


def staff(username: str, tenant: Tenant, perm: str, *, every_model_perm: bool = False, group: str = ""):
    """A staff member with a tenant permission on ``tenant`` only.

    ``every_model_perm`` grants every add/change/delete/view permission of every
    registered model globally, so only the tenant lines can hold them back.
    """
    user = make_person(username, tenant, perm)
    user.is_staff = True
    user.save(update_fields=["is_staff"])
    if every_model_perm:
        labels = {model._meta.app_label for model in admin.site._registry}
        user.user_permissions.set(Permission.objects.filter(content_type__app_label__in=labels))
    if group:
        user.groups.add(Group.objects.get(name=group))
    return user


@pytest.fixture
def operator_a(tenant_a):
    """Decides in tenant A and holds every model permission: the widest non-superuser."""
    return staff("a-operator", tenant_a.tenant, DECIDE, every_model_perm=True)


@pytest.fixture
def auditor_a(tenant_a):
    """Audits tenant A, with the auditors' model permissions plus change on outbox entries."""
    user = staff("a-auditor", tenant_a.tenant, AUDIT, group="auditors")
    user.user_permissions.add(Permission.objects.get(codename="change_outboxentry"))
    return user


@pytest.fixture
def auditor_client(client, agent):
    """A client logged in as an auditor of the ``agent`` fixture's tenant."""
    person = make_person("desk-auditor", agent.tenant, "tenancy.audit_tenant")
    person.is_staff = True
    person.save(update_fields=["is_staff"])
    person.groups.add(Group.objects.get(name="auditors"))
    client.force_login(person)
    return client
