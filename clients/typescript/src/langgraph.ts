/**
 * `custodian-client/langgraph`: LangGraph.js's long-term memory store over Custodian, where a put
 * is a proposal and a read is governed recall.
 *
 *   const store = CustodianStore.fromUrl(url, token, { consentBasis: "explicit" });
 *   const graph = builder.compile({ store }); // nodes use `config.store`
 *
 * The mapping (namespace → subject and scope, key → dedupe_key, value → content) is the one
 * `docs/adapters/langgraph.md` writes down, the Python store's (`custodian_client/langgraph.py`):
 * the two stores read and write each other's items. Like the rest of the package it uses only
 * `fetch` and Web Crypto, so it runs wherever LangGraph.js runs.
 */

// The store classes and types live in @langchain/langgraph-checkpoint; @langchain/langgraph
// re-exports the same BaseStore, so a graph compiled with it accepts this store.
import {
  BaseStore,
  InvalidNamespaceError,
  type GetOperation,
  type Item,
  type ListNamespacesOperation,
  type MatchCondition,
  type Operation,
  type OperationResults,
  type PutOperation,
  type SearchItem,
  type SearchOperation,
} from "@langchain/langgraph-checkpoint";

import { Custodian, type CustodianOptions } from "./client.js";
import { CustodianError } from "./errors.js";
import { parseSubject } from "./remember.js";
import type {
  EvidenceKind,
  MemoryType,
  PolicyContext,
  Proposal,
  RecallFilters,
  RecallItem,
  RiskLevel,
  Scope,
  Subject,
} from "./types.js";

export { InvalidNamespaceError };

export const SUBJECT_KINDS = ["user", "agent", "org", "task", "session", "custom"] as const;
export type SubjectKind = (typeof SUBJECT_KINDS)[number];
export type Sensitivity = "public" | "internal" | "confidential" | "restricted";
export type JsonObject = Record<string, unknown>;

/** The scope a subject kind's memories take unless a route says otherwise. */
export const DEFAULT_SCOPES: Readonly<Record<SubjectKind, Scope>> = Object.freeze({
  user: "user",
  agent: "agent",
  org: "org",
  task: "task",
  session: "session",
  custom: "shared_team",
});

/** First labels read as a subject kind: LangGraph's common `["memories", userId]` is a user's. */
export const DEFAULT_KIND_ALIASES: Readonly<Record<string, SubjectKind>> = Object.freeze({ memories: "user" });

// The types whose closed content schema has a key/value pair of its own; the others keep the
// value in an attribute.
const VALUE_FIELDS: Readonly<Record<string, readonly [string, string]>> = {
  preference: ["preference_key", "preference_value"],
  profile: ["profile_key", "profile_value"],
  semantic_fact: ["fact_key", "fact_value"],
};
const NAMESPACE_ATTRIBUTE = "langgraph.namespace";
const KEY_ATTRIBUTE = "langgraph.key";
const VALUE_ATTRIBUTE = "langgraph.value";
const DEDUPE_PREFIX = "langgraph:";
// Value fields whose text, when it is one, becomes the statement (else a JSON rendering).
const STATEMENT_FIELDS = ["statement", "text", "content", "memory", "summary"] as const;
const MAX_STATEMENT = 4000;
const MAX_KEY_FIELD = 200;
const PAGE = 50; // recall's largest page
/** Memories a search or a namespace listing reads at most (the `maxScan` default). */
export const DEFAULT_MAX_SCAN = 1000;
const OPEN_STATUSES: ReadonlySet<string> = new Set(["pending_review", "changes_requested"]);

/**
 * The put is a proposal waiting for a person; nothing is stored until it is approved.
 *
 * `proposalId` names it (`Custodian.proposal`, `waitForReceipt`); a get of the same namespace and
 * key keeps answering what was there before until the executor applies it.
 */
export class PendingReview extends CustodianError {
  static override readonly code: string = "pending_review";
  readonly proposalId: string;
  readonly reasonCodes: string[];
  readonly namespace: string[];
  readonly key: string;

  constructor(proposal: Proposal, namespace: string[], key: string) {
    const reasonCodes = Array.isArray(proposal.reason_codes) ? proposal.reason_codes.map(String) : [];
    const body = proposal as unknown as Record<string, unknown>;
    super(0, "pending_review", `proposal ${proposal.id} awaits review (${reasonCodes.join(", ")})`, body);
    this.proposalId = String(proposal.id);
    this.reasonCodes = reasonCodes;
    this.namespace = namespace;
    this.key = key;
  }
}

