/**
 * What every call shares: request descriptions, retry decisions, answer parsing.
 *
 * Each API call is first described as a {@link Call} (plain data, built once), so a retry re-sends
 * exactly the same request, with the same Idempotency-Key. Mirrors the Python client's `_core.py`.
 */

import type {
  EvidenceBinding,
  MemoryChanges,
  MemoryInput,
  PolicyContext,
  ProposalAction,
  RecallFilters,
} from "./types.js";

export const RETRY_STATUSES: ReadonlySet<number> = new Set([429, 503]);
export const CLOSED_WITHOUT_RECEIPT: ReadonlySet<string> = new Set([
  "denied",
  "rejected",
  "expired",
  "withdrawn",
]);

/**
 * Bounded retries on 429 and 503 (and on lost connections for calls safe to repeat).
 *
 * The wait is the server's `Retry-After` when it sends one, else exponential backoff
 * (`backoff * 2**n`, at most `maxDelay`); a `Retry-After` longer than `maxDelay` is not slept:
 * the error is thrown. All durations are in seconds.
 */
export interface RetryPolicy {
  maxRetries: number;
  backoff: number;
  maxDelay: number;
}

export const DEFAULT_RETRY_POLICY: Readonly<RetryPolicy> = Object.freeze({
  maxRetries: 4,
  backoff: 0.5,
  maxDelay: 30,
});

/** One retry the client is about to make: why, and how long it waits first (seconds). */
export interface RetryEvent {
  method: string;
  path: string;
  /** 0: no answer (connection failed). */
  status: number;
  /** 1 for the first retry. */
  attempt: number;
  delay: number;
  retryAfter: number | null;
}

/** One API request, described before it is sent (and re-sent unchanged on a retry). */
export interface Call {
  method: "GET" | "POST";
  path: string;
  json?: unknown;
  params?: Record<string, string>;
  headers?: Record<string, string>;
  /** Whether repeating it after a lost connection is safe (reads, and idempotency-keyed writes). */
  repeatable: boolean;
  /** Whether the answer is text to hand back as it is (a JSON Lines file), not one JSON document. */
  text?: boolean;
}

function backoffDelay(policy: RetryPolicy, attempt: number, retryAfter: number | null): number {
  if (retryAfter !== null) {
    return retryAfter;
  }
  return Math.min(policy.backoff * 2 ** attempt, policy.maxDelay);
}

/** Return the seconds a `Retry-After` header asks for (delta-seconds or an HTTP date). */
export function parseRetryAfter(value: string | null | undefined, now: number = Date.now()): number | null {
  const text = (value ?? "").trim();
  if (!text) {
    return null;
  }
  const seconds = Number(text);
  if (!Number.isNaN(seconds)) {
    return Math.max(0, seconds);
  }
  const when = Date.parse(text);
  if (Number.isNaN(when)) {
    return null;
  }
  return Math.max(0, (when - now) / 1000);
}

/** The status and `Retry-After` of an answer, or null when there was no answer at all. */
export interface Answer {
  status: number;
  retryAfterHeader: string | null;
}

/** Return the delay before a retry, or null when the failure is final; and the `Retry-After` seen. */
export function retryDecision(
  policy: RetryPolicy,
  call: Call,
  attempt: number,
  answer: Answer | null,
): { delay: number | null; retryAfter: number | null } {
  if (attempt >= policy.maxRetries) {
    return { delay: null, retryAfter: null };
  }
  if (answer === null) {
    return { delay: call.repeatable ? backoffDelay(policy, attempt, null) : null, retryAfter: null };
  }
  if (!RETRY_STATUSES.has(answer.status)) {
    return { delay: null, retryAfter: null };
  }
  const retryAfter = parseRetryAfter(answer.retryAfterHeader);
  const delay = backoffDelay(policy, attempt, retryAfter);
  return { delay: delay <= policy.maxDelay ? delay : null, retryAfter };
}

/** The `{evidence_id, revision, content_hash}` a proposal cites, from a registration answer. */
export function binding(evidence: EvidenceBinding): EvidenceBinding {
  return {
    evidence_id: evidence.evidence_id,
    revision: evidence.revision,
    content_hash: evidence.content_hash,
  };
}

function compact(params: Record<string, string | number | boolean | null | undefined>): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== "") {
      kept[name] = String(value);
    }
  }
  return kept;
}

function segment(value: string | number): string {
  return encodeURIComponent(String(value));
}

