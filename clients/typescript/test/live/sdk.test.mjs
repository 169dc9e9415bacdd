// The client against a live Custodian with a real executor worker (started by the pytest side).
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  BadRequest,
  Conflict,
  CustodianError,
  EvidenceExists,
  EvidenceMismatch,
  FeedbackAlreadyGiven,
  NotAuthenticated,
  NotFound,
  ProposalDenied,
  StaleDigest,
  ValidationFailed,
  WaitTimeout,
  Custodian,
} from "custodian-client";

import { agent, approve, OWNER_CONTEXT, preference, reviewer, RUN, URL_, WAIT } from "../helpers.mjs";

const custodian = agent();
const pm = reviewer();

async function stored(statement, extra = {}) {
  const said = await custodian.registerEvidence("conversation", `chat/${crypto.randomUUID()}`, { text: statement });
  const proposal = await custodian.propose("create", {
    memory: preference(statement, extra),
    evidence: [said],
    policyContext: OWNER_CONTEXT,
  });
  return custodian.waitForReceipt(proposal.id, WAIT);
}

test("remember stores an owner's explicit preference, with its receipt", async () => {
  const answer = await custodian.remember(`Alice prefers weekly summaries (${RUN})`, {
    about: "user:pm-alice",
    waitSeconds: 60,
  });
  assert.equal(answer.status, "stored");
  assert.equal(answer.receipt.outcome, "applied");
  assert.equal(answer.proposal.classification, "auto_apply");
  const read = await custodian.getMemory(answer.memoryId, { actingFor: "user:pm-alice" });
  assert.equal(read.memory.state, "active");
  assert.equal(read.memory.content.statement, `Alice prefers weekly summaries (${RUN})`);
});

test("remember of what an active memory already says answers duplicate, naming that memory", async () => {
  const options = { about: "user:pm-alice", dedupeKey: `cadence:${RUN}`, waitSeconds: 60 };
  const first = await custodian.remember(`Alice wants the digest on Mondays (${RUN})`, options);
  assert.equal(first.status, "stored");
  const again = await custodian.remember(`Alice wants the digest on Mondays (${RUN})`, options);
  assert.equal(again.status, "duplicate");
  assert.equal(again.memoryId, first.memoryId);
  assert.ok(again.proposalId, "the denied proposal is stored for audit and named");
  assert.equal(again.receipt, null);
});

test("remember of a shared fact waits for review; the receipt comes once a reviewer approves", async () => {
  const answer = await custodian.remember(`The desk rebalances on Fridays (${RUN})`, {
    about: "org:quant-desk",
    type: "semantic_fact",
    scope: "shared_team",
    evidenceKind: "document",
    evidenceText: "Desk handbook: rebalancing happens every Friday.",
  });
  assert.equal(answer.status, "pending_review");
  assert.equal(answer.receipt, null);
  assert.ok(answer.proposal.reason_codes.includes("shared_fact_requires_review"));
  await assert.rejects(custodian.waitForReceipt(answer.proposalId, { timeout: 0.5 }), WaitTimeout);
  await approve(pm, answer.proposalId, "matches the handbook");
  const receipt = await custodian.waitForReceipt(answer.proposalId, WAIT);
  assert.equal(receipt.outcome, "applied");
  assert.equal(receipt.proposal_id, answer.proposalId);
});

test("propose then waitForReceipt: the executor's receipt, readable by id and by memory", async () => {
  const receipt = await stored(`Alice reads reports on paper (${RUN})`);
  assert.equal(receipt.outcome, "applied");
  assert.deepEqual((await custodian.receipt(receipt.id)).hash, receipt.hash);
  const forMemory = await custodian.receipts({ memory: receipt.memory_id });
  assert.ok(forMemory.some((r) => r.id === receipt.id));
});

test("the same Idempotency-Key twice gives back the one proposal", async () => {
  const said = await custodian.registerEvidence("conversation", `chat/${crypto.randomUUID()}`, { text: "Tea." });
  const key = `replay-${RUN}`;
  const body = { memory: preference(`Alice drinks tea (${RUN})`), evidence: [said], policyContext: OWNER_CONTEXT };
  const first = await custodian.propose("create", { ...body, idempotencyKey: key });
  const again = await custodian.propose("create", { ...body, idempotencyKey: key });
  assert.equal(again.id, first.id);
});

test("refusals come as their classes: 401, 404, 409, 422 denial, validation_error, stale digest", async () => {
  const stranger = new Custodian(URL_, "not-a-token");
  await assert.rejects(stranger.recall("anything"), (error) => {
    assert.ok(error instanceof NotAuthenticated && error instanceof CustodianError);
    assert.equal(error.status, 401);
    return true;
  });
  await assert.rejects(custodian.getMemory(crypto.randomUUID()), (error) => {
    assert.ok(error instanceof NotFound);
    assert.equal(error.code, "not_found");
    return true;
  });
  const ref = `chat/${crypto.randomUUID()}`;
  const said = await custodian.registerEvidence("conversation", ref, { text: "Once." });
  await assert.rejects(custodian.registerEvidence("conversation", ref, { text: "Twice." }), (error) => {
    assert.ok(error instanceof EvidenceExists && error instanceof Conflict);
    assert.equal(error.status, 409);
    return true;
  });
  const forged = { ...said, content_hash: "0".repeat(64) };
  await assert.rejects(
    custodian.propose("create", { memory: preference(`forged (${RUN})`), evidence: [forged], policyContext: OWNER_CONTEXT }),
    (error) => {
      assert.ok(error instanceof EvidenceMismatch && error instanceof ProposalDenied);
      assert.equal(error.status, 422);
      assert.ok(error.proposalId);
      assert.ok(error.reasonCodes.includes("evidence_mismatch"));
      return true;
    },
  );
  await assert.rejects(
    custodian.propose("create", { memory: { ...preference("no scope"), scope: "galaxy" }, evidence: [said] }),
    (error) => {
      assert.ok(error instanceof ValidationFailed && error instanceof BadRequest);
      assert.equal(error.code, "validation_error");
      assert.ok(JSON.stringify(error.errors).includes("scope"), JSON.stringify(error.body));
      return true;
    },
  );
  const answer = await custodian.remember(`The desk hedges FX monthly (${RUN})`, {
    about: "org:quant-desk",
    type: "semantic_fact",
    scope: "shared_team",
  });
  await assert.rejects(
    pm.decide(answer.proposalId, "approve", { reason: "looks right", actionDigest: "f".repeat(64) }),
    StaleDigest,
  );
});

