/**
 * `custodian-client/ai`: Custodian as tools for the Vercel AI SDK (`ai`), over one client.
 *
 *   const tools = custodianTools(custodian, { about: "user:pm-alice" });
 *   await generateText({ model, tools, prompt });
 *
 * Each tool calls the REST API as the client's one token, so a model gets no more than that agent
 * may do: remember and forget are proposals the policy applies, sends to review, or refuses;
 * recall is governed recall. Input schemas refuse keys they do not declare, and every key is
 * required (null takes the default), so they also hold in providers' strict mode.
 */

import { tool, type Tool } from "ai";
import { z } from "zod";

import type { Custodian } from "./client.js";
import { CustodianError, ProposalDenied, WaitTimeout } from "./errors.js";
import { parseSubject, type RememberResult } from "./remember.js";
import type { PolicyContext, Proposal } from "./types.js";

const MEMORY_TYPES = ["preference", "semantic_fact", "episodic_event", "procedural_rule"] as const;
const SCOPES = ["user", "session", "task", "agent", "shared_team", "org"] as const;
const EVIDENCE_KINDS = ["conversation", "document", "tool_result", "backtest_run", "commit", "dataset"] as const;
const RISK_LEVELS = ["low", "medium", "high"] as const;
const FORGET_VERBS = ["expire", "revoke", "delete"] as const;

export interface CustodianToolsOptions {
  /** Whom a remembered memory is about when the model does not say (`kind:id`). */
  about?: string;
  /** Whom the agent acts for in recall and forget (`kind:id`; default: `about`). */
  actingFor?: string;
  /** The consent basis remember and forget state (default `explicit`): the application's claim. */
  consentBasis?: string;
  /** Seconds remember and forget wait for a receipt (default 30). */
  waitSeconds?: number;
  /** Ask the provider for strict tool inputs (default true). */
  strict?: boolean;
}

export interface RememberToolInput {
  statement: string;
  about: string | null;
  memory_type: (typeof MEMORY_TYPES)[number] | null;
  scope: (typeof SCOPES)[number] | null;
  evidence_text: string | null;
  evidence_kind: (typeof EVIDENCE_KINDS)[number] | null;
  dedupe_key: string | null;
  risk_level: (typeof RISK_LEVELS)[number] | null;
}

export interface RecallToolInput {
  query: string;
  limit: number | null;
  include_inactive: boolean | null;
}

export interface ForgetToolInput {
  memory_id: string;
  reason: string;
  how: (typeof FORGET_VERBS)[number] | null;
  risk_level: (typeof RISK_LEVELS)[number] | null;
}

/** What remember and forget tell the model: what became of the proposal, in a sentence too. */
export interface SettledOutput {
  status: string;
  proposal_id: string;
  memory_id: string | null;
  receipt_id: string | null;
  message: string;
}

export interface RecallToolOutput {
  recall_id: string;
  items: {
    memory_id: string | null;
    revision: number | null;
    state: string | null;
    text: string;
    return_mode: string;
    score: number;
  }[];
}

export interface CustodianTools {
  remember: Tool<RememberToolInput, SettledOutput>;
  recall: Tool<RecallToolInput, RecallToolOutput>;
  forget: Tool<ForgetToolInput, SettledOutput>;
}

/** A refusal, worded for the model; `cause` is the client's typed error. */
export class CustodianToolError extends Error {
  constructor(error: CustodianError) {
    const text =
      error instanceof ProposalDenied
        ? `denied by policy (${error.code}); proposal ${error.proposalId} is stored for audit, nothing changed`
        : `refused (${error.code}): ${error.detail}`;
    super(text, { cause: error });
    this.name = "CustodianToolError";
  }
}

const DONE = { expire: "expired", revoke: "revoked", delete: "deleted" } as const;

const rememberInput = z
  .object({
    statement: z.string().min(1).describe("The memory, as one self-contained sentence."),
    about: z.string().nullable().describe("Whom it is about, as kind:id (user:pm-alice); null: the default."),
    memory_type: z.enum(MEMORY_TYPES).nullable().describe("null: preference."),
    scope: z.enum(SCOPES).nullable().describe("null: user."),
    evidence_text: z.string().nullable().describe("What was said or seen, verbatim; null: the statement."),
    evidence_kind: z.enum(EVIDENCE_KINDS).nullable().describe("null: conversation."),
    dedupe_key: z.string().nullable().describe("A stable key for this fact (one active memory per key)."),
    risk_level: z.enum(RISK_LEVELS).nullable().describe("null: low."),
  })
  .strict();

const recallInput = z
  .object({
    query: z.string().min(1).describe("What to search for."),
    limit: z.number().int().min(1).max(50).nullable().describe("At most this many items; null: 5."),
    include_inactive: z.boolean().nullable().describe("Also expired or dormant memories; null: no."),
  })
  .strict();

const forgetInput = z
  .object({
    memory_id: z.string().min(1).describe("The memory to forget (from recall)."),
    reason: z.string().min(1).describe("Why, in the user's words where possible."),
    how: z
      .enum(FORGET_VERBS)
      .nullable()
      .describe("expire: stop using it; revoke: it was wrong; delete: remove it. null: expire."),
    risk_level: z.enum(RISK_LEVELS).nullable().describe("null: low."),
  })
  .strict();

function subjectOf(spec: string | undefined): PolicyContext["acting_for_subject"] | undefined {
  return spec ? parseSubject(spec) : undefined;
}

async function refusing<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw error instanceof CustodianError ? new CustodianToolError(error) : error;
  }
}

