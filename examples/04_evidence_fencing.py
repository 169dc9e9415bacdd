"""04: invalidated evidence fences what rests on it at once; a corrected revision revalidates it.

Needs an agent allowed to invalidate evidence (operator: can_invalidate_evidence) and a
reviewer token, since lifting a fence may need a person.
"""

from _common import OWNER_CONTEXT, RUN, agent, approve, preference, reviewer, step

with agent() as custodian, reviewer() as pm:
    notes = custodian.register_evidence("document", f"notes/alice/{RUN}", {"text": "Report in EUR."})
    created = custodian.propose(
        "create",
        memory=preference(f"Alice wants reports in EUR ({RUN})", "report_currency", "EUR"),
        evidence=[notes],
        policy_context=OWNER_CONTEXT,
    )
    memory_id = custodian.wait_for_receipt(created["id"])["memory_id"]
    step("stored", memory=memory_id, state=custodian.get_memory(memory_id)["memory"]["state"])

    custodian.invalidate_evidence(notes["evidence_id"], 1, "the notes were about another client")
    fenced = custodian.get_memory(memory_id)
    step("after invalidation", state=fenced["memory"]["state"], mode=fenced["return_mode"])
    # In the same transaction Custodian proposed a system "fence" of the memory, for the record.
    fence = next(p for p in custodian.proposals() if p["action"] == "fence" and p["memory_id"] == memory_id)
    step("fence receipt", outcome=custodian.wait_for_receipt(fence["id"])["outcome"])

    corrected = custodian.add_evidence_revision(notes["evidence_id"], {"text": "Report in EUR (confirmed)."})
    step("corrected revision", revision=corrected["revision"])
    revalidation = next(
        p for p in custodian.proposals() if p["action"] == "revalidate" and p["memory_id"] == memory_id
    )
    step("revalidation proposed", proposal=revalidation["id"], status=revalidation["status"])
    if revalidation["status"] == "pending_review":
        approve(pm, revalidation["id"], "corrected notes checked")
        step("reviewer approved the revalidation")
    receipt = custodian.wait_for_receipt(revalidation["id"])
    after = custodian.get_memory(memory_id)["memory"]
    step("revalidated", outcome=receipt["outcome"], state=after["state"], revision=after["revision"])
