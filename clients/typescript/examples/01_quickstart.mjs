// Quick start: remember a preference, recall it, say it helped.
// CUSTODIAN_URL and CUSTODIAN_TOKEN (an agent token: make run prints one) come from the environment.
import { Custodian, ProposalDenied } from "custodian-client";

const custodian = new Custodian(process.env.CUSTODIAN_URL ?? "http://127.0.0.1:8000", process.env.CUSTODIAN_TOKEN);
const run = crypto.randomUUID().slice(0, 8); // keeps reruns from colliding with earlier memories

// One call: evidence (what Alice said), a proposal, and a bounded wait for the executor's receipt.
const answer = await custodian.remember(`Alice prefers weekly summaries (${run})`, {
  about: "user:pm-alice", // whom the memory is about; the agent needs an operator's grant for them
  evidenceText: "Alice: weekly summaries, please.",
  dedupeKey: `summary_cadence:${run}`,
});
console.log(`remember: ${answer.status}  memory=${answer.memoryId}  receipt=${answer.receipt?.outcome}`);

// Saying the same again stores nothing new: the active memory already holds the key.
const again = await custodian.remember(`Alice prefers weekly summaries (${run})`, {
  about: "user:pm-alice",
  dedupeKey: `summary_cadence:${run}`,
});
console.log(`again: ${again.status}  memory=${again.memoryId}`);

// Governed recall: each item comes in the view the read policy allows for whom the agent acts.
const found = await custodian.recall(`weekly summaries ${run}`, {
  policyContext: { acting_for_subject: { kind: "user", id: "pm-alice" } },
});
const top = found.results[0];
console.log(`recall: ${top.consumable_text}  (${top.return_mode})`);
await custodian.feedback(found.recall_id, top.memory.memory_id, top.memory.revision, "useful");

// A refusal is a typed error: a policy denial is a ProposalDenied, stored for audit.
try {
  const forged = { evidence_id: crypto.randomUUID(), revision: 1, content_hash: "0".repeat(64) };
  await custodian.propose("create", {
    memory: { subject: { kind: "user", id: "pm-alice" }, scope: "user", type: "preference", content: { statement: "?" } },
    evidence: [forged],
  });
} catch (error) {
  if (!(error instanceof ProposalDenied)) throw error;
  console.log(`denied: ${error.code}  proposal=${error.proposalId}`);
}
