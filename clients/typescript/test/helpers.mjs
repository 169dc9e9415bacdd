// What the live tests share: the server and tokens the pytest side hands over, and small steps.
import { Custodian } from "custodian-client";

export const URL_ = process.env.CUSTODIAN_URL ?? "";
export const RUN = crypto.randomUUID().slice(0, 8); // keeps memories of separate runs apart
export const ALICE = { kind: "user", id: "pm-alice" };
export const OWNER_CONTEXT = { acting_for_subject: ALICE, consent_basis: "explicit", risk_level: "low" };
// Generous bound for anything the executor does (never a timing assertion).
export const WAIT = { timeout: 60, interval: 0.2 };

function token(name) {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run these tests through tests/client_typescript`);
  return value;
}

export const agent = (options = {}) => new Custodian(URL_, token("CUSTODIAN_TOKEN"), options);
export const reviewer = () => new Custodian(URL_, token("CUSTODIAN_REVIEWER_TOKEN"));
/** A second person who may decide: what needs two approvals (an erasure) takes both. */
export const secondReviewer = () => new Custodian(URL_, token("CUSTODIAN_SECOND_REVIEWER_TOKEN"));
/** Another agent of the tenant, with no operator grant to act for anyone. */
export const stranger = () => new Custodian(URL_, token("CUSTODIAN_STRANGER_TOKEN"));

export function preference(statement, extra = {}) {
  return { subject: ALICE, scope: "user", type: "preference", content: { statement }, ...extra };
}

/** Approve as a reviewer over REST: find the proposal in the queue, approve the digest read there. */
export async function approve(pm, proposalId, reason) {
  const queued = (await pm.reviewQueue()).find((proposal) => proposal.id === proposalId);
  if (!queued) throw new Error(`proposal ${proposalId} is not in the reviewer's queue`);
  return pm.decide(proposalId, "approve", { reason, actionDigest: queued.action_digest });
}
