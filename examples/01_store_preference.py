"""01: store a user's preference and read the executor's receipt for it.

The agent registers what Alice said as evidence, proposes the memory bound to that exact
revision, and the executor applies it (the rule set auto-applies a user's own low-risk
preference). The receipt is the proof; recall then serves the memory.
"""

from _common import OWNER_CONTEXT, RUN, agent, preference, step

with agent() as custodian:
    said = custodian.register_evidence(
        "conversation", f"chat/alice/{RUN}", {"speaker": "pm-alice", "text": "Weekly summaries, please."}
    )
    step("evidence registered", evidence_id=said["evidence_id"], content_hash=said["content_hash"][:12])
    proposal = custodian.propose(
        "create",
        memory=preference(f"Alice prefers weekly summaries ({RUN})", "summary_cadence", "weekly"),
        evidence=[said],
        policy_context=OWNER_CONTEXT,
        rationale="Alice said so in chat",
    )
    step("proposed", proposal=proposal["id"], classification=proposal["classification"])
    receipt = custodian.wait_for_receipt(proposal["id"])
    step("receipt", outcome=receipt["outcome"], memory=receipt["memory_id"], seq=receipt["seq"])
    step("receipt hash", hash=receipt["hash"])
    found = custodian.recall(
        "weekly summaries", policy_context={"acting_for_subject": OWNER_CONTEXT["acting_for_subject"]}
    )
    top = found["results"][0]
    step("recalled", statement=top["memory"]["content"]["statement"], mode=top["return_mode"])
