// The LangGraph.js store against a live Custodian with a real executor: LangGraph's store API, governed.
import assert from "node:assert/strict";
import { test } from "node:test";

import { Annotation, START, StateGraph } from "@langchain/langgraph";
import { ActingForNotGranted } from "custodian-client";
import { CustodianStore, dedupeKey, defaultRoute, PendingReview } from "custodian-client/langgraph";

import { agent, approve, reviewer, RUN, stranger, WAIT } from "../helpers.mjs";

const ALICE = ["user", "pm-alice"];
const ACTING_FOR_ALICE = { acting_for_subject: { kind: "user", id: "pm-alice" } };
const NESTED = {
  text: "Alice reads the weekly summary on Mondays",
  cadence: { every: "week", day: "monday", hours: [9, 17.5] },
  channels: ["email", { kind: "chat", muted: false }],
  note: null,
  ratio: 0.25,
  unicode: "Zürich — 東京 😀",
};

/** Alice's own store: the agent acts for the namespace's subject, who said it explicitly. */
const ownerStore = (options = {}) => new CustodianStore(agent(), { consentBasis: "explicit", waitSeconds: 60, ...options });

/** Every memory holding the item's dedupe_key, inactive ones too, as recall shows them to Alice's agent. */
async function memoriesHolding(namespace, key) {
  const found = await agent().recall("", {
    filters: { dedupe_key: await dedupeKey(namespace, key) },
    includeInactive: true,
    policyContext: ACTING_FOR_ALICE,
  });
  return found.results.map((result) => result.memory);
}

test("a nested value round-trips; a second put updates the same memory; the same value proposes nothing", async () => {
  const store = ownerStore();
  const namespace = [...ALICE, `lg${RUN}`, "prefs"];
  await store.put(namespace, "reading", NESTED);
  const item = await store.get(namespace, "reading");
  assert.deepEqual([item.namespace, item.key, item.value], [namespace, "reading", NESTED]);
  assert.ok(item.createdAt instanceof Date && item.updatedAt instanceof Date);

  await store.put(namespace, "reading", { ...NESTED, cadence: { every: "day" } });
  assert.deepEqual((await store.get(namespace, "reading")).value.cadence, { every: "day" });
  const [memory, ...others] = await memoriesHolding(namespace, "reading");
  assert.deepEqual(others, []);
  assert.deepEqual([memory.revision, memory.state, memory.type, memory.scope], [2, "active", "preference", "user"]);
  assert.deepEqual(memory.subject, { kind: "user", id: "pm-alice" });
  const reordered = Object.fromEntries(Object.entries({ ...NESTED, cadence: { every: "day" } }).reverse());
  await store.put(namespace, "reading", reordered);
  assert.equal((await memoriesHolding(namespace, "reading"))[0].revision, 2, "the same value, keys in another order");
  assert.equal(await store.get(namespace, "other-key"), null);
  assert.equal(await store.get([...ALICE, `lg${RUN}`, "elsewhere"], "reading"), null);
});

test("search is governed recall with a query, a filter, a limit and an offset", async () => {
  const store = ownerStore();
  const base = [...ALICE, `search${RUN}`];
  await store.put([...base, "notes"], "a", { text: "Alice trades momentum factors", desk: "quant", n: 1 });
  await store.put([...base, "notes"], "b", { text: "Alice prefers momentum charts", desk: "macro", n: 2 });
  await store.put([...base, "other"], "c", { text: "Alice likes momentum talks", desk: "quant", n: 3 });

  const found = await store.search([...base, "notes"], { query: "momentum" });
  assert.deepEqual(found.map((item) => item.key).sort(), ["a", "b"]);
  assert.ok(found.every((item) => typeof item.score === "number"), JSON.stringify(found));
  assert.notDeepEqual(await store.search(base, { query: "momentum", filter: { desk: "quant" } }), []);
  assert.deepEqual((await store.search(base, { filter: { desk: "quant" } })).map((i) => i.key).sort(), ["a", "c"]);
  assert.deepEqual((await store.search(base, { filter: { n: { $gte: 2 }, desk: "quant" } })).map((i) => i.key), ["c"]);
  const everything = await store.search(base, { limit: 10 });
  assert.equal(everything.length, 3);
  const page = await store.search(base, { limit: 2, offset: 1 });
  assert.deepEqual(page.map((i) => i.key), everything.slice(1, 3).map((i) => i.key));
  assert.deepEqual(await store.search([...base, "nothing-here"]), []);
});

