// The LangGraph store's mapping on its own: the rules docs/adapters/langgraph.md writes down, as the
// Python store (custodian_client/langgraph.py) follows them.
import assert from "node:assert/strict";
import { test } from "node:test";

import { BaseStore as LangGraphBaseStore } from "@langchain/langgraph";
import { Custodian } from "custodian-client";
import {
  contentOf,
  CustodianStore,
  dedupeKey,
  defaultRoute,
  InvalidNamespaceError,
  matchesFilter,
  namespaceMatches,
  NotApplied,
  PendingReview,
  statementOf,
  storedFrom,
} from "custodian-client/langgraph";

test("dedupe keys are the digests the docs page lists", async () => {
  assert.equal(
    await dedupeKey(["user", "pm-alice"], "k"),
    "langgraph:a661f77b336f49b72c60edfc6e99bddfacef8019466ae78932cb755bf420aade",
  );
  assert.equal(
    await dedupeKey(["memories", "pm-alice", "prefs"], "Zürich"),
    "langgraph:349aaa972146f4770e98c4d27b036901c8b7a042b6f027c9002808f0d464f0b3",
  );
  assert.notEqual(await dedupeKey(["user", "a", "b"], "c"), await dedupeKey(["user", "a"], "b"));
  await assert.rejects(dedupeKey(["user", "a"], "b\0c"), InvalidNamespaceError);
});

test("the default route reads a subject kind or an alias and refuses the rest", () => {
  assert.deepEqual(defaultRoute(["memories", "u-1", "x"]), {
    subjectKind: "user",
    subjectId: "u-1",
    scope: "user",
    memoryType: "preference",
    sensitivity: "internal",
  });
  assert.equal(defaultRoute(["custom", "desk"]).scope, "shared_team");
  assert.equal(defaultRoute(["org", "quant-desk"]).subjectKind, "org");
  for (const namespace of [["user"], ["docs", "a"], ["langgraph", "x"], ["toString", "x"]]) {
    assert.throws(() => defaultRoute(namespace), InvalidNamespaceError, JSON.stringify(namespace));
  }
});

const placed = (memoryType, extra = {}) => ({ ...defaultRoute(["user", "a"]), memoryType, ...extra });

test("content keeps the value where the type has room for it, else in an attribute", () => {
  const value = { theme: "dark", sizes: [1, 2.5, null] };
  const preference = contentOf(placed("preference"), ["user", "a", "ui"], "look", value);
  assert.deepEqual([preference.preference_key, preference.preference_value], ["look", value]);
  assert.equal(preference.statement, '{"sizes": [1, 2.5, null], "theme": "dark"}');
  assert.deepEqual(preference.attributes, [
    { key: "langgraph.namespace", value: ["user", "a", "ui"] },
    { key: "langgraph.key", value: "look" },
  ]);
  const rule = contentOf(placed("procedural_rule"), ["org", "d"], "k", { text: "Do it" });
  assert.equal(rule.statement, "Do it");
  assert.deepEqual(rule.attributes[2], { key: "langgraph.value", value: { text: "Do it" } });
  assert.equal("fact_key" in contentOf(placed("semantic_fact"), ["user", "a"], "k".repeat(201), value), false);
});

test("a statement is a text field, else a rendering, at most 4,000 characters", () => {
  assert.equal(statementOf({ memory: "  ", text: "Alice likes tea" }), "Alice likes tea");
  assert.equal(statementOf({}), "(empty value)");
  assert.equal(statementOf({ text: "x".repeat(5000) }).length, 4000);
  assert.equal(Array.from(statementOf({ text: "東😀".repeat(3000) })).length, 4000, "characters, not UTF-16 units");
});

function viewOf(placement, namespace, key, value, mode = "raw") {
  return {
    return_mode: mode,
    score: 1.5,
    memory: {
      memory_id: "m-1",
      revision: 3,
      type: placement.memoryType,
      content: contentOf(placement, namespace, key, value),
      created_at: "2026-12-01T10:00:00.123456+00:00",
      updated_at: "2026-12-01T11:00:00+00:00",
    },
  };
}

