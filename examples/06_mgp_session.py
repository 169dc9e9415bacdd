"""06: an MGP runtime session: MGP's own Python SDK (``mgp-client``) against Custodian's /mgp/.

Every MGP write is a Custodian proposal. A preference the user states, at low risk, applies on
its own: the write waits for the executor's receipt and answers with the stored memory. A fact
for the whole desk needs a PM: MGP answers with a task that stays pending until a reviewer
approves over REST, then completes. Search, get and the audit trail are MGP-shaped views of the
same governed recall and receipts.
"""

import os
from typing import Any

from _common import RUN, SUBJECT, URL, approve, reviewer, step, token
from mgp_client import AuditQuery, BearerAuth, MGPClient, PolicyContextBuilder, SearchQuery

DESK = {"kind": "org", "id": "quant-desk"}
# MGP's policy_context names the actor; Custodian refuses a name that is not the token's agent.
AGENT = os.environ.get("CUSTODIAN_AGENT_NAME", "research-agent")


def data(response: Any) -> dict[str, Any]:
    """An ``ok`` answer's ``data`` (the SDK types it per operation; this script reads it loosely)."""
    assert response.status == "ok", response
    return dict(response.data)


def finished(task_id: str, timeout: float = 30) -> dict[str, Any]:
    return dict(mgp.wait_for_task(task_id, timeout_seconds=timeout))


def mgp_memory(memory_id: str, subject: dict, scope: str, kind: str, statement: str) -> dict:
    return {
        "memory_id": memory_id,
        "subject": subject,
        "scope": scope,
        "type": kind,
        "content": {"statement": statement},
        "source": {"kind": "chat", "ref": f"chat/{RUN}/{memory_id}"},
        "created_at": "2026-11-30T12:00:00Z",
        "sensitivity": "internal",
    }


user = PolicyContextBuilder(
    actor_agent=AGENT,
    subject_kind=SUBJECT["kind"],
    subject_id=SUBJECT["id"],
    consent_basis="explicit",
    risk_level="low",
    correlation_id=f"mgp-{RUN}",
)
desk = PolicyContextBuilder(actor_agent=AGENT, subject_kind="org", subject_id="quant-desk")

with MGPClient(URL, auth=BearerAuth(token("CUSTODIAN_TOKEN"))) as mgp, reviewer() as pm:
    capabilities = mgp.get_capabilities()["protocol_capabilities"]
    step("capabilities", profiles=",".join(capabilities["supported_profiles"]))

    preference_id = f"mem_pref_{RUN}"
    written = data(
        mgp.write_memory(
            user.build("write"),
            mgp_memory(
                preference_id, SUBJECT, "user", "preference", f"Alice prefers weekly summaries ({RUN})"
            ),
        )
    )
    if written.get("task"):  # the executor was slower than the call's bounded wait
        written_memory = finished(written["task"]["task_id"])["result"]["memory"]
    else:
        written_memory = written["memory"]
    step("written", state=written_memory["backend_ref"]["mgp_state"], memory_id=written_memory["memory_id"])

    found = data(mgp.search_memory(user.build("search"), SearchQuery(query="weekly summaries", limit=5)))
    top = found["results"][0]
    step("searched", top=top["consumable_text"], retrieval=top["retrieval_mode"], mode=top["return_mode"])
    got = data(mgp.get_memory(user.build("read"), preference_id))
    step("got", consumable_text=got["consumable_text"])

    fact_id = f"mem_fact_{RUN}"
    fact = mgp_memory(fact_id, DESK, "org", "semantic_fact", "momentum_12_1 IC is unstable when neutralised")
    task = data(mgp.write_memory(desk.build("write"), fact))["task"]
    step("desk fact", task=task["task_id"], status=task["status"])
    proposal_id = task["message"].split()[1]  # "Proposal <id> is pending_review (…)"
    approve(pm, proposal_id, "consistent with the neutralised backtest")
    step("PM approved over REST")
    done = finished(task["task_id"], timeout=60)
    step("task", status=done["status"], memory_id=done["result"]["memory"]["memory_id"])

    expired = data(mgp.expire_memory(user.build("expire"), preference_id, reason="example finished"))
    state = expired.get("state") or finished(expired["task"]["task_id"])["result"]["state"]
    step("expired", state=state)

    events = data(mgp.query_audit(user.build("read"), AuditQuery(target_memory_id=preference_id)))["events"]
    step("audit", actions=",".join(sorted({event["action"] for event in events})))
