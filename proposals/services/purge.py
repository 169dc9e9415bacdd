"""What a purge removes from proposals: their copies of the purged memory's content."""

from proposals.models import Proposal


def scrub_purged_content(*, purge: Proposal) -> dict[str, int]:
    """Remove a purged memory's content from the proposals about it and their history.

    Digests stay (receipts refer to them); the frozen fields, the agent's
    rationale, the dedupe key and the policy context (which names the
    subject), all of which repeat what the memory said or whom it was about,
    do not. Runs in the executor's purge transaction; ``purge``, the proposal
    being applied, is scrubbed in memory too, as its last history row is
    written from it afterwards.
    """
    tenant_id, memory_id = purge.tenant_id, purge.target_memory_id
    proposals = Proposal.objects.filter(tenant_id=tenant_id, target_memory_id=memory_id)
    history = Proposal.history.filter(tenant_id=tenant_id, target_memory_id=memory_id)
    scrubbed = {
        "fields": {"purged": True},
        "rationale": "",
        "dedupe_key": "",
        "policy_context": {"purged": True},
    }
    for name, value in scrubbed.items():
        setattr(purge, name, value)
    return {
        "proposals.Proposal": proposals.update(**scrubbed),
        "proposals.HistoricalProposal": history.update(**scrubbed),
    }