for (const memoryType of ["preference", "semantic_fact", "profile", "episodic_event"]) {
  test(`an item is rebuilt exactly from a raw view (${memoryType})`, () => {
    const namespace = ["user", "a", "deep"];
    const value = { nested: { list: [{ x: 1 }], flag: true }, text: "hello" };
    const stored = storedFrom(viewOf(placed(memoryType), namespace, "k".repeat(300), value));
    assert.deepEqual([stored.item.namespace, stored.item.key, stored.item.value], [namespace, "k".repeat(300), value]);
    assert.deepEqual([stored.memoryId, stored.revision, stored.item.score], ["m-1", 3, 1.5]);
    assert.equal(stored.item.createdAt.toISOString(), "2026-12-01T10:00:00.123Z");
  });
}

test("no item comes from a view other than raw, or from a memory no store wrote", () => {
  for (const mode of ["summary", "masked", "metadata_only"]) {
    assert.equal(storedFrom(viewOf(placed("preference"), ["user", "a"], "k", { v: 1 }, mode)), null);
  }
  const foreign = viewOf(placed("preference"), ["user", "a"], "k", { v: 1 });
  foreign.memory.content = { statement: "written by another client" };
  assert.equal(storedFrom(foreign), null);
});

test("filters and namespace conditions follow LangGraph", () => {
  const value = { desk: "quant", n: 2, meta: { lang: "en" } };
  assert.ok(matchesFilter(value, { desk: "quant", n: { $gte: 2, $lt: 3 }, meta: { lang: "en" } }));
  assert.ok(!matchesFilter(value, { n: { $gt: "x" } }) && !matchesFilter(value, { desk: "macro" }));
  assert.ok(matchesFilter(value, { missing: null, n: { $ne: 3 } }));
  assert.ok(!matchesFilter(value, { missing: { $lt: 5 } }));
  const namespace = ["user", "a", "notes", "2026"];
  assert.ok(namespaceMatches(namespace, [{ matchType: "prefix", path: ["user", "*", "notes"] }]));
  assert.ok(namespaceMatches(namespace, [{ matchType: "suffix", path: ["notes", "2026"] }]));
  assert.ok(!namespaceMatches(namespace, [{ matchType: "suffix", path: ["notes"] }]));
});

test("the store is LangGraph's BaseStore, and its refusals are the client's errors", () => {
  const store = new CustodianStore(new Custodian("http://127.0.0.1:1", "unused"));
  assert.ok(store instanceof LangGraphBaseStore);
  assert.deepEqual([store.actingFor, store.riskLevel, store.deleteAction, store.waitSeconds, store.maxScan], [
    "namespace",
    "low",
    "delete",
    30,
    1000,
  ]);
  assert.throws(() => new CustodianStore(new Custodian("http://127.0.0.1:1", "unused"), { actingFor: "pm-alice" }), TypeError);
  const pending = new PendingReview({ id: "p-1", reason_codes: ["shared_fact_requires_review"] }, ["org", "d"], "k");
  assert.deepEqual([pending.code, pending.proposalId, pending.reasonCodes], ["pending_review", "p-1", ["shared_fact_requires_review"]]);
  assert.equal(new NotApplied(0, "receipt_stale", "proposal p-1: stale").name, "NotApplied");
});

test("a value that is not a JSON object, or a namespace no route places, is refused before any request", async () => {
  // Nothing listens on port 1: a request would end in ServiceUnavailable, not in these errors.
  const store = new CustodianStore(new Custodian("http://127.0.0.1:1", "unused", { retry: { maxRetries: 0 } }));
  await assert.rejects(store.put(["user", "a"], "k", { ratio: Number.NaN }), TypeError);
  await assert.rejects(store.put(["user", "a"], "k", ["a", "list"]), TypeError);
  await assert.rejects(store.put(["docs", "a"], "k", { v: 1 }), InvalidNamespaceError);
  await assert.rejects(store.get(["user"], "k"), InvalidNamespaceError);
});
