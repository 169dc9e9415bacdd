// The JavaScript store meets the Python store on one live Custodian. The pytest side
// (tests/client_typescript/test_typescript_langgraph.py) puts an item with the Python store, runs
// this file, then reads with the Python store what this file wrote; CUSTODIAN_INTEROP says what.
import assert from "node:assert/strict";
import { test } from "node:test";

import { CustodianStore, dedupeKey } from "custodian-client/langgraph";

import { agent, OWNER_CONTEXT } from "../helpers.mjs";

if (!process.env.CUSTODIAN_INTEROP) {
  throw new Error("CUSTODIAN_INTEROP is not set: tests/client_typescript/test_typescript_langgraph.py runs this");
}
const { namespace, python, javascript, update } = JSON.parse(process.env.CUSTODIAN_INTEROP);
const store = new CustodianStore(agent(), { consentBasis: "explicit", waitSeconds: 60 });

async function revisionOf(key) {
  const found = await agent().recall("", {
    filters: { dedupe_key: await dedupeKey(namespace, key) },
    policyContext: OWNER_CONTEXT,
  });
  return found.results.map((result) => result.memory.revision);
}

test("the Python store's item is read with the same namespace, key and value", async () => {
  const item = await store.get(namespace, python.key);
  assert.ok(item, "the JavaScript dedupe_key finds the memory the Python store wrote");
  assert.deepEqual([item.namespace, item.key, item.value], [namespace, python.key, python.value]);
  const found = await store.search(namespace.slice(0, 3), { query: python.value.text });
  assert.deepEqual(found.map((i) => [i.key, i.value]), [[python.key, python.value]]);
  assert.deepEqual(await store.listNamespaces({ prefix: namespace.slice(0, 3) }), [namespace]);
});

test("putting the value the Python store put proposes nothing", async () => {
  assert.deepEqual(await revisionOf(python.key), [1]);
  await store.put(namespace, python.key, python.value);
  assert.deepEqual(await revisionOf(python.key), [1]);
});

test("the JavaScript store updates the Python store's item and writes one of its own", async () => {
  await store.put(namespace, python.key, update);
  await store.put(namespace, javascript.key, javascript.value);
  assert.deepEqual(await revisionOf(python.key), [2]);
  assert.deepEqual((await store.get(namespace, javascript.key)).value, javascript.value);
});