test("listNamespaces names what the caller may read, by prefix, suffix, depth and page", async () => {
  const store = ownerStore();
  const base = [...ALICE, `ns${RUN}`];
  for (const namespace of [[...base, "prefs"], [...base, "notes", "2026"], base]) {
    await store.put(namespace, "k", { text: `Alice wrote into ${namespace.join("/")}` });
  }
  assert.deepEqual(await store.listNamespaces({ prefix: [...base, "notes"] }), [[...base, "notes", "2026"]]);
  assert.deepEqual(await store.listNamespaces({ prefix: base }), [base, [...base, "notes", "2026"], [...base, "prefs"]]);
  assert.deepEqual(await store.listNamespaces({ prefix: base, maxDepth: 4 }), [base, [...base, "notes"], [...base, "prefs"]]);
  assert.deepEqual(await store.listNamespaces({ prefix: ALICE, suffix: ["2026"] }), [[...base, "notes", "2026"]]);
  assert.deepEqual(await store.listNamespaces({ prefix: base, limit: 1, offset: 1 }), [[...base, "notes", "2026"]]);
  assert.ok((await store.listNamespaces()).some((namespace) => namespace.join("/") === base.join("/")));
});

test("delete proposes a delete; the tombstone is metadata only and the key can be used again", async () => {
  const store = ownerStore();
  const namespace = [...ALICE, `del${RUN}`];
  await store.put(namespace, "theme", { text: "Alice likes dark mode" });
  const [memory] = await memoriesHolding(namespace, "theme");
  await store.delete(namespace, "theme");
  assert.equal(await store.get(namespace, "theme"), null);
  const tombstone = await agent().getMemory(memory.memory_id, { actingFor: "user:pm-alice" });
  assert.deepEqual([tombstone.memory.state, tombstone.return_mode], ["deleted", "metadata_only"]);
  await store.delete(namespace, "theme"); // nothing left to delete: no proposal
  await store.put(namespace, "theme", { text: "Alice likes light mode" });
  assert.deepEqual((await store.get(namespace, "theme")).value, { text: "Alice likes light mode" });
});

const Turn = Annotation.Root({
  userId: Annotation(),
  key: Annotation(),
  said: Annotation(),
  recalled: Annotation(),
  got: Annotation(),
});

/** A graph whose nodes use the store LangGraph injects into their config. */
function remembering(store) {
  return new StateGraph(Turn)
    .addNode("remember", async (state, config) => {
      await config.store.put(["memories", state.userId], state.key, { text: state.said, cadence: "weekly" });
      return {};
    })
    .addNode("recall", async (state, config) => {
      const namespace = ["memories", state.userId];
      const found = await config.store.search(namespace, { query: "weekly summaries" });
      const item = await config.store.get(namespace, state.key);
      return { recalled: found.map((i) => i.value.text), got: item?.value ?? {} };
    })
    .addEdge(START, "remember")
    .addEdge("remember", "recall")
    .compile({ store });
}

test("a compiled StateGraph puts, then recalls, through the injected store", async () => {
  const graph = remembering(ownerStore());
  const turn = { userId: "pm-alice", key: `cadence-${RUN}`, said: `Weekly summaries, please (${RUN}).`, recalled: [], got: {} };
  const out = await graph.invoke(turn);
  assert.ok(out.recalled.includes(turn.said), JSON.stringify(out.recalled));
  assert.deepEqual(out.got, { text: turn.said, cadence: "weekly" });
  const again = await graph.invoke({ ...turn, said: `Weekly summaries, on Fridays (${RUN}).` });
  assert.equal(again.got.text, `Weekly summaries, on Fridays (${RUN}).`);
  assert.equal((await memoriesHolding(["memories", "pm-alice"], turn.key))[0].revision, 2);
});

