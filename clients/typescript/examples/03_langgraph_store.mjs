// A LangGraph.js graph whose long-term memory is Custodian: a put is a proposal, a read is recall.
// CUSTODIAN_URL and CUSTODIAN_TOKEN (an agent token: make run prints one) come from the environment;
// the demo lets research-agent act for pm-alice and for org quant-desk.
import { Annotation, START, StateGraph } from "@langchain/langgraph";
import { CustodianStore, defaultRoute, PendingReview } from "custodian-client/langgraph";

const store = CustodianStore.fromUrl(process.env.CUSTODIAN_URL ?? "http://127.0.0.1:8000", process.env.CUSTODIAN_TOKEN, {
  consentBasis: "explicit", // Alice said it herself: her own low-risk preference applies on its own
});

const Turn = Annotation.Root({ userId: Annotation(), said: Annotation(), recalled: Annotation() });

const graph = new StateGraph(Turn)
  .addNode("remember", async (state, config) => {
    const namespace = ["memories", state.userId]; // subject user:<userId>, scope user
    await config.store.put(namespace, "summary_cadence", { text: state.said, cadence: "weekly" });
    return {};
  })
  .addNode("recall", async (state, config) => {
    const found = await config.store.search(["memories", state.userId], { query: "weekly summaries" });
    return { recalled: found.map((item) => item.value.text) };
  })
  .addEdge(START, "remember")
  .addEdge("remember", "recall")
  .compile({ store });

const turn = await graph.invoke({ userId: "pm-alice", said: "Weekly summaries, please.", recalled: [] });
console.log("recalled:", JSON.stringify(turn.recalled));
console.log("stored:", JSON.stringify((await store.get(["memories", "pm-alice"], "summary_cadence")).value));

// A fact shared with the desk's team is a reviewer's call: the put throws PendingReview, nothing is stored yet.
const desk = new CustodianStore(store.client, {
  route: (namespace) => ({ ...defaultRoute(namespace), scope: "shared_team", memoryType: "semantic_fact" }),
});
try {
  await desk.put(["org", "quant-desk", "factors"], "momentum_12_1", { text: "momentum_12_1 IC is unstable", ic: 0.012 });
} catch (error) {
  if (!(error instanceof PendingReview)) throw error;
  console.log(`waiting for review: ${error.proposalId} (${error.reasonCodes.join(", ")})`);
}

// Deleting is a proposal too; the memory stays as a tombstone until a reviewed purge.
await store.delete(["memories", "pm-alice"], "summary_cadence");
console.log("deleted:", await store.get(["memories", "pm-alice"], "summary_cadence"));
