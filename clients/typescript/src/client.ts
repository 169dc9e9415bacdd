/**
 * `Custodian`: the client. Every write is a proposal; the executor applies it.
 *
 * Only `fetch`, `URL`, `AbortSignal`, `crypto.randomUUID` and timers are used, so it runs on
 * Node >= 20, in browsers and on edge runtimes alike.
 */

import * as core from "./core.js";
import type {
  Call,
  DecideOptions,
  GetMemoryOptions,
  ListFilters,
  ProposeItem,
  ProposeOptions,
  RecallOptions,
  RetryEvent,
  RetryPolicy,
} from "./core.js";
import { errorFor, ProposalClosed, ServiceUnavailable, WaitTimeout } from "./errors.js";
import { remember, type RememberOptions, type RememberResult } from "./remember.js";
import type {
  AccessEvent,
  BatchResult,
  Erasure,
  EvidenceRevision,
  Evidence,
  Feedback,
  MemoryRead,
  Proposal,
  ProposalAction,
  RecallResult,
  Receipt,
  ReviewDecision,
} from "./types.js";

/** Seconds one request may take before it counts as a lost connection. */
export const DEFAULT_TIMEOUT = 30;

export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

export interface CustodianOptions {
  retry?: Partial<RetryPolicy>;
  /** Seconds per request (default 30). */
  timeout?: number;
  onRetry?: (event: RetryEvent) => void;
  /** The `fetch` to send with (default: the global one). */
  fetch?: FetchLike;
  /** How to wait between attempts and polls (seconds). */
  sleep?: (seconds: number) => Promise<void>;
}

export interface WaitOptions {
  /** Seconds to wait in all (default 30). */
  timeout?: number;
  /** Seconds between polls (default 0.5). */
  interval?: number;
}

export interface LifecycleOptions extends Omit<ProposeOptions, "memoryId" | "reason"> {}

export interface PageOptions {
  /** At most this many pages are read (default 100). */
  maxPages?: number;
}

interface Page<T> {
  results: T[];
  next?: string | null;
}

function defaultSleep(seconds: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, seconds * 1000));
}

function queryString(params: Record<string, string> | undefined): string {
  const entries = Object.entries(params ?? {});
  return entries.length ? `?${new URLSearchParams(entries).toString()}` : "";
}

function splitPageOptions(filters: ListFilters & PageOptions): [ListFilters, number] {
  const { maxPages, ...rest } = filters;
  return [rest, maxPages ?? 100];
}

interface Exchange {
  response: Response | null;
  text: string;
  failure: unknown;
}

/**
 * A client authenticated as one token (an agent's, or a reviewer's personal `csu_` token).
 *
 * Identity and tenant come from the token alone; nothing this client sends can name another.
 */
export class Custodian {
  readonly baseUrl: string;
  readonly retry: RetryPolicy;
  readonly onRetry: ((event: RetryEvent) => void) | undefined;
  readonly #token: string;
  readonly #timeout: number;
  readonly #fetch: FetchLike;
  readonly #sleep: (seconds: number) => Promise<void>;
  readonly #basePath: string;

  constructor(baseUrl: string, token: string, options: CustodianOptions = {}) {
    this.baseUrl = baseUrl.replace(/\/+$/, "");
    this.#basePath = new URL(this.baseUrl).pathname;
    this.#token = token;
    this.retry = { ...core.DEFAULT_RETRY_POLICY, ...options.retry };
    this.#timeout = options.timeout ?? DEFAULT_TIMEOUT;
    this.onRetry = options.onRetry;
    this.#fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.#sleep = options.sleep ?? defaultSleep;
  }

