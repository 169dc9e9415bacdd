/**
 * Typed errors: one class per stable problem `code` Custodian answers, under one base.
 *
 * A code this version does not know still throws {@link CustodianError} (or the class for its
 * HTTP status family), with `code` set, so callers never parse bodies themselves. The table and
 * the hierarchy are the Python client's (`custodian_client/errors.py`); a test compares them.
 */

/** An active memory holding a dedupe key, as a 422 names it. */
export interface HeldBy {
  memory_id: string;
  revision: number;
}

/** A problem+json body, as far as the client reads it. */
export type ProblemBody = Record<string, unknown>;

/** A problem+json answer from Custodian (or a transport failure with `status` 0). */
export class CustodianError extends Error {
  /** The code this class stands for ("error" for the base and the status-family classes). */
  static readonly code: string = "error";
  readonly status: number;
  readonly code: string;
  readonly detail: string;
  readonly body: ProblemBody;
  /** Seconds the server asked to wait (`Retry-After`), if it said. */
  readonly retryAfter: number | null;

  constructor(
    status: number,
    code: string,
    detail: string,
    body: ProblemBody | null = null,
    retryAfter: number | null = null,
  ) {
    super(status ? `${status} ${code}: ${detail}` : `${code}: ${detail}`);
    this.name = new.target.name;
    this.status = status;
    this.code = code;
    this.detail = detail;
    this.body = body ?? {};
    this.retryAfter = retryAfter;
  }
}

/** The request was refused as malformed or invalid (4xx not covered below). */
export class BadRequest extends CustodianError {}

/** `validation_error`: `errors` names each field. */
export class ValidationFailed extends BadRequest {
  static override readonly code: string = "validation_error";
  get errors(): unknown {
    return this.body["errors"] ?? {};
  }
}

/**
 * `content_invalid` (422): the tenant's registered schema for the type refuses the content.
 * `errors` lists each `path`, `kind` and `message`; `registrationVersion` names the schema version.
 */
export class ContentInvalid extends ValidationFailed {
  static override readonly code: string = "content_invalid";
  override get errors(): unknown {
    return this.body["errors"] ?? [];
  }
  get registrationVersion(): number | null {
    const version = this.body["registration_version"];
    return typeof version === "number" ? version : null;
  }
}

export class NotAuthenticated extends CustodianError {
  static override readonly code: string = "not_authenticated";
}

export class PermissionDenied extends CustodianError {
  static override readonly code: string = "permission_denied";
}

export class NotFound extends CustodianError {
  static override readonly code: string = "not_found";
}

/** A 409: the state moved under the request (stale base revision, invalid transition, …). */
export class Conflict extends CustodianError {}

/** 429, still refused after the client's bounded retries. */
export class Throttled extends CustodianError {
  static override readonly code: string = "throttled";
}

/** 503, still failing after the client's bounded retries (or no connection at all). */
export class ServiceUnavailable extends CustodianError {
  static override readonly code: string = "service_unavailable";
}

/**
 * A proposal the policy denied (422): stored for audit, never applied.
 * `code` is the deny rule's reason; `proposalId` and `reasonCodes` come with it.
 */
export class ProposalDenied extends CustodianError {
  get proposalId(): string {
    return String(this.body["proposal_id"] ?? "");
  }
  get reasonCodes(): string[] {
    const codes = this.body["reason_codes"];
    return Array.isArray(codes) ? codes.map(String) : [];
  }
}

// The stable codes of Custodian's REST API (docs/api.md).