test("proposeBatch answers each item in order, and replays items whose key it has seen", async () => {
  const said = await custodian.registerEvidence("conversation", `chat/${crypto.randomUUID()}`, { text: "Both." });
  const items = ["mornings", "evenings"].map((when) => ({
    action: "create",
    memory: preference(`Alice walks in the ${when} (${RUN})`),
    evidence: [said],
    policyContext: OWNER_CONTEXT,
    idempotencyKey: `batch-${when}-${RUN}`,
  }));
  const forged = { ...items[0], idempotencyKey: undefined, evidence: [{ ...said, content_hash: "0".repeat(64) }] };
  const first = await custodian.proposeBatch([...items, forged]);
  assert.deepEqual(first.results.map((r) => r.status), [201, 201, 422]);
  assert.equal(first.results[2].problem.code, "evidence_mismatch");
  assert.deepEqual([first.created, first.refused], [2, 1]);
  const again = await custodian.proposeBatch(items);
  assert.equal(again.replayed, 2);
  assert.deepEqual(again.results.map((r) => r.proposal.id), first.results.slice(0, 2).map((r) => r.proposal.id));
});

test("recall finds a stored memory; feedback is counted once per revision", async () => {
  const statement = `Alice keeps a zettelkasten ${RUN}`;
  const receipt = await stored(statement);
  const found = await custodian.recall(`zettelkasten ${RUN}`, { policyContext: OWNER_CONTEXT, limit: 5 });
  const item = found.results.find((r) => r.memory.memory_id === receipt.memory_id);
  assert.ok(item, JSON.stringify(found.results));
  assert.ok(item.consumable_text.includes("zettelkasten"));
  const vote = await custodian.feedback(found.recall_id, receipt.memory_id, item.memory.revision, "useful");
  assert.equal(vote.verdict, "useful");
  await assert.rejects(
    custodian.feedback(found.recall_id, receipt.memory_id, item.memory.revision, "useful"),
    FeedbackAlreadyGiven,
  );
});

test("expire applies on its own; restore waits for a reviewer, then the memory is active again", async () => {
  const { memory_id: memoryId } = await stored(`Alice prefers dark mode (${RUN})`);
  const expiry = await custodian.expire(memoryId, "Alice switched devices", { policyContext: OWNER_CONTEXT });
  assert.equal(expiry.classification, "auto_apply");
  assert.equal((await custodian.waitForReceipt(expiry.id, WAIT)).outcome, "applied");
  assert.equal((await custodian.getMemory(memoryId)).memory.state, "expired");
  const restore = await custodian.restore(memoryId, "expired by mistake", { policyContext: OWNER_CONTEXT });
  assert.equal(restore.status, "pending_review");
  assert.equal(restore.base_revision, expiry.base_revision + 1, "read the revision the expiry made");
  await approve(pm, restore.id, "confirmed with Alice");
  assert.equal((await custodian.waitForReceipt(restore.id, WAIT)).outcome, "applied");
  assert.equal((await custodian.getMemory(memoryId)).memory.state, "active");
});

test("the async iterators read page after page", async () => {
  await stored(`Alice likes page one (${RUN})`);
  await stored(`Alice likes page two (${RUN})`);
  await stored(`Alice likes page three (${RUN})`);
  const pages = [];
  const counting = agent({
    fetch: (url, init) => {
      pages.push(new URL(url).pathname);
      return fetch(url, init);
    },
  });
  const proposals = [];
  for await (const proposal of counting.proposals({ limit: 2, status: "applied" })) proposals.push(proposal.id);
  assert.ok(proposals.length >= 3);
  assert.equal(new Set(proposals).size, proposals.length, "no proposal twice");
  assert.ok(pages.filter((p) => p === "/api/v1/proposals/").length >= 2, pages.join(" "));
  const receipts = [];
  for await (const receipt of counting.allReceipts({ limit: 2, maxPages: 2 })) receipts.push(receipt.id);
  assert.equal(receipts.length, 4, "two pages of two");
  await counting.recall(`page ${RUN}`, { policyContext: OWNER_CONTEXT });
  await counting.recall(`likes ${RUN}`, { policyContext: OWNER_CONTEXT });
  const events = [];
  for await (const event of counting.auditEvents({ limit: 1, maxPages: 2, action: "search" })) events.push(event);
  assert.equal(events.length, 2, "two pages of one");
  assert.equal(new Set(events.map((e) => e.id)).size, 2);
});