// --- Calls ---------------------------------------------------------------------------------------

export function registerEvidence(kind: string, externalRef: string, content: unknown): Call {
  return {
    method: "POST",
    path: "/api/v1/evidence/",
    json: { kind, external_ref: externalRef, content },
    repeatable: false,
  };
}

export function addEvidenceRevision(evidenceId: string, content: unknown): Call {
  return {
    method: "POST",
    path: `/api/v1/evidence/${segment(evidenceId)}/revisions/`,
    json: { content },
    repeatable: false,
  };
}

export function getEvidence(evidenceId: string): Call {
  return { method: "GET", path: `/api/v1/evidence/${segment(evidenceId)}/`, repeatable: true };
}

export function invalidateEvidence(evidenceId: string, revision: number, reason: string): Call {
  return {
    method: "POST",
    path: `/api/v1/evidence/${segment(evidenceId)}/revisions/${segment(revision)}/invalidate/`,
    json: { reason },
    repeatable: false,
  };
}

/** What a proposal carries besides its action (camelCase here, snake_case on the wire). */
export interface ProposeOptions {
  memory?: MemoryInput;
  memoryId?: string;
  baseRevision?: number;
  changes?: MemoryChanges;
  /** Registration answers or `{evidence_id, revision, content_hash}`. */
  evidence?: readonly EvidenceBinding[];
  policyContext?: PolicyContext;
  rationale?: string;
  reason?: string;
  /** Made once per call when not given (`cc-<uuid>`), and reused on every retry. */
  idempotencyKey?: string;
}

export interface ProposeItem extends ProposeOptions {
  action: ProposalAction;
}

function proposalBody(action: ProposalAction, options: ProposeOptions): Record<string, unknown> {
  const optional: Record<string, unknown> = {
    memory: options.memory,
    memory_id: options.memoryId,
    base_revision: options.baseRevision,
    changes: options.changes,
    policy_context: options.policyContext,
    rationale: options.rationale,
    reason: options.reason,
  };
  const body: Record<string, unknown> = { action };
  for (const [name, value] of Object.entries(optional)) {
    if (value !== undefined && value !== null) {
      body[name] = value;
    }
  }
  if (options.evidence && options.evidence.length > 0) {
    body["evidence"] = options.evidence.map(binding);
  }
  return body;
}

/** Describe a proposal; its Idempotency-Key is made here once, so every retry reuses it. */
export function propose(action: ProposalAction, options: ProposeOptions = {}): Call {
  const key = options.idempotencyKey || `cc-${crypto.randomUUID()}`;
  return {
    method: "POST",
    path: "/api/v1/proposals/",
    json: proposalBody(action, options),
    headers: { "Idempotency-Key": key },
    repeatable: true,
  };
}

/** Describe a batch: each item keeps its own key (made here when not given) on retries. */
export function proposeBatch(items: readonly ProposeItem[]): Call {
  const described = items.map(({ action, ...options }) => propose(action, options));
  return {
    method: "POST",
    path: "/api/v1/proposals/batch",
    json: {
      items: described.map((call) => ({
        idempotency_key: call.headers?.["Idempotency-Key"],
        proposal: call.json,
      })),
    },
    repeatable: true,
  };
}

/** Describe an amendment: the whole new action of a proposal returned with request_changes. */
export function amend(proposalId: string, action: ProposalAction, options: ProposeOptions = {}): Call {
  return {
    method: "POST",
    path: `/api/v1/proposals/${segment(proposalId)}/amend/`,
    json: proposalBody(action, options),
    repeatable: false,
  };
}

export function getProposal(proposalId: string): Call {
  return { method: "GET", path: `/api/v1/proposals/${segment(proposalId)}/`, repeatable: true };
}

export function withdraw(proposalId: string): Call {
  return {
    method: "POST",
    path: `/api/v1/proposals/${segment(proposalId)}/withdraw/`,
    json: {},
    repeatable: false,
  };
}

/** What an erasure is of: a subject (whom to forget) or an evidence source (what to retract). */
export type ErasureOf = { subject: { kind: string; id: string } } | { source: { evidence_id: string } };

/** Describe an erasure request; its Idempotency-Key is made once, so a retry asks only once. */
export function requestErasure(of: ErasureOf, reason: string, idempotencyKey?: string): Call {
  return {
    method: "POST",
    path: "/api/v1/erasures/",
    json: { ...of, reason },
    headers: { "Idempotency-Key": idempotencyKey || `cc-erase-${crypto.randomUUID()}` },
    repeatable: true,
  };
}