/** The body is not strict JSON. */
export class MalformedJson extends BadRequest {
  static override readonly code: string = "malformed_json";
}
/** The body is over the server's limit. */
export class PayloadTooLarge extends BadRequest {
  static override readonly code: string = "payload_too_large";
}
/** A chunked body: send Content-Length. */
export class LengthRequired extends BadRequest {
  static override readonly code: string = "length_required";
}
/** The cursor is not one this API issued. */
export class InvalidCursor extends BadRequest {
  static override readonly code: string = "invalid_cursor";
}
/** A value is out of range for storage. */
export class InvalidValue extends BadRequest {
  static override readonly code: string = "invalid_value";
}
/** Proposals need an Idempotency-Key. */
export class IdempotencyKeyRequired extends BadRequest {
  static override readonly code: string = "idempotency_key_required";
}
/** Send application/json. */
export class UnsupportedMediaType extends BadRequest {
  static override readonly code: string = "unsupported_media_type";
}
/** The endpoint does not take this method. */
export class MethodNotAllowed extends BadRequest {
  static override readonly code: string = "method_not_allowed";
}
/** Tenant and actor come from the credential. */
export class TenantMismatch extends PermissionDenied {
  static override readonly code: string = "tenant_mismatch";
}
/** No operator grant lets this agent act for that subject. */
export class ActingForNotGranted extends PermissionDenied {
  static override readonly code: string = "acting_for_not_granted";
}
/** Only the submitting agent may do this. */
export class NotSubmitter extends PermissionDenied {
  static override readonly code: string = "not_submitter";
}
/** custodian-* names are Custodian's own. */
export class ReservedIdentity extends PermissionDenied {
  static override readonly code: string = "reserved_identity";
}
/** A reviewer may not approve their own. */
export class SelfApprovalForbidden extends PermissionDenied {
  static override readonly code: string = "self_approval";
}
/** A decision is for an owner the proposal names, or for the reviewer alone. */
export class OwnerNotRepresentable extends PermissionDenied {
  static override readonly code: string = "owner_not_representable";
}
/** Publishing a registration needs `publish_registration` in the tenant. */
export class PublishNotPermitted extends PermissionDenied {
  static override readonly code: string = "publish_not_permitted";
}
/** Erasing a subject needs a live grant to act for it (or an operator, in the admin). */
export class ErasureNotAllowed extends PermissionDenied {
  static override readonly code: string = "erasure_not_allowed";
}
/** No erasure of that id that you asked for (another agent's reads as none). */
export class ErasureNotFound extends NotFound {
  static override readonly code: string = "erasure_not_found";
}
/** The erasure has not been applied yet, so it has no certificate. */
export class ErasureNotCertified extends Conflict {
  static override readonly code: string = "erasure_not_certified";
}
/** Not a recall of this agent. */
export class RecallNotFound extends NotFound {
  static override readonly code: string = "recall_not_found";
}
/** The recall did not serve that memory revision. */
export class ItemNotServed extends BadRequest {
  static override readonly code: string = "item_not_served";
}
/** One vote per memory revision. */
export class FeedbackAlreadyGiven extends Conflict {
  static override readonly code: string = "feedback_already_given";
}
/** The key was used before with a different body. */
export class IdempotencyConflict extends Conflict {
  static override readonly code: string = "idempotency_conflict";
}
/** The memory moved past base_revision. */
export class BaseRevisionStale extends Conflict {
  static override readonly code: string = "base_revision_stale";
}
/** The lifecycle does not allow this move. */
export class InvalidTransition extends Conflict {
  static override readonly code: string = "invalid_transition";
}
/** The proposal was decided already. */
export class AlreadyDecided extends Conflict {
  static override readonly code: string = "already_decided";
}
/** The proposal changed since it was read. */
export class StaleDigest extends Conflict {
  static override readonly code: string = "stale_digest";
}
/** The proposal is not waiting for review. */
export class NotUnderReview extends Conflict {
  static override readonly code: string = "not_under_review";
}
/** Cited evidence is unknown or its hash differs. */
export class EvidenceMismatch extends ProposalDenied {
  static override readonly code: string = "evidence_mismatch";
}
/** Cited evidence is superseded or invalidated. */
export class EvidenceInvalid extends ProposalDenied {
  static override readonly code: string = "evidence_invalid";
}
/** The target memory does not exist. */
export class TargetNotFound extends ProposalDenied {
  static override readonly code: string = "target_not_found";
}
/** The target memory is not active. */
export class TargetNotActive extends ProposalDenied {
  static override readonly code: string = "target_not_active";
}
/** An active memory holds the dedupe key: `heldBy` names it (`memory_id`, `revision`). */
export class DuplicateOfActiveMemory extends ProposalDenied {
  static override readonly code: string = "duplicate_of_active_memory";
  get heldBy(): HeldBy[] {
    const held = this.body["held_by"];
    return Array.isArray(held) ? (held as HeldBy[]) : [];
  }
}
/** The memory contradicts an active one. */
export class ContradictsActiveMemory extends ProposalDenied {
  static override readonly code: string = "contradicts_active_memory";
}
/** A finding of the admission firewall: which detector saw what kind, at which field path (never the text). */
export interface AdmissionFinding {
  detector: string;
  version: string;
  field: string;
  kind: string;
  start: number;
  end: number;
  encoding: string;
}
/**
 * `secret_detected` (422): the admission firewall found a credential or key; nothing holds it.
 * A proposal denied so has a `proposalId` (stored for audit, its text withheld); evidence, or a
 * proposal that was malformed too, was refused whole and has none.
 */
