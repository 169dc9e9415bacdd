"""The gates a ``policy_gated`` proposal must still pass when it executes.

One place for the rule, used by the executor at execution time.
"""

from evidence.models import EvidenceRevision
from memory_core.models import Memory
from proposals.models import Proposal


def failed_gates(proposal: Proposal, *, memory: Memory | None) -> list[str]:
    """Return the names of the proposal's gates that no longer hold."""
    checks = {
        "evidence_valid": lambda: not _has_invalid_evidence(proposal),
        "target_unchanged": lambda: _target_unchanged(proposal, memory),
        "no_open_conflict": lambda: not _has_open_conflict(proposal),
    }
    return [gate for gate in proposal.gates if not checks[gate]()]


def _has_invalid_evidence(proposal: Proposal) -> bool:
    return proposal.evidence_links.exclude(evidence_revision__status=EvidenceRevision.Status.VALID).exists()


def _target_unchanged(proposal: Proposal, memory: Memory | None) -> bool:
    if proposal.action == Proposal.Action.CREATE:
        return memory is None
    return memory is not None and memory.revision == proposal.base_revision


def _has_open_conflict(proposal: Proposal) -> bool:
    others = Proposal.objects.filter(tenant_id=proposal.tenant_id, status__in=Proposal.OPEN_STATUSES)
    same_target = others.filter(target_id=proposal.target_id)
    conflicts = same_target
    if proposal.dedupe_key:
        conflicts = same_target | others.filter(dedupe_key=proposal.dedupe_key)
    return conflicts.exclude(pk=proposal.pk).exists()