  /** Send one call; retry it as the policy allows; return its JSON or throw its typed error. */
  async #send(call: Call): Promise<unknown> {
    for (let attempt = 0; ; attempt += 1) {
      const exchange = await this.#exchange(call);
      const answer = exchange.response
        ? { status: exchange.response.status, retryAfterHeader: exchange.response.headers.get("Retry-After") }
        : null;
      const { delay, retryAfter } = core.retryDecision(this.retry, call, attempt, answer);
      if (delay === null) {
        return this.#result(call, exchange);
      }
      this.#announce({
        method: call.method,
        path: call.path,
        status: answer?.status ?? 0,
        attempt: attempt + 1,
        delay,
        retryAfter,
      });
      await this.#sleep(delay);
    }
  }

  async #exchange(call: Call): Promise<Exchange> {
    const headers: Record<string, string> = {
      Authorization: `Bearer ${this.#token}`,
      Accept: "application/json",
      ...call.headers,
    };
    const init: RequestInit = { method: call.method, headers, signal: AbortSignal.timeout(this.#timeout * 1000) };
    if (call.json !== undefined) {
      headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(call.json);
    }
    try {
      // The body is read here too: an answer cut off midway is a lost connection as well.
      const response = await this.#fetch(this.baseUrl + call.path + queryString(call.params), init);
      return { response, text: await response.text(), failure: null };
    } catch (failure) {
      return { response: null, text: "", failure };
    }
  }

  #result(call: Call, exchange: Exchange): unknown {
    const { response, text } = exchange;
    if (response === null) {
      const reason = exchange.failure instanceof Error ? exchange.failure.message : String(exchange.failure);
      throw new ServiceUnavailable(0, "connection_failed", `${call.method} ${call.path}: ${reason}`);
    }
    if (response.ok) {
      if (call.text) {
        return text;
      }
      return text ? JSON.parse(text) : null;
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = { detail: text.slice(0, 500) };
    }
    throw errorFor(response.status, body, core.parseRetryAfter(response.headers.get("Retry-After")));
  }

  #announce(event: RetryEvent): void {
    this.onRetry?.(event);
  }

  // --- evidence ----------------------------------------------------------------------------------

  /** Register a source and its revision 1; cite the answer in {@link propose}. */
  async registerEvidence(kind: string, externalRef: string, content: unknown): Promise<EvidenceRevision> {
    return (await this.#send(core.registerEvidence(kind, externalRef, content))) as EvidenceRevision;
  }

  /** Add revision n+1 (n becomes superseded; fenced memories get revalidation proposals). */
  async addEvidenceRevision(evidenceId: string, content: unknown): Promise<EvidenceRevision> {
    return (await this.#send(core.addEvidenceRevision(evidenceId, content))) as EvidenceRevision;
  }

  async getEvidence(evidenceId: string): Promise<Evidence> {
    return (await this.#send(core.getEvidence(evidenceId))) as Evidence;
  }

  /** Invalidate a revision: memories resting on it are fenced at once (needs the agent permission). */
  async invalidateEvidence(evidenceId: string, revision: number, reason: string): Promise<Record<string, unknown>> {
    return (await this.#send(core.invalidateEvidence(evidenceId, revision, reason))) as Record<string, unknown>;
  }

  // --- proposals ---------------------------------------------------------------------------------

  /**
   * Submit a proposal (one Idempotency-Key per call, reused on its retries).
   *
   * A denial throws {@link ProposalDenied} (a subclass per reason).
   */
  async propose(action: ProposalAction, options: ProposeOptions = {}): Promise<Proposal> {
    return (await this.#send(core.propose(action, options))) as Proposal;
  }

  /**
   * Submit many proposals in one request. Nothing is thrown per item: each result carries its
   * `status` (201, 200 replayed, 4xx) and its `proposal` or `problem`, in the order of `items`.
   */
  async proposeBatch(items: readonly ProposeItem[]): Promise<BatchResult> {
    return (await this.#send(core.proposeBatch(items))) as BatchResult;
  }

  async #lifecycle(verb: ProposalAction, memoryId: string, reason: string, options: LifecycleOptions): Promise<Proposal> {
    const baseRevision = options.baseRevision ?? Number((await this.getMemory(memoryId)).memory.revision);
    return this.propose(verb, { ...options, memoryId, baseRevision, reason });
  }

  /** Propose `expire` (at `baseRevision`, else the revision a get reads now). */
  expire(memoryId: string, reason: string, options: LifecycleOptions = {}): Promise<Proposal> {
    return this.#lifecycle("expire", memoryId, reason, options);
  }

  /** Propose `revoke`: never served as truth again unless restored. */
  revoke(memoryId: string, reason: string, options: LifecycleOptions = {}): Promise<Proposal> {
    return this.#lifecycle("revoke", memoryId, reason, options);
  }

  /** Propose `delete`: a tombstone remains until a purge. */
  delete(memoryId: string, reason: string, options: LifecycleOptions = {}): Promise<Proposal> {
    return this.#lifecycle("delete", memoryId, reason, options);
  }

  /** Propose `purge` of a deleted memory: every trace of its content goes. */
  purge(memoryId: string, reason: string, options: LifecycleOptions = {}): Promise<Proposal> {
    return this.#lifecycle("purge", memoryId, reason, options);
  }

  /** Propose `restore` of an expired or revoked memory. */
  restore(memoryId: string, reason: string, options: LifecycleOptions = {}): Promise<Proposal> {
    return this.#lifecycle("restore", memoryId, reason, options);
  }

  /**
   * Replace the action of your proposal a reviewer returned with `request_changes`.
   * It is classified again: it goes back to review, never around it.
   */
  async amend(proposalId: string, action: ProposalAction, options: Omit<ProposeOptions, "idempotencyKey"> = {}): Promise<Proposal> {
    return (await this.#send(core.amend(proposalId, action, options))) as Proposal;
  }

  /** Return the proposal as it is now (status, classification, outcome). */
  async proposal(proposalId: string): Promise<Proposal> {
    return (await this.#send(core.getProposal(proposalId))) as Proposal;
  }

  async withdraw(proposalId: string): Promise<Proposal> {
    return (await this.#send(core.withdraw(proposalId))) as Proposal;
  }

  /**
   * Poll until the executor's receipt for the proposal exists (bounded by `timeout`).
   *
   * Throws {@link ProposalClosed} when it ended without one (rejected, expired, withdrawn,
   * denied) and {@link WaitTimeout} when `timeout` passes (e.g. it awaits review).
   */
  async waitForReceipt(proposalId: string, options: WaitOptions = {}): Promise<Receipt> {
    const deadline = performance.now() + (options.timeout ?? 30) * 1000;
    for (;;) {
      const found = await this.receipts({ proposal: proposalId });
      if (found[0]) {
        return found[0];
      }
      const { status } = await this.proposal(proposalId);
      if (core.CLOSED_WITHOUT_RECEIPT.has(status)) {
        throw new ProposalClosed(0, `proposal_${status}`, `proposal ${proposalId} is ${status}`);
      }
      if (performance.now() >= deadline) {
        throw new WaitTimeout(0, "receipt_timeout", `no receipt for ${proposalId} (status ${status})`);
      }
      await this.#sleep(options.interval ?? 0.5);
    }
  }

  // --- erasure -----------------------------------------------------------------------------------

  /**
   * Ask to erase every memory about a subject; the server plans it and sends it to review.
   * Needs a live grant to act for the subject ({@link ErasureNotAllowed} otherwise); nothing
   * is removed until reviewers approve the plan. Follow it with {@link erasure}.
   */
  async eraseSubject(
    subjectKind: string,
    subjectId: string,
    reason: string,
    options: { idempotencyKey?: string } = {},
  ): Promise<Erasure> {
    const of = { subject: { kind: subjectKind, id: subjectId } };
    return (await this.#send(core.requestErasure(of, reason, options.idempotencyKey))) as Erasure;
  }

  /**
   * Ask to retract an evidence source you registered: its content and every memory resting on
   * it go, once reviewers approve the plan. Follow it with {@link erasure}.
   */
  async retractSource(evidenceId: string, reason: string, options: { idempotencyKey?: string } = {}): Promise<Erasure> {
    const of = { source: { evidence_id: evidenceId } };
    return (await this.#send(core.requestErasure(of, reason, options.idempotencyKey))) as Erasure;
  }

  /** Where an erasure you asked for stands; once applied, its certificate. */
  async erasure(erasureId: string): Promise<Erasure> {
    return (await this.#send(core.getErasure(erasureId))) as Erasure;
  }

  /** The erasure's receipts as JSON Lines, for `manage.py verify_export`. */
  async erasureCertificate(erasureId: string): Promise<string> {
    return (await this.#send(core.erasureCertificate(erasureId))) as string;
  }

  /** The newest receipts (first page), narrowed to a proposal or a memory. */
  async receipts(filters: { proposal?: string; memory?: string } = {}): Promise<Receipt[]> {
    return ((await this.#send(core.receipts(filters))) as Page<Receipt>).results;
  }

  async receipt(receiptId: string): Promise<Receipt> {
    return (await this.#send(core.getReceipt(receiptId))) as Receipt;
  }

  /**
   * Store `text` as a memory about `about` in one call: evidence, proposal, bounded wait.
   * See {@link RememberResult} for what each status means.
   */
  remember(text: string, options: RememberOptions): Promise<RememberResult> {
    return remember(this, text, options);
  }

  // --- reads -------------------------------------------------------------------------------------

  /** Governed recall: ranked items, each in the view the read policy allows. */
  async recall(query: string, options: RecallOptions = {}): Promise<RecallResult> {
    return (await this.#send(core.recall(query, options))) as RecallResult;
  }

  /** One memory in the view policy allows (`actingFor` as `kind:id`). */
  async getMemory(memoryId: string, options: GetMemoryOptions = {}): Promise<MemoryRead> {
    return (await this.#send(core.getMemory(memoryId, options))) as MemoryRead;
  }

  /** Vote `useful` or `not_useful` on an item your own recall served. */
  async feedback(recallId: string, memoryId: string, revision: number, verdict: string): Promise<Feedback> {
    return (await this.#send(core.feedback(recallId, memoryId, revision, verdict))) as Feedback;
  }

  /** The tenant's proposals, newest first, page after page (`status`, `classification`, `limit`). */
  proposals(filters: ListFilters & PageOptions = {}): AsyncGenerator<Proposal> {
    return this.#pages<Proposal>("/api/v1/proposals/", ...splitPageOptions(filters));
  }

  /** Audited reads, newest first, page after page (`memory`, `actor`, `action`, `since`, …). */
  auditEvents(filters: ListFilters & PageOptions = {}): AsyncGenerator<AccessEvent> {
    return this.#pages<AccessEvent>("/api/v1/audit/events/", ...splitPageOptions(filters));
  }

  /** Every receipt of the tenant, newest first, page after page. */
  allReceipts(filters: ListFilters & PageOptions = {}): AsyncGenerator<Receipt> {
    return this.#pages<Receipt>("/api/v1/receipts/", ...splitPageOptions(filters));
  }

  async *#pages<T>(path: string, filters: ListFilters, maxPages: number): AsyncGenerator<T> {
    let call: Call | null = core.page(path, filters);
    for (let read = 0; call !== null && read < maxPages; read += 1) {
      const body = (await this.#send(call)) as Page<T>;
      yield* body.results;
      call = body.next ? core.nextPage(body.next, this.#basePath) : null;
    }
  }

  // --- reviewers (personal tokens) ---------------------------------------------------------------

  /** Proposals this person may decide, oldest first (first page). */
  async reviewQueue(filters: ListFilters = {}): Promise<Proposal[]> {
    return ((await this.#send(core.reviewQueue(filters))) as Page<Proposal>).results;
  }

  /** Record `approve`, `reject` or `request_changes` of the `actionDigest` you reviewed. */
  async decide(proposalId: string, decision: string, options: DecideOptions): Promise<ReviewDecision> {
    return (await this.#send(core.decide(proposalId, decision, options))) as ReviewDecision;
  }
}
