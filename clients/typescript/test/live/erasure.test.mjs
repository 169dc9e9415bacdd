// Erasing a subject with the client: ask, two reviewers approve the plan, the executor applies it.
import assert from "node:assert/strict";
import { test } from "node:test";

import { ErasureNotAllowed, ErasureNotCertified, ErasureNotFound, NotFound } from "custodian-client";

import { agent, approve, reviewer, RUN, secondReviewer, stranger, WAIT } from "../helpers.mjs";

const PERSON = { kind: "user", id: "ts-erased-person" };
// Another person: the erasure above revokes the grant to act for PERSON.
const SOURCE_PERSON = { kind: "user", id: "ts-retraction-person" };
const custodian = agent();

test("an erasure is planned, approved by two people, applied and certified", async () => {
  const said = await custodian.registerEvidence("conversation", `chat/erase/${RUN}`, { text: "Tuesdays." });
  const created = await custodian.propose("create", {
    memory: { subject: PERSON, scope: "user", type: "preference", content: { statement: `Likes Tuesdays ${RUN}` } },
    evidence: [said],
    policyContext: { acting_for_subject: PERSON, consent_basis: "explicit", risk_level: "low" },
  });
  await custodian.waitForReceipt(created.id, WAIT);

  const erasure = await custodian.eraseSubject(PERSON.kind, PERSON.id, "the person asked to be forgotten");
  assert.equal(erasure.status, "pending_review");
  assert.deepEqual(
    erasure.plan.members.map((member) => member.memory_id),
    [created.memory_id],
  );
  await assert.rejects(custodian.erasureCertificate(erasure.erasure_id), ErasureNotCertified);
  await approve(reviewer(), erasure.erasure_id, "checked the list");
  await approve(secondReviewer(), erasure.erasure_id, "checked it too");

  let now = erasure;
  for (let waited = 0; now.status !== "applied" && waited < WAIT.timeout; waited += WAIT.interval) {
    await new Promise((resolve) => setTimeout(resolve, WAIT.interval * 1000));
    now = await custodian.erasure(erasure.erasure_id);
  }
  assert.equal(now.status, "applied");
  assert.equal(now.certificate.clean, true);
  assert.equal(now.certificate.removed[0].memory_id, created.memory_id);
  const lines = (await custodian.erasureCertificate(erasure.erasure_id)).trim().split("\n");
  assert.ok(lines.length >= 3, "a header, the receipts and an end line");
  assert.ok(lines.every((line) => JSON.parse(line)));
  await assert.rejects(custodian.getMemory(created.memory_id), NotFound);
});

test("retracting a source plans every memory resting on it, for review", async () => {
  const shared = await custodian.registerEvidence("conversation", `chat/shared/${RUN}`, { text: "Oops." });
  const resting = await custodian.propose("create", {
    memory: { subject: SOURCE_PERSON, scope: "user", type: "preference", content: { statement: `Emails ${RUN}` } },
    evidence: [shared],
    policyContext: { acting_for_subject: SOURCE_PERSON, consent_basis: "explicit", risk_level: "low" },
  });
  await custodian.waitForReceipt(resting.id, WAIT);
  const retraction = await custodian.retractSource(shared.evidence_id, "shared by mistake");
  assert.equal(retraction.status, "pending_review");
  assert.deepEqual(
    retraction.plan.members.map((member) => member.memory_id),
    [resting.memory_id],
  );
});

test("an agent without a grant for the person cannot ask, nor read another's erasure", async () => {
  await assert.rejects(stranger().eraseSubject(PERSON.kind, PERSON.id, "not mine"), ErasureNotAllowed);
  await assert.rejects(stranger().erasure(crypto.randomUUID()), ErasureNotFound);
});
