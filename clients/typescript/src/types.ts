/**
 * The shapes Custodian answers with and takes, from the generated OpenAPI types (`schema.ts`).
 * Recall and memory reads are described by hand: the schema documents them as free-form.
 */

import type { components } from "./schema.js";

type Schemas = components["schemas"];

export type Subject = Schemas["SubjectInputRequest"];
export type MemoryInput = Schemas["MemoryCreateInputRequest"];
export type MemoryChanges = Schemas["MemoryChangesInputRequest"];
export type PolicyContext = Schemas["PolicyContextInputRequest"];
export type EvidenceBinding = Schemas["EvidenceBindingInputRequest"];
export type EvidenceKind = Schemas["EvidenceKindEnum"];
export type ProposalAction = Schemas["ProposalSubmitInputActionEnum"];
export type RecallFilters = Schemas["RecallFiltersInputRequest"];
export type MemoryType = Schemas["MemoryTypeEnum"];
export type Scope = Schemas["ScopeEnum"];
export type RiskLevel = Schemas["RiskLevelEnum"];
export type Verdict = Schemas["VerdictEnum"];
export type Decision = Schemas["DecisionEnum"];

/** A registration answer (`registerEvidence`, `addEvidenceRevision`): cite it in `propose`. */
export type EvidenceRevision = Schemas["EvidenceRevisionOutput"];
export type Evidence = Schemas["EvidenceOutput"];
export type Proposal = Schemas["ProposalOutput"];
export type BatchItemResult = Schemas["BatchItemResult"];
export type BatchResult = Schemas["BatchSubmitOutput"];
export type Receipt = Schemas["ReceiptOutput"];
export type Erasure = Schemas["ErasureOutput"];
export type ReviewDecision = Schemas["ReviewDecisionOutput"];
export type Feedback = Schemas["RecallFeedbackOutput"];
export type AccessEvent = Schemas["AccessEventOutput"];

/** A memory in the view the read policy allows (`memory_id`, `revision`, `state`, `content`, …). */
export type MemoryView = Record<string, unknown> & {
  memory_id?: string;
  revision?: number;
  state?: string;
  content?: Record<string, unknown>;
  consumable_text?: string;
};

export interface MemoryRead {
  memory: MemoryView;
  return_mode: string;
  rule: string;
  consumable_text: string;
}

export interface RecallItem {
  memory: MemoryView;
  return_mode: string;
  rule: string;
  score: number;
  matched_terms?: string[];
  consumable_text: string;
  explanation?: Record<string, unknown>;
  [key: string]: unknown;
}

export interface RecallResult {
  recall_id: string;
  results: RecallItem[];
  next_cursor: string | null;
  weights_version: string;
}
