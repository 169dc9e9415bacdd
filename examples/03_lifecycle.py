"""03: lifecycle verbs are proposals too: expire, restore, delete, purge.

Alice's own expiry applies on its own; a restore needs a reviewer; a purge (after a delete)
needs two different people. Each step is applied by the executor and has its receipt.
"""

from _common import OWNER_CONTEXT, RUN, agent, approve, preference, reviewer, step
from custodian_client import errors

with agent() as custodian, reviewer() as pm, reviewer("CUSTODIAN_REVIEWER2_TOKEN") as pm2:
    said = custodian.register_evidence("conversation", f"chat/alice/{RUN}", {"text": "Dark mode, please."})
    created = custodian.propose(
        "create",
        memory=preference(f"Alice prefers dark mode ({RUN})", "theme", "dark"),
        evidence=[said],
        policy_context=OWNER_CONTEXT,
    )
    memory_id = custodian.wait_for_receipt(created["id"])["memory_id"]
    step("stored", memory=memory_id)

    expiry = custodian.expire(memory_id, "Alice switched devices", policy_context=OWNER_CONTEXT)
    step(
        "expire",
        classification=expiry["classification"],
        outcome=custodian.wait_for_receipt(expiry["id"])["outcome"],
    )
    step("state", state=custodian.get_memory(memory_id)["memory"]["state"])

    restore = custodian.restore(memory_id, "expired by mistake", policy_context=OWNER_CONTEXT)
    step("restore", status=restore["status"])
    approve(pm, restore["id"], "restore confirmed with Alice")
    step("restore", outcome=custodian.wait_for_receipt(restore["id"])["outcome"])
    step("state", state=custodian.get_memory(memory_id)["memory"]["state"])

    deletion = custodian.delete(memory_id, "Alice withdrew it", policy_context=OWNER_CONTEXT)
    step("delete", outcome=custodian.wait_for_receipt(deletion["id"])["outcome"])
    purge = custodian.purge(memory_id, f"erasure request {RUN}")
    step("purge", status=purge["status"], approvals=purge["required_approvals"])
    approve(pm, purge["id"], "erasure request verified")
    approve(pm2, purge["id"], "erasure request verified (second)")
    receipt = custodian.wait_for_receipt(purge["id"])
    step("purge", outcome=receipt["outcome"])
    try:
        custodian.get_memory(memory_id)
    except errors.NotFound:
        step("after purge: get answers 404 not_found")
