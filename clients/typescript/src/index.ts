/**
 * custodian-client: a typed client for Custodian, governed memory for AI agents.
 *
 *   import { Custodian } from "custodian-client";
 *   const custodian = new Custodian("http://127.0.0.1:8000", token);
 *   const answer = await custodian.remember("Alice prefers weekly summaries", { about: "user:pm-alice" });
 */

export { Custodian, DEFAULT_TIMEOUT } from "./client.js";
export type { CustodianOptions, FetchLike, LifecycleOptions, PageOptions, WaitOptions } from "./client.js";
export { binding, DEFAULT_RETRY_POLICY, parseRetryAfter } from "./core.js";
export type {
  DecideOptions,
  GetMemoryOptions,
  ListFilters,
  ProposeItem,
  ProposeOptions,
  RecallOptions,
  RetryEvent,
  RetryPolicy,
} from "./core.js";
export * from "./errors.js";
export { parseSubject, REMEMBER_DEFAULTS } from "./remember.js";
export type { RememberOptions, RememberResult } from "./remember.js";
export type * from "./types.js";
export type { components, paths, operations } from "./schema.js";
