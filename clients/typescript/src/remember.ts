/**
 * `remember`: one call from a sentence to a governed memory (evidence, proposal, bounded wait).
 *
 * The defaults are the ones the Python client and the MCP server use; a test compares them.
 */

import type { Custodian } from "./client.js";
import { DuplicateOfActiveMemory, WaitTimeout } from "./errors.js";
import type { EvidenceKind, MemoryInput, MemoryType, Proposal, Receipt, RiskLevel, Scope, Subject } from "./types.js";

/**
 * What `remember` uses for each option not given. Two more follow the call itself:
 * `evidenceText` is the text remembered, `actingFor` is `about`; and `evidenceRef` is
 * `evidenceRefPrefix` + a fresh UUID.
 */
export const REMEMBER_DEFAULTS = Object.freeze({
  type: "preference",
  scope: "user",
  evidenceKind: "conversation",
  evidenceRefPrefix: "remember/",
  consentBasis: "explicit",
  riskLevel: "low",
  waitSeconds: 30,
} as const);

const AUTO_CLASSIFICATIONS: ReadonlySet<string> = new Set(["auto_apply", "policy_gated"]);

export interface RememberOptions {
  /** Whom the memory is about, as `kind:id` (e.g. `user:pm-alice`). */
  about: string;
  type?: MemoryType;
  scope?: Scope;
  /** What was said or seen, verbatim (default: the text remembered). */
  evidenceText?: string;
  evidenceKind?: EvidenceKind;
  /** The source's reference (a chat or document id; default: `remember/<uuid>`). */
  evidenceRef?: string;
  dedupeKey?: string;
  /** `kind:id` of the subject the agent acts for (default: `about`). */
  actingFor?: string;
  consentBasis?: string;
  riskLevel?: RiskLevel;
  /** Seconds to wait for the receipt of a proposal the policy lets through (default 30). */
  waitSeconds?: number;
}

/**
 * What became of a remember.
 *
 * - `stored`: applied; `receipt` proves it.
 * - `pending_review`: a reviewer must decide first; nothing is stored yet.
 * - `queued`: the policy let it through but no receipt came within `waitSeconds`.
 * - `duplicate`: an active memory (`memoryId`) already holds the dedupe key; nothing new stored.
 * - any other receipt outcome (`stale`, `dedupe_conflict`, …): the executor did not apply it.
 */
export interface RememberResult {
  status: string;
  proposalId: string;
  memoryId: string | null;
  proposal: Proposal | null;
  receipt: Receipt | null;
}

/** Split `kind:id` into a subject; throw when either half is missing. */
export function parseSubject(spec: string): Subject {
  const at = spec.indexOf(":");
  const kind = at > 0 ? spec.slice(0, at) : "";
  const id = at > 0 ? spec.slice(at + 1) : "";
  if (!kind || !id) {
    throw new TypeError(`say whom the memory is about as kind:id (e.g. user:pm-alice), not ${JSON.stringify(spec)}`);
  }
  return { kind, id } as Subject;
}

function proposedMemory(text: string, options: RememberOptions): MemoryInput {
  const memory: MemoryInput = {
    subject: parseSubject(options.about),
    scope: options.scope ?? REMEMBER_DEFAULTS.scope,
    type: options.type ?? REMEMBER_DEFAULTS.type,
    content: { statement: text },
  };
  if (options.dedupeKey) {
    memory.dedupe_key = options.dedupeKey;
  }
  return memory;
}

async function settled(client: Custodian, proposal: Proposal, waitSeconds: number): Promise<RememberResult> {
  const answer = { proposalId: proposal.id, memoryId: proposal.memory_id ?? null, proposal, receipt: null };
  if (!AUTO_CLASSIFICATIONS.has(proposal.classification)) {
    return { ...answer, status: "pending_review" };
  }
  try {
    const receipt = await client.waitForReceipt(proposal.id, { timeout: waitSeconds });
    const status = receipt.outcome === "applied" ? "stored" : receipt.outcome;
    return { ...answer, status, memoryId: receipt.memory_id, receipt };
  } catch (error) {
    if (error instanceof WaitTimeout) {
      return { ...answer, status: "queued" };
    }
    throw error;
  }
}

/**
 * Register `evidenceText` as evidence, propose `text` as a memory about `about` resting on it,
 * and wait (at most `waitSeconds`) for the executor's receipt when the policy lets it through.
 *
 * A duplicate of an active memory answers `duplicate`; every other refusal is thrown as its
 * typed error (a {@link ProposalDenied} subclass for policy denials).
 */
export async function remember(client: Custodian, text: string, options: RememberOptions): Promise<RememberResult> {
  const memory = proposedMemory(text, options);
  const policyContext = {
    acting_for_subject: parseSubject(options.actingFor || options.about),
    consent_basis: options.consentBasis ?? REMEMBER_DEFAULTS.consentBasis,
    risk_level: options.riskLevel ?? REMEMBER_DEFAULTS.riskLevel,
  };
  const evidence = await client.registerEvidence(
    options.evidenceKind ?? REMEMBER_DEFAULTS.evidenceKind,
    options.evidenceRef || `${REMEMBER_DEFAULTS.evidenceRefPrefix}${crypto.randomUUID()}`,
    { text: options.evidenceText ?? text },
  );
  let proposal: Proposal;
  try {
    proposal = await client.propose("create", {
      memory,
      evidence: [evidence],
      policyContext,
    });
  } catch (error) {
    if (error instanceof DuplicateOfActiveMemory) {
      const memoryId = error.heldBy[0]?.memory_id ?? null;
      return { status: "duplicate", proposalId: error.proposalId, memoryId, proposal: null, receipt: null };
    }
    throw error;
  }
  return settled(client, proposal, options.waitSeconds ?? REMEMBER_DEFAULTS.waitSeconds);
}