export class SecretDetected extends ProposalDenied {
  static override readonly code: string = "secret_detected";
  get findings(): AdmissionFinding[] {
    const found = this.body["findings"];
    return Array.isArray(found) ? (found as AdmissionFinding[]) : [];
  }
}
/** Evidence with this kind and external_ref is registered already (add a revision instead). */
export class EvidenceExists extends Conflict {
  static override readonly code: string = "evidence_exists";
}
/** The review window for this proposal has closed. */
export class ReviewExpired extends Conflict {
  static override readonly code: string = "review_expired";
}
/** Every review decision needs a reason. */
export class ReasonRequired extends BadRequest {
  static override readonly code: string = "reason_required";
}
/** An amendment keeps the proposal's action and target memory. */
export class AmendmentChangesTarget extends BadRequest {
  static override readonly code: string = "amendment_changes_target";
}

/** No receipt came within the bounded wait; the proposal may still be applied later. */
export class WaitTimeout extends CustodianError {}

/** The proposal ended without a receipt (rejected, expired, withdrawn or denied). */
export class ProposalClosed extends CustodianError {}

type ErrorClass = typeof CustodianError;

const CODED_CLASSES: readonly ErrorClass[] = [
  ValidationFailed,
  ContentInvalid,
  EvidenceExists,
  ReviewExpired,
  ReasonRequired,
  AmendmentChangesTarget,
  NotAuthenticated,
  PermissionDenied,
  NotFound,
  Throttled,
  ServiceUnavailable,
  MalformedJson,
  PayloadTooLarge,
  LengthRequired,
  InvalidCursor,
  InvalidValue,
  IdempotencyKeyRequired,
  UnsupportedMediaType,
  MethodNotAllowed,
  TenantMismatch,
  ActingForNotGranted,
  NotSubmitter,
  ReservedIdentity,
  SelfApprovalForbidden,
  OwnerNotRepresentable,
  PublishNotPermitted,
  ErasureNotAllowed,
  ErasureNotFound,
  ErasureNotCertified,
  RecallNotFound,
  ItemNotServed,
  FeedbackAlreadyGiven,
  IdempotencyConflict,
  BaseRevisionStale,
  InvalidTransition,
  AlreadyDecided,
  StaleDigest,
  NotUnderReview,
  EvidenceMismatch,
  EvidenceInvalid,
  TargetNotFound,
  TargetNotActive,
  DuplicateOfActiveMemory,
  ContradictsActiveMemory,
  SecretDetected,
];

/** Each stable problem code and the class thrown for it. */
export const CODE_CLASSES: ReadonlyMap<string, ErrorClass> = new Map(
  CODED_CLASSES.map((cls) => [cls.code, cls]),
);

const STATUS_CLASSES: ReadonlyMap<number, ErrorClass> = new Map<number, ErrorClass>([
  [401, NotAuthenticated],
  [403, PermissionDenied],
  [404, NotFound],
  [409, Conflict],
  [429, Throttled],
  [503, ServiceUnavailable],
]);

function fallbackClass(status: number, problem: ProblemBody): ErrorClass {
  if (status === 422 && "proposal_id" in problem) {
    return ProposalDenied;
  }
  return STATUS_CLASSES.get(status) ?? (status >= 400 && status < 500 ? BadRequest : CustodianError);
}

/** Build the typed error for a problem+json (or any non-2xx) answer. */
export function errorFor(status: number, body: unknown, retryAfter: number | null = null): CustodianError {
  const problem: ProblemBody =
    body && typeof body === "object" && !Array.isArray(body) ? (body as ProblemBody) : {};
  const code = String(problem["code"] || "error");
  const detail = String(problem["detail"] || problem["title"] || `HTTP ${status}`);
  const cls = CODE_CLASSES.get(code) ?? fallbackClass(status, problem);
  return new cls(status, code, detail, problem, retryAfter);
}
