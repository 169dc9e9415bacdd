"""02: a factor conclusion waits for a PM, who approves it over REST; then it applies.

The agent registers a backtest, re-runs it industry-neutralised (revision 2) and proposes the
conclusion for the desk. A shared fact is not the agent's to make: the policy routes it to a
PM. The PM (a personal token) finds it in the review queue and approves the exact action
digest they read; only then does the executor apply it, with a receipt.
"""

from _common import RUN, agent, approve, reviewer, step
from custodian_client import WaitTimeout

DESK = {"kind": "org", "id": "quant-desk"}

with agent() as custodian, reviewer() as pm:
    run = custodian.register_evidence(
        "backtest_run", f"bt/momentum_12_1/{RUN}", {"factor": "momentum_12_1", "ic_mean": 0.031}
    )
    rerun = custodian.add_evidence_revision(
        run["evidence_id"], {"factor": "momentum_12_1", "neutralised": "industry", "ic_mean": 0.012}
    )
    step("backtest revision 2 registered", evidence_id=rerun["evidence_id"], revision=rerun["revision"])
    proposal = custodian.propose(
        "create",
        memory={
            "subject": DESK,
            "scope": "org",
            "type": "semantic_fact",
            "content": {
                "statement": "momentum_12_1 shows unstable IC after industry neutralisation",
                "factor": "momentum_12_1",
                "metric": "rank_ic",
                "value": 0.012,
                "conclusion": "unstable",
            },
            "dedupe_key": f"factor:momentum_12_1:ic_stability:{RUN}",
            "confidence": 0.7,
        },
        evidence=[rerun],
        policy_context={"acting_for_subject": DESK, "risk_level": "medium"},
        rationale="IC falls from 0.031 to 0.012 once industry-neutralised",
    )
    step(
        "proposed",
        proposal=proposal["id"],
        status=proposal["status"],
        reasons=",".join(proposal["reason_codes"]),
    )
    try:
        custodian.wait_for_receipt(proposal["id"], timeout=2)
    except WaitTimeout:
        step("no receipt while it waits for review: nothing is stored")
    approve(pm, proposal["id"], "IC drop is consistent across sub-periods")
    step("PM approved over REST")
    receipt = custodian.wait_for_receipt(proposal["id"])
    step("receipt", outcome=receipt["outcome"], memory=receipt["memory_id"])
    memory = custodian.get_memory(receipt["memory_id"], acting_for="org:quant-desk")["memory"]
    step("memory", state=memory["state"], statement=memory["content"]["statement"])