/** The desk's shared facts: org quant-desk's semantic facts in shared_team scope. */
const teamFacts = (namespace) => ({ ...defaultRoute(namespace), scope: "shared_team", memoryType: "semantic_fact" });

test("a put that needs review throws PendingReview; get shows nothing until a reviewer approves over REST", async () => {
  const store = new CustodianStore(agent(), { route: teamFacts });
  const namespace = ["org", "quant-desk", `factors${RUN}`];
  const value = { text: `momentum_12_1 IC is unstable (${RUN})`, ic: 0.012 };
  const pending = await store.put(namespace, "momentum_12_1", value).then(
    () => assert.fail("a shared fact should wait for review"),
    (error) => error,
  );
  assert.ok(pending instanceof PendingReview, String(pending));
  assert.ok(pending.reasonCodes.includes("shared_fact_requires_review"), pending.reasonCodes.join());
  assert.deepEqual([pending.namespace, pending.key], [namespace, "momentum_12_1"]);
  assert.equal(await store.get(namespace, "momentum_12_1"), null);
  assert.deepEqual(await store.search(namespace), []);

  await approve(reviewer(), pending.proposalId, "confirmed on the neutralised rerun");
  assert.equal((await agent().waitForReceipt(pending.proposalId, WAIT)).outcome, "applied");
  assert.deepEqual((await store.get(namespace, "momentum_12_1")).value, value);
});

test("a graph node that puts a fact needing review catches PendingReview and keeps the proposal id", async () => {
  const Desk = Annotation.Root({ fact: Annotation(), waiting: Annotation() });
  const namespace = ["org", "quant-desk", `graph${RUN}`];
  const graph = new StateGraph(Desk)
    .addNode("note", async (state, config) => {
      try {
        await config.store.put(namespace, "value_factor", { text: state.fact });
        return { waiting: null };
      } catch (error) {
        if (!(error instanceof PendingReview)) throw error;
        return { waiting: error.proposalId };
      }
    })
    .addEdge(START, "note")
    .compile({ store: new CustodianStore(agent(), { route: teamFacts }) });
  const out = await graph.invoke({ fact: `value factor decays after 2020 (${RUN})`, waiting: null });
  assert.ok(out.waiting, JSON.stringify(out));
  assert.equal((await agent().proposal(out.waiting)).status, "pending_review");
});

/** Alice's items, confidential: only a raw view holds the value. */
const confidential = (namespace) => ({ ...defaultRoute(namespace), sensitivity: "confidential" });

test("another agent without a grant reads through the store no more than recall gives", async () => {
  const owner = ownerStore({ route: confidential });
  const namespace = [...ALICE, `hr${RUN}`];
  const pending = await owner.put(namespace, "band", { text: "Alice's salary band is B7", band: "B7" }).catch((e) => e);
  assert.ok(pending instanceof PendingReview, String(pending)); // confidential: a person decides
  await approve(reviewer(), pending.proposalId, "HR record");
  await agent().waitForReceipt(pending.proposalId, WAIT);
  assert.equal((await owner.get(namespace, "band")).value.band, "B7");

  const asItself = new CustodianStore(stranger(), { actingFor: null });
  assert.equal(await asItself.get(namespace, "band"), null);
  assert.deepEqual(await asItself.search(ALICE, { query: "salary band" }), []);
  assert.deepEqual(await asItself.listNamespaces({ prefix: namespace }), []);
  const recalled = await stranger().recall("", { filters: { dedupe_key: await dedupeKey(namespace, "band") } });
  assert.deepEqual(recalled.results.map((r) => r.return_mode), ["masked"], "what recall itself gives it");
  const claiming = new CustodianStore(stranger()); // acts for the namespace's subject, without a grant
  await assert.rejects(claiming.get(namespace, "band"), ActingForNotGranted);
  await assert.rejects(claiming.put(namespace, "band", { text: "Alice's band is A1", band: "A1" }), ActingForNotGranted);
  assert.equal((await owner.get(namespace, "band")).value.band, "B7");
});
