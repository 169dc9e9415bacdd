"""Publishing a registration: validate a candidate, then ask for it with a governed proposal.

A candidate is inert. ``validate_candidate`` checks it (document, policy
rules and ranking weights it names, the additive rule against the active
version, and every active memory of each type against its schema) and
records the report. ``request_publication`` turns a clean report into a
``register`` proposal by the tenant's system agent, which policy always
sends to a person holding ``tenancy.publish_registration`` (never the one
who asked); the executor publishes it with a receipt.
"""

import uuid
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from core.canonical import digest
from memory_core.models import Memory
from memory_core.ranking import WEIGHTS
from proposals.errors import PublishNotPermitted
from proposals.models import Proposal
from proposals.policy import active_rule_set
from proposals.services.submission import create_proposal
from registrations.compiled import content_problems
from registrations.document import check_document, fingerprint
from registrations.errors import CandidateNotValidated, InvalidRegistration
from registrations.evolution import breaking_changes
from registrations.models import Registration
from registrations.selectors import active_registration
from tenancy.models import Tenant
from tenancy.selectors import publishing_tenants
from tenancy.services import system_agent

FIRST_FAILURES = 10
_CHUNK = 2000


def validate_candidate(*, candidate: Registration) -> dict:
    """Check a candidate as it is now and record the report on it; return the report.

    The memory scan streams each type's active memories in chunks (ids and
    content only), counting every one and keeping the first failures, so it
    runs in constant memory at any size.
    """
    candidate = Registration.objects.get(pk=candidate.pk)  # the document as stored now
    document = candidate.document
    report: dict[str, Any] = {
        "fingerprint": fingerprint(document),
        "validated_at": timezone.now().isoformat(),
        "against_version": active_registration(tenant_id=candidate.tenant_id).version,
        "problems": [],
        "changes": [],
        "checked": {},
        "failures": 0,
        "first_failures": [],
    }
    try:
        check_document(document)
    except InvalidRegistration as refusal:
        report["problems"] = refusal.extra["problems"]
        return _record_report(candidate, report)
    report["problems"] = _reference_problems(document)
    active = active_registration(tenant_id=candidate.tenant_id)
    report["changes"] = [change.as_json() for change in breaking_changes(active.document, document)]
    for memory_type in document["types"]:
        rows = (
            Memory.objects.filter(tenant_id=candidate.tenant_id, type=memory_type, state=Memory.State.ACTIVE)
            .order_by()
            .values_list("id", "content")
            .iterator(chunk_size=_CHUNK)
        )
        checked = 0
        for memory_id, content in rows:
            checked += 1
            problems = content_problems(report["fingerprint"], document, memory_type, content)
            if problems:
                report["failures"] += 1
                if len(report["first_failures"]) < FIRST_FAILURES:
                    report["first_failures"].append(
                        {"memory_id": str(memory_id), "type": memory_type, "problems": problems[:3]}
                    )
        report["checked"][memory_type] = checked
    return _record_report(candidate, report)


def _reference_problems(document: dict) -> list[dict]:
    """The policy rules and ranking weights a document names must exist."""
    known_rules = {rule.id for rule in active_rule_set().rules}
    problems = []
    for memory_type, entry in document["types"].items():
        for rule in entry["rules"]:
            if rule not in known_rules:
                problems.append({"path": f"/types/{memory_type}/rules", "message": f"no rule {rule!r}"})
        weights = entry["ranking_weights"]
        if weights is not None and weights not in WEIGHTS:
            problems.append(
                {"path": f"/types/{memory_type}/ranking_weights", "message": f"no weights {weights!r}"}
            )
    return problems


@transaction.atomic(durable=True)
def _record_report(candidate: Registration, report: dict) -> dict:
    locked = Registration.objects.select_for_update().get(pk=candidate.pk)
    if not locked.is_editable:
        raise CandidateNotValidated(f"the candidate is {locked.status}; it can no longer be validated")
    locked.validation = report
    locked.status = Registration.Status.DRAFT
    if locked.validated_as_is:
        locked.status = Registration.Status.VALIDATED
    locked.save(update_fields=["validation", "status", "updated_at"])
    candidate.refresh_from_db()
    return report


@transaction.atomic(durable=True)
def request_publication(
    *, tenant: Tenant, candidate_id: uuid.UUID, requested_by: AbstractBaseUser, reason: str
) -> Proposal:
    """Ask, with a ``register`` proposal, for a validated candidate to become the next version.

    Refused unless the asker may publish in this tenant, the candidate's last
    validation covered exactly its document and found nothing, and it still
    extends the active version.
    """
    if not publishing_tenants(requested_by).filter(pk=tenant.pk).exists():
        raise PublishNotPermitted()
    candidate = Registration.objects.select_for_update().filter(tenant=tenant, pk=candidate_id).first()
    if candidate is None:
        raise CandidateNotValidated("no such candidate in this tenant")
    if candidate.status != Registration.Status.VALIDATED or not candidate.validated_as_is:
        raise CandidateNotValidated(report=candidate.validation)
    if candidate.base_version != active_registration(tenant_id=tenant.pk).version:
        raise CandidateNotValidated("the active version changed since this candidate was drafted")
    agent = system_agent(tenant_id=tenant.pk)
    # The candidate's status (validated → requested) is what stops a second request; a request
    # after a refusal is a new proposal, so each one gets its own key.
    key = f"register:{candidate.pk}:{uuid.uuid4()}"
    payload: Any = {
        "action": Proposal.Action.REGISTER,
        "registration_id": candidate.pk,
        "requested_by": requested_by.pk,
        "reason": reason[:2000] or f"publish registration v{candidate.base_version + 1}",
    }
    request_hash = digest({"registration_id": str(candidate.pk), "fingerprint": candidate.fingerprint})
    proposal = create_proposal(agent=agent, idempotency_key=key, payload=payload, request_hash=request_hash)
    candidate.status = Registration.Status.REQUESTED
    candidate.save(update_fields=["status", "updated_at"])
    return proposal
