"""Erasures are proposals (action ``erase``); this proxy gives them their own admin pages."""

from django.db import models

from proposals.models import Proposal


class ErasureQuerySet(models.QuerySet[Proposal]):
    def erasures(self) -> "ErasureQuerySet":
        return self.filter(action=Proposal.Action.ERASE)


class Erasure(Proposal):
    """An erasure of a subject, as operators ask for and follow it in the admin."""

    objects = ErasureQuerySet.as_manager()  # type: ignore[misc]

    class Meta:
        proxy = True
        verbose_name = "erasure"

    def __str__(self) -> str:
        return f"erasure {self.pk} ({self.status})"