/** The executor's receipt says the proposal was not applied (stale revision, failed gate…). */
export class NotApplied extends CustodianError {
  static override readonly code: string = "not_applied";
}

/** Where a namespace's items live in Custodian: whose memories, in which scope, of which type. */
export interface Placement {
  subjectKind: SubjectKind;
  subjectId: string;
  scope: Scope;
  memoryType: MemoryType;
  sensitivity: Sensitivity;
}

/** A function from a namespace to its placement; the subject must depend on the first two labels only. */
export type Route = (namespace: string[]) => Placement;

export interface RouteOptions {
  kindAliases?: Readonly<Record<string, SubjectKind>>;
  memoryType?: MemoryType;
  sensitivity?: Sensitivity;
}

function subjectOf(placement: Placement): Subject {
  return { kind: placement.subjectKind, id: placement.subjectId };
}

function isSubjectKind(kind: string): kind is SubjectKind {
  return (SUBJECT_KINDS as readonly string[]).includes(kind);
}

/** Place `[kind, id, ...rest]`: subject `kind:id`, the kind's default scope; rest names a folder. */
export function defaultRoute(namespace: string[], options: RouteOptions = {}): Placement {
  const aliases = options.kindAliases ?? DEFAULT_KIND_ALIASES;
  const [first, id] = namespace;
  if (first === undefined || id === undefined) {
    throw new InvalidNamespaceError(`${JSON.stringify(namespace)}: a Custodian namespace starts (subject kind, subject id)`);
  }
  const kind = Object.hasOwn(aliases, first) ? (aliases[first] as string) : first;
  if (!isSubjectKind(kind)) {
    const known = Object.keys(aliases).join(", ") || "none";
    throw new InvalidNamespaceError(
      `${JSON.stringify(namespace)}: the first label must be a subject kind (${SUBJECT_KINDS.join(", ")}) or an alias (${known})`,
    );
  }
  return {
    subjectKind: kind,
    subjectId: id,
    scope: DEFAULT_SCOPES[kind],
    memoryType: options.memoryType ?? "preference",
    sensitivity: options.sensitivity ?? "internal",
  };
}

/** Return the item's dedupe_key: `langgraph:` + sha256 of each label and the key, NUL-terminated. */
export async function dedupeKey(namespace: readonly string[], key: string): Promise<string> {
  if (key.includes("\0")) {
    throw new InvalidNamespaceError("a key cannot contain NUL");
  }
  const message = new TextEncoder().encode([...namespace, key].map((part) => `${part}\0`).join(""));
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", message));
  return DEDUPE_PREFIX + Array.from(digest, (byte) => byte.toString(16).padStart(2, "0")).join("");
}

/** What a put rests on: the evidence registered first and cited by the proposal. */
export interface EvidenceSpec {
  kind: EvidenceKind;
  externalRef: string;
  content: unknown;
}

export type EvidenceSource = (
  namespace: string[],
  key: string,
  value: JsonObject,
) => EvidenceSpec | Promise<EvidenceSpec>;

/**
 * The default evidence: a `tool_result` saying the graph wrote it, under a fresh external_ref.
 *
 * It carries neither the value nor the key: evidence is read by id within the tenant, outside the
 * read policy, so it must not hold what the memory's view may mask. A graph that has the real
 * source (the conversation turn, the tool output) passes `evidence` instead.
 */
