"""Erasures are proposals (action ``erase``); this proxy gives them their own admin pages."""

from django.db import models

from proposals.models import Proposal


class ErasureManager(models.Manager[Proposal]):
    """Only the erasures among the proposals."""

    def get_queryset(self) -> models.QuerySet[Proposal]:
        return super().get_queryset().filter(action=Proposal.Action.ERASE)


class Erasure(Proposal):
    """An erasure of a subject or a source, as operators ask for and follow it in the admin."""

    objects = ErasureManager()  # type: ignore[assignment,misc]  # a proxy narrows its manager

    class Meta:
        proxy = True
        verbose_name = "erasure"

    def __str__(self) -> str:
        return f"erasure {self.pk} ({self.status})"
