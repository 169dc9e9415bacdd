"""React to evidence failing or being replaced, inside evidence's own transaction."""

from django.dispatch import receiver

from evidence.models import EvidenceRevision
from evidence.signals import evidence_invalidated, evidence_revised
from proposals.services import block_proposals_citing, propose_fences, propose_revalidations


@receiver(evidence_invalidated, sender=EvidenceRevision, dispatch_uid="proposals.fence_on_invalidation")
def fence_on_invalidation(sender, revision: EvidenceRevision, **kwargs) -> None:
    block_proposals_citing(revision)
    propose_fences(revision)


@receiver(evidence_revised, sender=EvidenceRevision, dispatch_uid="proposals.revalidate_on_revision")
def revalidate_on_revision(sender, revision: EvidenceRevision, **kwargs) -> None:
    propose_revalidations(revision)