export function defaultEvidence(): EvidenceSpec {
  return {
    kind: "tool_result",
    externalRef: `langgraph-store/${crypto.randomUUID()}`,
    content: { source: "langgraph-store", operation: "put" },
  };
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function codePoints(text: string, limit: number): string {
  return Array.from(text).slice(0, limit).join("");
}

/** JSON with sorted keys and `", "` / `": "` separators: the rendering the Python store uses. */
function render(value: unknown): string {
  if (Array.isArray(value)) {
    return `[${value.map(render).join(", ")}]`;
  }
  if (isObject(value)) {
    const names = Object.keys(value).sort();
    return `{${names.map((name) => `${JSON.stringify(name)}: ${render(value[name])}`).join(", ")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/** The text recall searches: a text field of the value, else the value rendered as JSON. */
export function statementOf(value: JsonObject): string {
  for (const name of STATEMENT_FIELDS) {
    const text = value[name];
    if (typeof text === "string" && text.trim()) {
      return codePoints(text, MAX_STATEMENT);
    }
  }
  const rendered = render(value);
  return rendered.replace(/^[{} ]+|[{} ]+$/g, "") ? codePoints(rendered, MAX_STATEMENT) : "(empty value)";
}

/** Return the memory content for an item: the statement, the exact value, namespace and key. */
export function contentOf(placement: Placement, namespace: string[], key: string, value: JsonObject): JsonObject {
  const attributes: JsonObject[] = [
    { key: NAMESPACE_ATTRIBUTE, value: [...namespace] },
    { key: KEY_ATTRIBUTE, value: key },
  ];
  const content: JsonObject = { statement: statementOf(value) };
  const pair = VALUE_FIELDS[placement.memoryType];
  if (pair) {
    const length = Array.from(key).length;
    if (length > 0 && length <= MAX_KEY_FIELD) {
      content[pair[0]] = key;
    }
    content[pair[1]] = value;
  } else {
    attributes.push({ key: VALUE_ATTRIBUTE, value });
  }
  content["attributes"] = attributes;
  return content;
}

/** An item as a raw view shows it, with the memory it lives in. */
export interface Stored {
  item: SearchItem;
  memoryId: string;
  revision: number;
}

function attributesOf(content: JsonObject): Map<unknown, unknown> {
  const entries = Array.isArray(content["attributes"]) ? content["attributes"] : [];
  return new Map(entries.filter(isObject).map((entry) => [entry["key"], entry["value"]]));
}

function valueOf(type: unknown, content: JsonObject, attributes: Map<unknown, unknown>): unknown {
  if (attributes.has(VALUE_ATTRIBUTE)) {
    return attributes.get(VALUE_ATTRIBUTE);
  }
  const pair = VALUE_FIELDS[String(type)];
  return pair ? content[pair[1]] : undefined;
}

/** Rebuild an item from a recall result; null unless it is shown raw and was written by a store. */
export function storedFrom(result: RecallItem): Stored | null {
  if (result.return_mode !== "raw") {
    return null;
  }
  const view = result.memory;
  const content = isObject(view.content) ? view.content : {};
  const attributes = attributesOf(content);
  const namespace = attributes.get(NAMESPACE_ATTRIBUTE);
  const key = attributes.get(KEY_ATTRIBUTE);
  const value = valueOf(view["type"], content, attributes);
  const labels = Array.isArray(namespace) && namespace.every((label) => typeof label === "string");
  if (!labels || typeof key !== "string" || !isObject(value)) {
    return null;
  }
  const item: SearchItem = {
    namespace: namespace as string[],
    key,
    value,
    createdAt: new Date(String(view["created_at"])),
    updatedAt: new Date(String(view["updated_at"])),
    score: result.score,
  };
  return { item, memoryId: String(view.memory_id), revision: Number(view.revision) };
}

/** Equality of JSON values: objects by their keys, in any order. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]));
  }
  if (isObject(a) && isObject(b)) {
    const names = Object.keys(a);
    return names.length === Object.keys(b).length && names.every((name) => Object.hasOwn(b, name) && jsonEqual(a[name], b[name]));
  }
  return a === b;
}

/** The order of two values of one orderable kind (-1, 0, 1), or null when they have none. */
function order(a: unknown, b: unknown): number | null {
  if ((typeof a === "number" && typeof b === "number") || (typeof a === "string" && typeof b === "string")) {
    return a < b ? -1 : a > b ? 1 : 0;
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.min(a.length, b.length); i += 1) {
      const step = jsonEqual(a[i], b[i]) ? 0 : order(a[i], b[i]);
      if (step !== 0) return step;
    }
    return Math.sign(a.length - b.length);
  }
  return null;
}

const OPERATORS: Readonly<Record<string, (actual: unknown, operand: unknown) => boolean>> = {
  $eq: (a, b) => jsonEqual(a, b),
  $ne: (a, b) => !jsonEqual(a, b),
  $gt: (a, b) => (order(a, b) ?? 0) > 0,
  $gte: (a, b) => (order(a, b) ?? -1) >= 0,
  $lt: (a, b) => (order(a, b) ?? 0) < 0,
  $lte: (a, b) => (order(a, b) ?? 1) <= 0,
};

function compare(actual: unknown, expected: unknown): boolean {
  if (isObject(expected)) {
    const ops = Object.keys(expected);
    if (ops.length > 0 && ops.every((op) => Object.hasOwn(OPERATORS, op))) {
      return ops.every((op) => (OPERATORS[op] as (a: unknown, b: unknown) => boolean)(actual, expected[op]));
    }
    if (isObject(actual)) {
      return matchesFilter(actual, expected);
    }
  }
  return jsonEqual(actual, expected);
}

/** LangGraph's search filter: each key equal, or `{"$eq"|"$ne"|"$gt"|"$gte"|"$lt"|"$lte": x}`. */
export function matchesFilter(value: JsonObject, wanted: JsonObject | undefined): boolean {
  return Object.entries(wanted ?? {}).every(([name, expected]) => compare(value[name] ?? null, expected));
}

/** LangGraph's prefix and suffix conditions, `*` matching any one label. */
export function namespaceMatches(namespace: readonly string[], conditions: readonly MatchCondition[] | undefined): boolean {
  return (conditions ?? []).every(({ matchType, path }) => {
    if (path.length > namespace.length) return false;
    const part = matchType === "prefix" ? namespace.slice(0, path.length) : namespace.slice(namespace.length - path.length);
    return path.every((want, i) => want === "*" || want === part[i]);
  });
}

function startsWith(namespace: readonly string[], prefix: readonly string[]): boolean {
  return prefix.length <= namespace.length && prefix.every((label, i) => namespace[i] === label);
}

function byLabels(a: readonly string[], b: readonly string[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i += 1) {
    const [x, y] = [a[i] as string, b[i] as string];
    if (x !== y) return x < y ? -1 : 1;
  }
  return a.length - b.length;
}

/** A put's value as the JSON the API carries: a plain object, numbers finite. */
function jsonObject(value: unknown): JsonObject {
  const text = JSON.stringify(value, (_name, each: unknown) => {
    if (typeof each === "number" && !Number.isFinite(each)) {
      throw new TypeError(`a store value is JSON: ${each} is not a JSON number`);
    }
    return each;
  });
  const parsed: unknown = text === undefined ? undefined : JSON.parse(text);
  if (!isObject(parsed)) {
    throw new TypeError("a store value is a JSON object");
  }
  return parsed;
}

export interface CustodianStoreOptions {
  /** Namespace → placement (default {@link defaultRoute}). */
  route?: Route;
  /** `"namespace"` (default: the namespace's subject), a fixed `kind:id`, or null (nobody). */
  actingFor?: string | null;
  /** Sent on writes when set (`explicit`: the subject said it themself). */
  consentBasis?: string;
  /** Sent on writes (default `low`). */
  riskLevel?: RiskLevel;
  /** Sent on reads and writes when set. */
  dataZone?: "internal" | "external";
  /** `delete` (a tombstone, default) or `expire` (restorable by a reviewed restore). */
  deleteAction?: "delete" | "expire";
  /** `(namespace, key, value)` → `{kind, externalRef, content}` (default {@link defaultEvidence}). */
  evidence?: EvidenceSource;
  /** Seconds a put waits for an auto-applied proposal's receipt (default 30). */
  waitSeconds?: number;
  /** Memories a search or listing reads at most (default 1000). */
  maxScan?: number;
}

type Scan = { prefix: string[]; query: string; keep?: (stored: Stored) => boolean; want?: number };

/**
 * A LangGraph.js `BaseStore` whose writes are Custodian proposals and whose reads are governed recall.
 *
 * `put` resolves once the executor's receipt exists (auto-applied, within `waitSeconds`) and
 * rejects with {@link PendingReview} when a person must decide first: nothing is stored then, and
 * a get does not show it. `search` and `get` return only what the read policy serves raw (the one
 * view that holds the value); `delete` proposes `delete` (or `expire`). `batch` runs its
 * operations in order; the first error ends it (LangGraph's batched store then rejects every
 * operation of that batch with it).
 */
export class CustodianStore extends BaseStore {
  readonly client: Custodian;
  readonly route: Route;
  readonly actingFor: string | null;
  readonly consentBasis: string | undefined;
  readonly riskLevel: RiskLevel;
  readonly dataZone: "internal" | "external" | undefined;
  readonly deleteAction: "delete" | "expire";
  readonly evidence: EvidenceSource;
  readonly waitSeconds: number;
  readonly maxScan: number;

  constructor(client: Custodian, options: CustodianStoreOptions = {}) {
    super();
    this.client = client;
    this.route = options.route ?? ((namespace) => defaultRoute(namespace));
    this.actingFor = options.actingFor === undefined ? "namespace" : options.actingFor;
    this.consentBasis = options.consentBasis;
    this.riskLevel = options.riskLevel ?? "low";
    this.dataZone = options.dataZone;
    this.deleteAction = options.deleteAction ?? "delete";
    this.evidence = options.evidence ?? defaultEvidence;
    this.waitSeconds = options.waitSeconds ?? 30;
    this.maxScan = options.maxScan ?? DEFAULT_MAX_SCAN;
    if (this.actingFor && this.actingFor !== "namespace") {
      parseSubject(this.actingFor); // a fixed subject is kind:id; refuse anything else now
    }
  }

  /** Build the client for one agent token as well. */
  static fromUrl(url: string, token: string, options: CustodianStoreOptions = {}, clientOptions: CustodianOptions = {}): CustodianStore {
    return new CustodianStore(new Custodian(url, token, clientOptions), options);
  }

  // --- BaseStore ---------------------------------------------------------------------------------

  /** Run the operations in order; the first error ends the batch. */
  async batch<Op extends Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    const results: unknown[] = [];
    for (const operation of operations) {
      results.push(await this.#run(operation));
    }
    return results as OperationResults<Op>;
  }

  #run(operation: Operation): Promise<unknown> {
    if ("namespacePrefix" in operation) return this.#search(operation);
    if ("value" in operation) return this.#put(operation);
    if ("key" in operation) return this.#get(operation);
    if ("limit" in operation) return this.#listNamespaces(operation);
    throw new TypeError(`unknown store operation ${JSON.stringify(operation)}`);
  }

  // --- contexts ----------------------------------------------------------------------------------

  #readContext(placement: Placement | null): PolicyContext {
    const context: PolicyContext = {};
    if (this.actingFor === "namespace") {
      if (placement) context.acting_for_subject = subjectOf(placement);
    } else if (this.actingFor) {
      context.acting_for_subject = parseSubject(this.actingFor);
    }
    if (this.dataZone) context.data_zone = this.dataZone;
    return context;
  }

  #writeContext(placement: Placement): PolicyContext {
    const context: PolicyContext = { ...this.#readContext(placement), risk_level: this.riskLevel };
    if (this.consentBasis) context.consent_basis = this.consentBasis;
    return context;
  }

  // --- operations --------------------------------------------------------------------------------

  /** Find the item's memory by its dedupe_key, as recall serves it to this caller. */
  async #lookup(namespace: string[], key: string): Promise<Stored | null> {
    const placement = this.route(namespace);
    const filters: RecallFilters = {
      subject: subjectOf(placement),
      scope: placement.scope,
      types: [placement.memoryType],
      dedupe_key: await dedupeKey(namespace, key),
    };
    const found = await this.client.recall("", { filters, limit: 1, policyContext: this.#readContext(placement) });
    for (const result of found.results) {
      const stored = storedFrom(result);
      if (stored && byLabels(stored.item.namespace, namespace) === 0 && stored.item.key === key) {
        return stored;
      }
    }
    return null;
  }

  async #get(operation: GetOperation): Promise<Item | null> {
    const stored = await this.#lookup([...operation.namespace], operation.key);
    if (stored === null) return null;
    const { namespace, key, value, createdAt, updatedAt } = stored.item;
    return { namespace, key, value, createdAt, updatedAt };
  }

  async #put(operation: PutOperation): Promise<void> {
    const namespace = [...operation.namespace];
    const { key } = operation;
    const placement = this.route(namespace);
    const value = operation.value === null ? null : jsonObject(operation.value);
    const current = await this.#lookup(namespace, key);
    if (value === null) {
      if (current !== null) await this.#forget(placement, current);
      return;
    }
    if (current !== null && jsonEqual(current.item.value, value)) {
      return; // already says exactly this: nothing to propose
    }
    const content = contentOf(placement, namespace, key, value);
    const source = await this.evidence(namespace, key, value);
    const evidence = await this.client.registerEvidence(source.kind, source.externalRef, source.content);
    const common = { evidence: [evidence], policyContext: this.#writeContext(placement) };
    const proposal =
      current === null
        ? await this.client.propose("create", {
            memory: {
              subject: subjectOf(placement),
              scope: placement.scope,
              type: placement.memoryType,
              content,
              sensitivity: placement.sensitivity,
              dedupe_key: await dedupeKey(namespace, key),
            },
            ...common,
          })
        : await this.client.propose("update", {
            memoryId: current.memoryId,
            baseRevision: current.revision,
            changes: { content },
            ...common,
          });
    await this.#settle(proposal, namespace, key);
  }

  async #forget(placement: Placement, current: Stored): Promise<void> {
    const proposal = await this.client.propose(this.deleteAction, {
      memoryId: current.memoryId,
      baseRevision: current.revision,
      reason: "deleted through the LangGraph store",
      policyContext: this.#writeContext(placement),
    });
    await this.#settle(proposal, current.item.namespace, current.item.key);
  }

  /** Resolve once the receipt exists; throw PendingReview while a person has to decide. */
  async #settle(proposal: Proposal, namespace: string[], key: string): Promise<void> {
    if (OPEN_STATUSES.has(proposal.status)) {
      throw new PendingReview(proposal, namespace, key);
    }
    const receipt = await this.client.waitForReceipt(proposal.id, { timeout: this.waitSeconds });
    if (receipt.outcome !== "applied") {
      const body = receipt as unknown as Record<string, unknown>;
      throw new NotApplied(0, `receipt_${receipt.outcome}`, `proposal ${proposal.id}: ${receipt.outcome}`, body);
    }
  }

  /**
   * Read, page by page, the store's items under `prefix` that `keep` accepts.
   *
   * Stops at `want` of them, at the last page, or after `maxScan` memories read.
   */
  async #scan({ prefix, query, keep = () => true, want }: Scan): Promise<Stored[]> {
    const placement = this.#placementOfPrefix(prefix);
    const filters: RecallFilters = placement ? { subject: subjectOf(placement) } : {};
    const policyContext = this.#readContext(placement);
    const found: Stored[] = [];
    let cursor: string | null = null;
    for (let scanned = 0; scanned < this.maxScan; scanned += PAGE) {
      const page = await this.client.recall(query, { filters, limit: PAGE, cursor, policyContext });
      for (const result of page.results) {
        const stored = storedFrom(result);
        if (stored && startsWith(stored.item.namespace, prefix) && keep(stored)) found.push(stored);
      }
      cursor = page.next_cursor;
      if (!cursor || (want !== undefined && found.length >= want)) break;
    }
    return found;
  }

  /** The placement a prefix names, when it names one (two labels or more). */
  #placementOfPrefix(prefix: string[]): Placement | null {
    if (prefix.length < 2) return null;
    try {
      return this.route(prefix);
    } catch (error) {
      if (error instanceof InvalidNamespaceError) return null;
      throw error;
    }
  }

  async #search(operation: SearchOperation): Promise<SearchItem[]> {
    const offset = operation.offset ?? 0;
    const wanted = offset + (operation.limit ?? 10);
    const found = await this.#scan({
      prefix: [...operation.namespacePrefix],
      query: operation.query ?? "",
      keep: (stored) => matchesFilter(stored.item.value, operation.filter),
      want: wanted,
    });
    return found.slice(offset, wanted).map((stored) => stored.item);
  }

  async #listNamespaces(operation: ListNamespacesOperation): Promise<string[][]> {
    const conditions = operation.matchConditions ?? [];
    const prefixes = conditions
      .filter((condition) => condition.matchType === "prefix" && !condition.path.includes("*"))
      .map((condition) => [...condition.path]);
    const prefix = prefixes.reduce<string[]>((longest, path) => (path.length > longest.length ? path : longest), []);
    const names = new Map<string, string[]>();
    for (const stored of await this.#scan({ prefix, query: "" })) {
      const { namespace } = stored.item;
      if (namespaceMatches(namespace, conditions)) {
        const cut = operation.maxDepth == null ? namespace : namespace.slice(0, operation.maxDepth);
        names.set(JSON.stringify(cut), cut);
      }
    }
    const sorted = [...names.values()].sort(byLabels);
    return sorted.slice(operation.offset, operation.offset + operation.limit);
  }
}
