"""What the sync and async clients share: request building, retry decisions, answer parsing.

Each API call is first described as a :class:`Call` (pure data); the two clients only differ in
how they send it and how they sleep between attempts.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urlsplit

import httpx

from custodian_client.errors import CustodianError, ServiceUnavailable, error_for

logger = logging.getLogger("custodian_client")

RETRY_STATUSES = frozenset({429, 503})
CLOSED_WITHOUT_RECEIPT = frozenset({"denied", "rejected", "expired", "withdrawn"})


@dataclass(frozen=True)
class RetryPolicy:
    """Bounded retries on 429 and 503 (and on lost connections for calls safe to repeat).

    The wait is the server's ``Retry-After`` when it sends one, else exponential backoff
    (``backoff * 2**n``); a wait longer than ``max_delay`` is not slept: the error is raised.
    """

    max_retries: int = 4
    backoff: float = 0.5
    max_delay: float = 30.0

    def delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return retry_after
        return min(self.backoff * (2**attempt), self.max_delay)


@dataclass(frozen=True)
class RetryEvent:
    """One retry the client is about to make: why, and how long it waits first."""

    method: str
    path: str
    status: int  # 0: no answer (connection failed)
    attempt: int  # 1 for the first retry
    delay: float
    retry_after: float | None


@dataclass
class Call:
    """One API request, described before it is sent (and re-sent unchanged on a retry)."""

    method: str
    path: str
    json: Any = None
    params: dict[str, str] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    # Whether repeating it after a lost connection is safe (reads, and idempotency-keyed writes).
    repeatable: bool = False
    # Whether the answer is text to hand back as it is (a JSON Lines file), not one JSON document.
    text: bool = False


def parse_retry_after(value: str | None) -> float | None:
    """Return the seconds a ``Retry-After`` header asks for (delta-seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def retry_decision(
    policy: RetryPolicy, call: Call, attempt: int, response: httpx.Response | None
) -> tuple[float | None, float | None]:
    """Return (delay, retry_after) for a retry, or (None, …) when the failure is final."""
    if attempt >= policy.max_retries:
        return None, None
    if response is None:
        return (policy.delay(attempt, None), None) if call.repeatable else (None, None)
    if response.status_code not in RETRY_STATUSES:
        return None, None
    retry_after = parse_retry_after(response.headers.get("Retry-After"))
    delay = policy.delay(attempt, retry_after)
    return (delay, retry_after) if delay <= policy.max_delay else (None, retry_after)


def announce(on_retry: Callable[[RetryEvent], None] | None, event: RetryEvent) -> None:
    logger.info(
        "custodian: %s %s answered %s; retry %d in %.2fs",
        event.method,
        event.path,
        event.status or "no connection",
        event.attempt,
        event.delay,
    )
    if on_retry is not None:
        on_retry(event)


def result(response: httpx.Response, *, text: bool = False) -> Any:
    """Return the JSON of a 2xx answer (its text, with ``text``); raise the typed error of any other."""
    if response.is_success:
        if text:
            return response.text
        return response.json() if response.content else None
    try:
        body = response.json()
    except ValueError:
        body = {"detail": response.text[:500]}
    raise error_for(response.status_code, body, parse_retry_after(response.headers.get("Retry-After")))


def connection_error(call: Call, exc: httpx.TransportError) -> CustodianError:
    return ServiceUnavailable(0, "connection_failed", f"{call.method} {call.path}: {exc}")


def binding(evidence: Mapping[str, Any]) -> dict[str, Any]:
    """Return the ``{evidence_id, revision, content_hash}`` a proposal cites, from a registration answer."""
    return {key: evidence[key] for key in ("evidence_id", "revision", "content_hash")}


# --- Calls ------------------------------------------------------------------------------------------


def register_evidence(kind: str, external_ref: str, content: Any) -> Call:
    return Call("POST", "/api/v1/evidence/", {"kind": kind, "external_ref": external_ref, "content": content})


def add_evidence_revision(evidence_id: str, content: Any) -> Call:
    return Call("POST", f"/api/v1/evidence/{evidence_id}/revisions/", {"content": content})


def get_evidence(evidence_id: str) -> Call:
    return Call("GET", f"/api/v1/evidence/{evidence_id}/", repeatable=True)


def invalidate_evidence(evidence_id: str, revision: int, reason: str) -> Call:
    return Call(
        "POST", f"/api/v1/evidence/{evidence_id}/revisions/{revision}/invalidate/", {"reason": reason}
    )


def propose(
    action: str,
    *,
    memory: Mapping[str, Any] | None = None,
    memory_id: str | None = None,
    base_revision: int | None = None,
    changes: Mapping[str, Any] | None = None,
    evidence: Sequence[Mapping[str, Any]] = (),
    policy_context: Mapping[str, Any] | None = None,
    rationale: str | None = None,
    reason: str | None = None,
    idempotency_key: str | None = None,
) -> Call:
    """Describe a proposal; its Idempotency-Key is made here once, so every retry reuses it."""
    body: dict[str, Any] = {"action": action}
    optional = {
        "memory": memory,
        "memory_id": memory_id,
        "base_revision": base_revision,
        "changes": changes,
        "policy_context": policy_context,
        "rationale": rationale,
        "reason": reason,
    }
    body |= {name: value for name, value in optional.items() if value is not None}
    if evidence:
        body["evidence"] = [binding(item) for item in evidence]
    key = idempotency_key or f"cc-{uuid.uuid4()}"
    return Call("POST", "/api/v1/proposals/", body, headers={"Idempotency-Key": key}, repeatable=True)


def propose_batch(items: Sequence[Mapping[str, Any]]) -> Call:
    """Describe a batch: each item takes :func:`propose`'s arguments and keeps its own key on retries."""
    calls = [propose(**item) for item in items]
    body = {
        "items": [
            {"idempotency_key": call.headers["Idempotency-Key"], "proposal": call.json} for call in calls
        ]
    }
    return Call("POST", "/api/v1/proposals/batch", body, repeatable=True)


def amend(proposal_id: str, action: str, **fields: Any) -> Call:
    """Describe an amendment: the whole new action of a proposal returned with request_changes."""
    call = propose(action, **fields)
    return Call("POST", f"/api/v1/proposals/{proposal_id}/amend/", call.json)


def get_proposal(proposal_id: str) -> Call:
    return Call("GET", f"/api/v1/proposals/{proposal_id}/", repeatable=True)


def withdraw(proposal_id: str) -> Call:
    return Call("POST", f"/api/v1/proposals/{proposal_id}/withdraw/", {})


def request_erasure(of: Mapping[str, Any], reason: str, idempotency_key: str | None = None) -> Call:
    """Describe an erasure request (``of``: a subject or a source); its key is made once, for retries."""
    key = idempotency_key or f"cc-erase-{uuid.uuid4()}"
    body = {**of, "reason": reason}
    return Call("POST", "/api/v1/erasures/", body, headers={"Idempotency-Key": key}, repeatable=True)


def get_erasure(erasure_id: str) -> Call:
    return Call("GET", f"/api/v1/erasures/{erasure_id}/", repeatable=True)


def erasure_certificate(erasure_id: str) -> Call:
    return Call("GET", f"/api/v1/erasures/{erasure_id}/certificate", repeatable=True, text=True)


def receipts(*, proposal: str | None = None, memory: str | None = None) -> Call:
    params = {name: value for name, value in (("proposal", proposal), ("memory", memory)) if value}
    return Call("GET", "/api/v1/receipts/", params=params, repeatable=True)


def get_receipt(receipt_id: str) -> Call:
    return Call("GET", f"/api/v1/receipts/{receipt_id}/", repeatable=True)


def recall(
    query: str,
    *,
    filters: Mapping[str, Any] | None = None,
    include_inactive: bool = False,
    limit: int = 10,
    cursor: str | None = None,
    policy_context: Mapping[str, Any] | None = None,
    neighbours: int = 0,
) -> Call:
    body: dict[str, Any] = {"query": query, "include_inactive": include_inactive, "limit": limit}
    if filters:
        body["filters"] = dict(filters)
    if cursor:
        body["cursor"] = cursor
    if policy_context:
        body["policy_context"] = dict(policy_context)
    if neighbours:
        body["context"] = {"neighbours": neighbours}
    # A search writes only its own access event, so repeating one after a lost answer is harmless.
    return Call("POST", "/api/v1/recall/search", body, repeatable=True)


def get_memory(
    memory_id: str,
    *,
    acting_for: str | None = None,
    data_zone: str | None = None,
    correlation_id: str | None = None,
) -> Call:
    params = {
        name: value
        for name, value in (
            ("acting_for", acting_for),
            ("data_zone", data_zone),
            ("correlation_id", correlation_id),
        )
        if value
    }
    return Call("GET", f"/api/v1/memories/{memory_id}/", params=params, repeatable=True)


def feedback(recall_id: str, memory_id: str, revision: int, verdict: str) -> Call:
    body = {"memory_id": memory_id, "revision": revision, "verdict": verdict}
    return Call("POST", f"/api/v1/recall/{recall_id}/feedback", body)


def page(path: str, params: Mapping[str, str]) -> Call:
    """The first page of a cursor-paginated list."""
    return Call("GET", path, params=dict(params), repeatable=True)


def next_page(link: str, base_path: str) -> Call:
    """The page a ``next`` link names, always on the client's own base URL.

    Only the link's path and query are kept, so a link naming another host (a misconfigured
    proxy, a spoofed Host header) can never receive the token.
    """
    parts = urlsplit(link)
    path = parts.path
    prefix = base_path.rstrip("/")
    if prefix and path.startswith(prefix + "/"):
        path = path[len(prefix) :]
    return Call("GET", path + (f"?{parts.query}" if parts.query else ""), repeatable=True)


def review_queue(**filters: str) -> Call:
    return Call("GET", "/api/v1/reviews/queue/", params=dict(filters), repeatable=True)


def decide(
    proposal_id: str, decision: str, *, reason: str, action_digest: str, represented_owner: str = ""
) -> Call:
    body = {
        "decision": decision,
        "reason": reason,
        "action_digest": action_digest,
        "represented_owner": represented_owner,
    }
    return Call("POST", f"/api/v1/proposals/{proposal_id}/decisions/", body)