export function getErasure(erasureId: string): Call {
  return { method: "GET", path: `/api/v1/erasures/${segment(erasureId)}/`, repeatable: true };
}

export function erasureCertificate(erasureId: string): Call {
  return { method: "GET", path: `/api/v1/erasures/${segment(erasureId)}/certificate`, repeatable: true, text: true };
}

export function receipts(filters: { proposal?: string; memory?: string } = {}): Call {
  return {
    method: "GET",
    path: "/api/v1/receipts/",
    params: compact({ proposal: filters.proposal, memory: filters.memory }),
    repeatable: true,
  };
}

export function getReceipt(receiptId: string): Call {
  return { method: "GET", path: `/api/v1/receipts/${segment(receiptId)}/`, repeatable: true };
}

export interface RecallOptions {
  filters?: RecallFilters;
  includeInactive?: boolean;
  limit?: number;
  cursor?: string | null;
  policyContext?: PolicyContext;
  neighbours?: number;
}

export function recall(query: string, options: RecallOptions = {}): Call {
  const body: Record<string, unknown> = {
    query,
    include_inactive: options.includeInactive ?? false,
    limit: options.limit ?? 10,
  };
  if (options.filters && Object.keys(options.filters).length > 0) {
    body["filters"] = options.filters;
  }
  if (options.cursor) {
    body["cursor"] = options.cursor;
  }
  if (options.policyContext && Object.keys(options.policyContext).length > 0) {
    body["policy_context"] = options.policyContext;
  }
  if (options.neighbours) {
    body["context"] = { neighbours: options.neighbours };
  }
  // A search writes only its own access event, so repeating one after a lost answer is harmless.
  return { method: "POST", path: "/api/v1/recall/search", json: body, repeatable: true };
}

export interface GetMemoryOptions {
  /** `kind:id` of the subject the agent acts for. */
  actingFor?: string;
  dataZone?: "internal" | "external";
  correlationId?: string;
}

export function getMemory(memoryId: string, options: GetMemoryOptions = {}): Call {
  return {
    method: "GET",
    path: `/api/v1/memories/${segment(memoryId)}/`,
    params: compact({
      acting_for: options.actingFor,
      data_zone: options.dataZone,
      correlation_id: options.correlationId,
    }),
    repeatable: true,
  };
}

export function feedback(recallId: string, memoryId: string, revision: number, verdict: string): Call {
  return {
    method: "POST",
    path: `/api/v1/recall/${segment(recallId)}/feedback`,
    json: { memory_id: memoryId, revision, verdict },
    repeatable: false,
  };
}

/** Filters of a paginated list; `limit` is the page size (the server caps it at 200). */
export type ListFilters = Record<string, string | number | boolean | undefined>;

/** The first page of a cursor-paginated list. */
export function page(path: string, filters: ListFilters): Call {
  return { method: "GET", path, params: compact(filters), repeatable: true };
}

/**
 * The page a `next` link names, always on the client's own base URL.
 *
 * Only the link's path and query are kept, so a link naming another host (a misconfigured proxy,
 * a spoofed Host header) can never receive the token.
 */
export function nextPage(link: string, basePath: string): Call {
  const parts = new URL(link, "http://next.invalid");
  let path = parts.pathname;
  const prefix = basePath.replace(/\/+$/, "");
  if (prefix && path.startsWith(`${prefix}/`)) {
    path = path.slice(prefix.length);
  }
  return { method: "GET", path: path + parts.search, repeatable: true };
}

export function reviewQueue(filters: ListFilters = {}): Call {
  return { method: "GET", path: "/api/v1/reviews/queue/", params: compact(filters), repeatable: true };
}

export interface DecideOptions {
  reason: string;
  /** The `action_digest` of the proposal as you reviewed it (a changed proposal is refused). */
  actionDigest: string;
  representedOwner?: string;
}

export function decide(proposalId: string, decision: string, options: DecideOptions): Call {
  return {
    method: "POST",
    path: `/api/v1/proposals/${segment(proposalId)}/decisions/`,
    json: {
      decision,
      reason: options.reason,
      action_digest: options.actionDigest,
      represented_owner: options.representedOwner ?? "",
    },
    repeatable: false,
  };
}
