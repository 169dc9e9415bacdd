// A program using the package through its published declarations: what must type-check does,
// and each line marked @ts-expect-error must not (tsc fails the build when one stops erring).
import { Custodian, type Proposal, type RememberResult, ProposalDenied, REMEMBER_DEFAULTS } from "custodian-client";
import { custodianTools } from "custodian-client/ai";
import { CustodianStore, defaultRoute, PendingReview, type Placement } from "custodian-client/langgraph";
import { Annotation, START, StateGraph } from "@langchain/langgraph";

const custodian = new Custodian("http://127.0.0.1:8000", "cst_token", { retry: { maxRetries: 2 } });

export async function typed(): Promise<void> {
  const said = await custodian.registerEvidence("conversation", "chat/1", { text: "Weekly." });
  const proposal: Proposal = await custodian.propose("create", {
    memory: { subject: { kind: "user", id: "pm-alice" }, scope: "user", type: "preference", content: {} },
    evidence: [said],
    policyContext: { acting_for_subject: { kind: "user", id: "pm-alice" }, risk_level: "low" },
  });
  const status: string = proposal.status;
  const answer: RememberResult = await custodian.remember("Alice prefers weekly summaries", { about: "user:pm-alice" });
  const outcome: string | undefined = answer.receipt?.outcome;
  for await (const each of custodian.proposals({ status: "applied", limit: 50 })) {
    const id: string = each.id;
    void id;
  }
  try {
    await custodian.expire(answer.memoryId ?? "", "asked");
  } catch (error) {
    if (error instanceof ProposalDenied) {
      const codes: string[] = error.reasonCodes;
      void codes;
    }
  }
  const waitSeconds: 30 = REMEMBER_DEFAULTS.waitSeconds;
  void [status, outcome, waitSeconds];

  // @ts-expect-error: not an action a proposal can take
  await custodian.propose("fly", {});
  // @ts-expect-error: a scope the API does not have
  await custodian.propose("create", { memory: { subject: { kind: "user", id: "a" }, scope: "galaxy", type: "preference", content: {} } });
  // @ts-expect-error: about is required
  await custodian.remember("text", {});

  const tools = custodianTools(custodian, { about: "user:pm-alice" });
  const result = await tools.recall.execute?.({ query: "q", limit: null, include_inactive: null }, { toolCallId: "1", messages: [] });
  void result;
  // @ts-expect-error: recall takes no memory_type
  await tools.recall.execute?.({ query: "q", limit: null, include_inactive: null, memory_type: null }, { toolCallId: "2", messages: [] });
}

export async function langgraph(): Promise<void> {
  const desk = (namespace: string[]): Placement => ({ ...defaultRoute(namespace), scope: "shared_team", memoryType: "semantic_fact" });
  const store = new CustodianStore(custodian, { route: desk, consentBasis: "explicit", deleteAction: "expire" });
  const graph = new StateGraph(Annotation.Root({ said: Annotation<string>() }))
    .addNode("remember", async (state, config) => {
      try {
        await config.store?.put(["org", "quant-desk"], "k", { text: state.said });
      } catch (error) {
        if (error instanceof PendingReview) return { said: error.proposalId };
        throw error;
      }
      return {};
    })
    .addEdge(START, "remember")
    .compile({ store });
  void graph;
  const item = await store.get(["memories", "pm-alice"], "k");
  const created: Date | undefined = item?.createdAt;
  void created;

  // @ts-expect-error: a delete is a delete or an expire, never a purge
  new CustodianStore(custodian, { deleteAction: "purge" });
  // @ts-expect-error: a scope the API does not have
  const galaxy: Placement = { ...defaultRoute(["user", "a"]), scope: "galaxy" };
  void galaxy;
}
