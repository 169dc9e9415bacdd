"""What an erasure of a subject does to the records of authority that named them: pseudonymise them.

A grant to act for the person, a review decision made for them, their history and
the admin's log of the grant stay (they say who acted for whom, and receipts and
seals cite them), but from the erasure on they name the person by
``core.pseudonyms.pseudonym`` only; a decision sealed under a key since rotated takes
the pseudonym under that key, so its seal still verifies. The grants are revoked too:
nobody acts for an erased subject. All of it runs in the erasure's transaction, before
the scan, in a fixed number of queries whatever the number of rows (one more per key
the decisions were sealed under); PostgreSQL's triggers let exactly these UPDATEs
through (``core.migrations_util.append_only_allowing``).
"""

from typing import Any

from django.contrib.admin.models import LogEntry
from django.contrib.contenttypes.models import ContentType
from django.db.models import Case, F, Value, When
from django.db.models.functions import Coalesce
from django.utils import timezone

from core.history import copy_to_history
from core.pseudonyms import pseudonym
from reviews.models import ReviewDecision
from tenancy.models import Delegation


def pseudonymise_subject(*, tenant_id: Any, subject: dict[str, str]) -> dict[str, Any]:
    """Revoke the subject's grants in the tenant and put their pseudonym in place of their id
    wherever authority records name them; return, by table and row id, what was rewritten."""
    erased = pseudonym(subject["kind"], subject["id"])
    owner = f"{subject['kind']}:{subject['id']}"
    rewritten: list[dict[str, Any]] = []

    def record(table: str, column: str, ids: list[Any]) -> None:
        if ids:
            rewritten.append({"table": table, "column": column, "ids": sorted(str(pk) for pk in ids)})

    named = {"tenant_id": tenant_id, "subject_kind": subject["kind"], "subject_id": subject["id"]}
    granted = dict(Delegation.objects.filter(**named).values_list("pk", "revoked_at"))
    revoked = [pk for pk, revoked_at in granted.items() if revoked_at is None]
    grant_history = Delegation.history.filter(**named)
    record("tenancy_historicaldelegation", "subject_id", list(grant_history.values_list("pk", flat=True)))
    grant_history.update(subject_id=erased)
    if granted:
        now = timezone.now()
        Delegation.objects.filter(pk__in=granted).update(
            subject_id=erased, revoked_at=Coalesce(F("revoked_at"), Value(now))
        )
        copy_to_history(Delegation, revoked, history_type="~", when=now)  # the revocation, renamed already
    record("tenancy_delegation", "subject_id", list(granted))
    record("django_admin_log", "object_repr", _rename_logged_grants(list(granted)))

    # Each decision takes the pseudonym under the key it was sealed with: one UPDATE per key.
    decisions = ReviewDecision.objects.filter(tenant_id=tenant_id, represented_owner=owner)
    by_pseudonym: dict[str, list[Any]] = {}
    for decision in decisions.select_related("actor"):
        by_pseudonym.setdefault(decision.owner_pseudonym(), []).append(decision.pk)
    history = ReviewDecision.history.filter(tenant_id=tenant_id, represented_owner=owner)
    history_ids = list(history.values_list("pk", flat=True))
    for value, ids in by_pseudonym.items():
        ReviewDecision.objects.filter(pk__in=ids).pseudonymise(represented_owner=value)
        history.filter(id__in=ids).update(represented_owner=value)
    history.update(represented_owner=erased)  # rows of no decision still standing, if any
    record("reviews_reviewdecision", "represented_owner", [pk for ids in by_pseudonym.values() for pk in ids])
    record("reviews_historicalreviewdecision", "represented_owner", history_ids)
    return {"pseudonymised": rewritten, "revoked_grants": sorted(str(pk) for pk in revoked)}


def _rename_logged_grants(grant_ids: list[Any]) -> list[Any]:
    """Name each grant in the admin's log as it now reads (``<tenant>/<agent> acts for erased:…``)."""
    if not grant_ids:
        return []
    logged = LogEntry.objects.filter(
        content_type=ContentType.objects.get_for_model(Delegation),
        object_id__in=[str(pk) for pk in grant_ids],
    )
    ids = list(logged.values_list("pk", flat=True))
    if ids:
        renamed = Delegation.objects.filter(pk__in=grant_ids).select_related("agent__tenant")
        names = [When(object_id=str(grant.pk), then=Value(str(grant))) for grant in renamed]
        LogEntry.objects.filter(pk__in=ids).update(object_repr=Case(*names, default=F("object_repr")))
    return ids