async function settled(client: Custodian, proposal: Proposal, done: string, waitSeconds: number): Promise<SettledOutput> {
  const answer = { proposal_id: proposal.id, memory_id: proposal.memory_id ?? null, receipt_id: null };
  if (proposal.classification !== "auto_apply" && proposal.classification !== "policy_gated") {
    return { ...answer, status: "pending_review", message: pendingMessage(proposal) };
  }
  try {
    const receipt = await client.waitForReceipt(proposal.id, { timeout: waitSeconds });
    const applied = receipt.outcome === "applied";
    return {
      ...answer,
      status: applied ? done : receipt.outcome,
      memory_id: receipt.memory_id,
      receipt_id: receipt.id,
      message: applied
        ? `${done}: memory ${receipt.memory_id} (receipt ${receipt.id})`
        : `not applied (${receipt.outcome}: ${receipt.reason ?? ""}), receipt ${receipt.id}`,
    };
  } catch (error) {
    if (!(error instanceof WaitTimeout)) throw error;
    return { ...answer, status: "queued", message: `allowed by policy, not applied yet: proposal ${proposal.id}` };
  }
}

/** Word what became of a remember for the model. */
function rememberOutput(result: RememberResult): SettledOutput {
  const answer = {
    status: result.status,
    proposal_id: result.proposalId,
    memory_id: result.memoryId,
    receipt_id: result.receipt?.id ?? null,
  };
  const messages: Record<string, string> = {
    stored: `stored: memory ${result.memoryId} (receipt ${answer.receipt_id})`,
    duplicate: `duplicate: memory ${result.memoryId} already says this; nothing new stored`,
    pending_review: pendingMessage(result.proposal),
    queued: `allowed by policy, not applied yet: proposal ${result.proposalId}`,
  };
  const notApplied = `not applied (${result.status}: ${result.receipt?.reason ?? ""}), receipt ${answer.receipt_id}`;
  return { ...answer, message: messages[result.status] ?? notApplied };
}

function pendingMessage(proposal: Proposal | null): string {
  const needed = proposal?.required_approvals ?? 1;
  return `pending review, proposal ${proposal?.id} (${needed} approval(s) needed; nothing changes until a reviewer approves)`;
}

function rememberTool(client: Custodian, options: CustodianToolsOptions): CustodianTools["remember"] {
  const waitSeconds = options.waitSeconds ?? 30;
  return tool({
    description:
      "Propose a memory resting on evidence (what was said or seen). The policy decides: the answer " +
      "says 'stored' with a receipt, 'pending_review' (nothing stored yet), or 'duplicate'.",
    inputSchema: rememberInput,
    strict: options.strict ?? true,
    execute: (input) =>
      refusing(async () => {
        const about = input.about ?? options.about;
        if (!about) {
          throw new Error("say whom the memory is about: about='kind:id' (e.g. user:pm-alice)");
        }
        const result = await client.remember(input.statement, {
          about,
          ...(input.memory_type && { type: input.memory_type }),
          ...(input.scope && { scope: input.scope }),
          ...(input.evidence_text && { evidenceText: input.evidence_text }),
          ...(input.evidence_kind && { evidenceKind: input.evidence_kind }),
          ...(input.dedupe_key && { dedupeKey: input.dedupe_key }),
          ...(input.risk_level && { riskLevel: input.risk_level }),
          ...(options.actingFor && !input.about && { actingFor: options.actingFor }),
          ...(options.consentBasis && { consentBasis: options.consentBasis }),
          waitSeconds,
        });
        return rememberOutput(result);
      }),
  });
}

function recallTool(client: Custodian, options: CustodianToolsOptions): CustodianTools["recall"] {
  const actingFor = subjectOf(options.actingFor ?? options.about);
  return tool({
    description: "Search memory; each item comes in the view the read policy allows (raw, summary, masked…).",
    inputSchema: recallInput,
    strict: options.strict ?? true,
    execute: (input) =>
      refusing(async () => {
        const found = await client.recall(input.query, {
          limit: input.limit ?? 5,
          includeInactive: input.include_inactive ?? false,
          ...(actingFor && { policyContext: { acting_for_subject: actingFor } }),
        });
        const items = found.results.map((item) => ({
          memory_id: item.memory.memory_id ?? null,
          revision: item.memory.revision ?? null,
          state: item.memory.state ?? null,
          text: item.consumable_text,
          return_mode: item.return_mode,
          score: item.score,
        }));
        return { recall_id: found.recall_id, items };
      }),
  });
}

function forgetTool(client: Custodian, options: CustodianToolsOptions): CustodianTools["forget"] {
  const actingFor = options.actingFor ?? options.about;
  const waitSeconds = options.waitSeconds ?? 30;
  return tool({
    description: "Propose to expire (stop using), revoke (it was wrong) or delete a memory; the policy decides.",
    inputSchema: forgetInput,
    strict: options.strict ?? true,
    execute: (input) =>
      refusing(async () => {
        const how = input.how ?? "expire";
        const read = await client.getMemory(input.memory_id, actingFor ? { actingFor } : {});
        const proposal = await client.propose(how, {
          memoryId: input.memory_id,
          baseRevision: Number(read.memory.revision),
          reason: input.reason,
          policyContext: {
            ...(actingFor && { acting_for_subject: parseSubject(actingFor) }),
            consent_basis: options.consentBasis ?? "explicit",
            risk_level: input.risk_level ?? "low",
          },
        });
        return settled(client, proposal, DONE[how], waitSeconds);
      }),
  });
}

/**
 * Return `{remember, recall, forget}`: AI SDK tools over `client`, for `generateText`/`streamText`.
 *
 * `options.about` is whom memories are about unless the model names someone; the agent still needs
 * an operator's grant for each subject, which the server checks.
 */
export function custodianTools(client: Custodian, options: CustodianToolsOptions = {}): CustodianTools {
  return {
    remember: rememberTool(client, options),
    recall: recallTool(client, options),
    forget: forgetTool(client, options),
  };
}
