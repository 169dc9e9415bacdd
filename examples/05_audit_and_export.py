"""05: what was read, by whom, and every receipt: an audit query and a JSON Lines export.

Every search and get is an access event; every applied (or refused) proposal has a
hash-chained receipt. CUSTODIAN_EXPORT names the export file (default custodian-export.jsonl).
"""

import json
import os

from _common import OWNER_CONTEXT, RUN, SUBJECT, agent, preference, step

with agent() as custodian:
    said = custodian.register_evidence("conversation", f"chat/alice/{RUN}", {"text": "Summaries in French."})
    created = custodian.propose(
        "create",
        memory=preference(f"Alice reads summaries in French ({RUN})", "summary_language", "fr"),
        evidence=[said],
        policy_context=OWNER_CONTEXT,
    )
    memory_id = custodian.wait_for_receipt(created["id"])["memory_id"]
    custodian.recall(f"summaries French {RUN}", policy_context={"acting_for_subject": SUBJECT})
    custodian.get_memory(memory_id, correlation_id=f"example-05-{RUN}")

    events = list(custodian.audit_events(memory=memory_id))
    step(
        "audit events for the memory",
        count=len(events),
        actions=",".join(sorted({e["action"] for e in events})),
    )
    tagged = list(custodian.audit_events(correlation_id=f"example-05-{RUN}"))
    step("audit events by correlation id", count=len(tagged))

    path = os.environ.get("CUSTODIAN_EXPORT", "custodian-export.jsonl")
    receipts = 0
    with open(path, "w") as export:
        for receipt in custodian.all_receipts():
            export.write(json.dumps({"kind": "receipt", **receipt}) + "\n")
            receipts += 1
        for event in custodian.audit_events():
            export.write(json.dumps({"kind": "access_event", **event}) + "\n")
    step("exported", path=path, receipts=receipts)
