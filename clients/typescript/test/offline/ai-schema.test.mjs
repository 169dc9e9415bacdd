// The tools' input schemas, checked the way the AI SDK checks a model's tool call before executing it.
import assert from "node:assert/strict";
import { test } from "node:test";

import { safeParseJSON } from "@ai-sdk/provider-utils";
import { asSchema } from "ai";
import { Custodian } from "custodian-client";
import { custodianTools } from "custodian-client/ai";

const tools = custodianTools(new Custodian("http://127.0.0.1:1", "unused"), { about: "user:pm-alice" });

const VALID = {
  remember: {
    statement: "Alice prefers weekly summaries",
    about: null,
    memory_type: null,
    scope: null,
    evidence_text: null,
    evidence_kind: null,
    dedupe_key: null,
    risk_level: null,
  },
  recall: { query: "summaries", limit: null, include_inactive: null },
  forget: { memory_id: "m1", reason: "Alice asked", how: null, risk_level: null },
};

/** What the framework does with a model's tool call text: parse it and validate it against the tool's schema. */
const parsed = (name, input) => safeParseJSON({ text: JSON.stringify(input), schema: asSchema(tools[name].inputSchema) });

for (const name of Object.keys(VALID)) {
  test(`${name}: a complete input is accepted`, async () => {
    const result = await parsed(name, VALID[name]);
    assert.equal(result.success, true, String(result.error));
    assert.deepEqual(result.value, VALID[name]);
  });

  test(`${name}: an undeclared key is refused, not dropped`, async () => {
    const result = await parsed(name, { ...VALID[name], memoryType: "semantic_fact" });
    assert.equal(result.success, false);
    assert.match(String(result.error.cause ?? result.error), /memoryType/);
  });

  test(`${name}: the JSON schema providers see is strict (no extra keys, every key required)`, async () => {
    const schema = await asSchema(tools[name].inputSchema).jsonSchema;
    assert.equal(schema.additionalProperties, false);
    assert.deepEqual([...schema.required].sort(), Object.keys(VALID[name]).sort());
    assert.equal(tools[name].strict, true);
  });
}

test("a value out of range is refused before anything is sent", async () => {
  assert.equal((await parsed("recall", { ...VALID.recall, limit: 500 })).success, false);
  assert.equal((await parsed("forget", { ...VALID.forget, how: "purge" })).success, false);
  assert.equal((await parsed("remember", { ...VALID.remember, scope: "galaxy" })).success, false);
});
