// The AI SDK tools against a live Custodian: executed as the framework executes them, no model.
import assert from "node:assert/strict";
import { test } from "node:test";

import { generateText } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { DuplicateOfActiveMemory, NotFound } from "custodian-client";
import { custodianTools, CustodianToolError } from "custodian-client/ai";

import { agent, approve, reviewer, RUN } from "../helpers.mjs";

const custodian = agent();
const tools = custodianTools(custodian, { about: "user:pm-alice", waitSeconds: 60 });
const call = (name, input) => tools[name].execute(input, { toolCallId: `call-${name}-${crypto.randomUUID()}`, messages: [] });

const remembering = (statement, extra = {}) =>
  call("remember", {
    statement,
    about: null,
    memory_type: null,
    scope: null,
    evidence_text: null,
    evidence_kind: null,
    dedupe_key: null,
    risk_level: null,
    ...extra,
  });

test("remember, recall and forget, one after the other, as a model would call them", async () => {
  const stored = await remembering(`Alice prefers charts over tables ${RUN}`);
  assert.equal(stored.status, "stored");
  assert.match(stored.message, /^stored: memory /);
  const found = await call("recall", { query: `charts tables ${RUN}`, limit: 3, include_inactive: null });
  const item = found.items.find((i) => i.memory_id === stored.memory_id);
  assert.ok(item, JSON.stringify(found));
  assert.ok(item.text.includes("charts over tables"));
  const forgotten = await call("forget", { memory_id: stored.memory_id, reason: "Alice changed her mind", how: null, risk_level: null });
  assert.equal(forgotten.status, "expired");
  assert.ok(forgotten.receipt_id);
  assert.equal((await custodian.getMemory(stored.memory_id)).memory.state, "expired");
});

test("remember says duplicate when an active memory holds the key, and pending_review for a shared fact", async () => {
  const key = `tools:layout:${RUN}`;
  const first = await remembering(`Alice wants dense layouts ${RUN}`, { dedupe_key: key });
  const again = await remembering(`Alice wants dense layouts ${RUN}`, { dedupe_key: key });
  assert.deepEqual([first.status, again.status], ["stored", "duplicate"]);
  assert.equal(again.memory_id, first.memory_id);
  const shared = await remembering(`The desk closes books on the 25th ${RUN}`, {
    about: "org:quant-desk",
    memory_type: "semantic_fact",
    scope: "shared_team",
  });
  assert.equal(shared.status, "pending_review");
  assert.match(shared.message, /nothing changes until a reviewer approves/);
  await approve(reviewer(), shared.proposal_id, "as in the handbook");
  assert.equal((await custodian.waitForReceipt(shared.proposal_id, { timeout: 60 })).outcome, "applied");
});

test("a refusal reaches the model as a readable tool error, the typed error as its cause", async () => {
  await assert.rejects(
    call("forget", { memory_id: crypto.randomUUID(), reason: "gone", how: "revoke", risk_level: null }),
    (error) => {
      assert.ok(error instanceof CustodianToolError);
      assert.match(error.message, /^refused \(not_found\)/);
      assert.ok(error.cause instanceof NotFound);
      return true;
    },
  );
  const key = `tools:denied:${RUN}`;
  await remembering(`Alice reads on Sundays ${RUN}`, { dedupe_key: key });
  // A second memory under the same key with other words contradicts it: a policy denial.
  await assert.rejects(remembering(`Alice reads on Mondays ${RUN}`, { dedupe_key: key }), (error) => {
    assert.match(error.message, /^denied by policy \(contradicts_active_memory\); proposal \S+ is stored for audit/);
    assert.ok(!(error.cause instanceof DuplicateOfActiveMemory));
    return true;
  });
});

/** A scripted model (the outside world) that asks for one tool call; the framework does the rest. */
const scripted = (toolName, input) =>
  new MockLanguageModelV3({
    doGenerate: async () => ({
      content: [{ type: "tool-call", toolCallId: "call-1", toolName, input: JSON.stringify(input) }],
      finishReason: { unified: "tool-calls", raw: undefined },
      usage: {
        inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
        outputTokens: { total: 1, text: 1, reasoning: undefined },
      },
      warnings: [],
    }),
  });

test("through generateText: a valid call is executed, one with an undeclared key is refused unexecuted", async () => {
  const valid = { statement: `Alice likes dark charts ${RUN}`, about: null, memory_type: null, scope: null, evidence_text: null, evidence_kind: null, dedupe_key: null, risk_level: null };
  const ran = await generateText({ model: scripted("remember", valid), tools, prompt: "remember it" });
  assert.equal(ran.toolResults[0]?.output.status, "stored", JSON.stringify(ran.content));
  const before = (await custodian.recall(`violet charts ${RUN}`, { limit: 5 })).results.length;
  const refused = await generateText({
    model: scripted("remember", { ...valid, statement: `Alice likes violet charts ${RUN}`, memoryType: "semantic_fact" }),
    tools,
    prompt: "remember it",
  });
  assert.deepEqual(refused.toolResults, []);
  const failure = refused.content.find((part) => part.type === "tool-error");
  assert.ok(failure, JSON.stringify(refused.content));
  assert.match(String(failure.error), /memoryType/);
  assert.equal((await custodian.recall(`violet charts ${RUN}`, { limit: 5 })).results.length, before);
});
