"""09: a LangGraph graph whose long-term memory is Custodian: a put is a proposal, a read is recall.

A compiled graph writes Alice's preference through the injected store (it applies on its own: her
own, explicit, low-risk preference) and reads it back. A desk fact shared with the team needs a PM:
the store raises PendingReview, a get shows nothing until the PM approves over REST, then it does.
Deleting is a proposal too. The mapping is in docs/adapters/langgraph.md.
"""

from typing import TypedDict

from _common import RUN, SUBJECT, agent, approve, reviewer, step
from custodian_client.langgraph import CustodianStore, PendingReview, Placement
from langgraph.graph import START, StateGraph
from langgraph.runtime import Runtime

NAMESPACE = (SUBJECT["kind"], SUBJECT["id"], "langgraph", RUN)
FACTS = ("org", "quant-desk", "factors", RUN)


class Turn(TypedDict):
    said: str
    recalled: list[str]


def remember(state: Turn, runtime: Runtime) -> dict:
    assert runtime.store is not None
    runtime.store.put(NAMESPACE, "summary_cadence", {"text": state["said"], "cadence": "weekly"})
    return {}


def recall(state: Turn, runtime: Runtime) -> dict:
    assert runtime.store is not None
    return {"recalled": [item.value["text"] for item in runtime.store.search(NAMESPACE, query="summaries")]}


def team_facts(namespace: tuple[str, ...]) -> Placement:
    """The desk's facts: the org's semantic facts in shared_team scope, which a PM reviews."""
    return Placement("org", namespace[1], "shared_team", "semantic_fact")


builder: StateGraph[Turn, None, Turn, Turn] = StateGraph(Turn)
builder.add_node(remember)
builder.add_node(recall)
builder.add_edge(START, "remember")
builder.add_edge("remember", "recall")

with agent() as custodian, reviewer() as pm:
    store = CustodianStore(custodian, consent_basis="explicit")
    first: Turn = {"said": f"Weekly summaries, please ({RUN}).", "recalled": []}
    turn = builder.compile(store=store).invoke(first)
    step("graph recalled", said=turn["recalled"][0])
    item = store.get(NAMESPACE, "summary_cadence")
    step("got", cadence=item.value["cadence"] if item else None, key=item.key if item else None)

    desk = CustodianStore(custodian, route=team_facts)
    fact = {"text": f"momentum_12_1 shows unstable IC after neutralisation ({RUN})", "ic": 0.012}
    try:
        desk.put(FACTS, "momentum_12_1", fact)
        raise SystemExit("the desk fact should have waited for review")
    except PendingReview as pending:
        step("desk fact pending", proposal=pending.proposal_id, reasons=",".join(pending.reason_codes))
        step("get while pending", item=desk.get(FACTS, "momentum_12_1"))
        approve(pm, pending.proposal_id, "IC drop confirmed on the neutralised rerun")
        step("PM approved over REST")
        custodian.wait_for_receipt(pending.proposal_id, timeout=60)
    approved = desk.get(FACTS, "momentum_12_1")
    step("get after approval", ic=approved.value["ic"] if approved else None)

    store.delete(NAMESPACE, "summary_cadence")
    step("deleted", get=store.get(NAMESPACE, "summary_cadence"))
