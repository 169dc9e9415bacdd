"""``Custodian``: the synchronous client. Every write is a proposal; the executor applies it."""

from __future__ import annotations

import time
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from typing import Any, cast

import httpx

from custodian_client import _core
from custodian_client._core import Call, RetryEvent, RetryPolicy
from custodian_client.errors import CustodianError, ProposalClosed, WaitTimeout
from custodian_client.remember import (
    REMEMBER_DEFAULTS,
    ReceiptWait,
    Step,
    remember_flow,
    remember_request,
    settle_flow,
)
from custodian_client.types import (
    BatchResult,
    Evidence,
    Feedback,
    MemoryRead,
    Proposal,
    RecallResult,
    Receipt,
    Remembered,
)

DEFAULT_TIMEOUT = 30.0


class Custodian:
    """A client authenticated as one token (an agent's, or a reviewer's personal ``csu_`` token).

    Identity and tenant come from the token alone; nothing this client sends can name another.
    """

    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        retry: RetryPolicy | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        on_retry: Callable[[RetryEvent], None] | None = None,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.retry = retry or RetryPolicy()
        self.on_retry = on_retry
        self._sleep = sleep
        self._http = httpx.Client(
            base_url=base_url.rstrip("/"),
            headers={"Authorization": f"Bearer {token}", "Accept": "application/json"},
            timeout=timeout,
            transport=transport,
        )

    def __enter__(self) -> Custodian:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def _send(self, call: Call) -> Any:
        attempt = 0
        while True:
            failure: httpx.TransportError | None = None
            response: httpx.Response | None = None
            try:
                response = self._http.request(
                    call.method, call.path, json=call.json, params=call.params or None, headers=call.headers
                )
            except httpx.TransportError as exc:
                failure = exc
            delay, retry_after = _core.retry_decision(self.retry, call, attempt, response)
            if delay is None:
                if failure is not None:
                    raise _core.connection_error(call, failure) from failure
                assert response is not None
                return _core.result(response, text=call.text)
            attempt += 1
            status = response.status_code if response is not None else 0
            _core.announce(
                self.on_retry, RetryEvent(call.method, call.path, status, attempt, delay, retry_after)
            )
            self._sleep(delay)

    # --- evidence -----------------------------------------------------------------------------

    def register_evidence(self, kind: str, external_ref: str, content: Any) -> Evidence:
        """Register a source and its revision 1; cite the answer in :meth:`propose`."""
        return cast(Evidence, self._send(_core.register_evidence(kind, external_ref, content)))

    def add_evidence_revision(self, evidence_id: str, content: Any) -> Evidence:
        """Add revision n+1 (n becomes superseded; fenced memories get revalidation proposals)."""
        return cast(Evidence, self._send(_core.add_evidence_revision(evidence_id, content)))

    def get_evidence(self, evidence_id: str) -> dict[str, Any]:
        return cast(dict[str, Any], self._send(_core.get_evidence(evidence_id)))

    def invalidate_evidence(self, evidence_id: str, revision: int, reason: str) -> dict[str, Any]:
        """Invalidate a revision: memories resting on it are fenced at once (needs the agent permission)."""
        return cast(dict[str, Any], self._send(_core.invalidate_evidence(evidence_id, revision, reason)))

    # --- proposals ----------------------------------------------------------------------------

    def propose(
        self,
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
    ) -> Proposal:
        """Submit a proposal (one Idempotency-Key per call, reused on its retries).

        ``evidence`` takes registration answers or ``{evidence_id, revision, content_hash}``.
        A denial raises :class:`~custodian_client.errors.ProposalDenied` (a subclass per reason).
        """
        call = _core.propose(
            action,
            memory=memory,
            memory_id=memory_id,
            base_revision=base_revision,
            changes=changes,
            evidence=evidence,
            policy_context=policy_context,
            rationale=rationale,
            reason=reason,
            idempotency_key=idempotency_key,
        )
        return cast(Proposal, self._send(call))

    def propose_batch(self, items: Sequence[Mapping[str, Any]]) -> BatchResult:
        """Submit many proposals in one request; each item takes :meth:`propose`'s keyword arguments.

        Items without ``idempotency_key`` get one here, reused on retries. Nothing is raised per
        item: each result carries its ``status`` (201, 200 replayed, 4xx) and its ``proposal`` or
        ``problem``, in the order of ``items``.
        """
        return cast(BatchResult, self._send(_core.propose_batch(items)))

    def _lifecycle(
        self, verb: str, memory_id: str, reason: str, base_revision: int | None, **kw: Any
    ) -> Proposal:
        if base_revision is None:
            base_revision = int(self.get_memory(memory_id)["memory"]["revision"])
        return self.propose(verb, memory_id=memory_id, base_revision=base_revision, reason=reason, **kw)

    def expire(self, memory_id: str, reason: str, *, base_revision: int | None = None, **kw: Any) -> Proposal:
        """Propose ``expire`` (at ``base_revision``, else the revision a get reads now)."""
        return self._lifecycle("expire", memory_id, reason, base_revision, **kw)

    def revoke(self, memory_id: str, reason: str, *, base_revision: int | None = None, **kw: Any) -> Proposal:
        """Propose ``revoke``: never served as truth again unless restored."""
        return self._lifecycle("revoke", memory_id, reason, base_revision, **kw)

    def delete(self, memory_id: str, reason: str, *, base_revision: int | None = None, **kw: Any) -> Proposal:
        """Propose ``delete``: a tombstone remains until a purge."""
        return self._lifecycle("delete", memory_id, reason, base_revision, **kw)

    def purge(self, memory_id: str, reason: str, *, base_revision: int | None = None, **kw: Any) -> Proposal:
        """Propose ``purge`` of a deleted memory: every trace of its content goes."""
        return self._lifecycle("purge", memory_id, reason, base_revision, **kw)

    def restore(
        self, memory_id: str, reason: str, *, base_revision: int | None = None, **kw: Any
    ) -> Proposal:
        """Propose ``restore`` of an expired or revoked memory."""
        return self._lifecycle("restore", memory_id, reason, base_revision, **kw)

    def amend(
        self,
        proposal_id: str,
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
    ) -> Proposal:
        """Replace the action of your proposal a reviewer returned with ``request_changes``.

        It is classified again: it goes back to review, never around it.
        """
        call = _core.amend(
            proposal_id,
            action,
            memory=memory,
            memory_id=memory_id,
            base_revision=base_revision,
            changes=changes,
            evidence=evidence,
            policy_context=policy_context,
            rationale=rationale,
            reason=reason,
        )
        return cast(Proposal, self._send(call))

    def proposal(self, proposal_id: str) -> Proposal:
        """Return the proposal as it is now (status, classification, outcome)."""
        return cast(Proposal, self._send(_core.get_proposal(proposal_id)))

    def withdraw(self, proposal_id: str) -> Proposal:
        return cast(Proposal, self._send(_core.withdraw(proposal_id)))

    def wait_for_receipt(self, proposal_id: str, *, timeout: float = 30.0, interval: float = 0.5) -> Receipt:
        """Poll until the executor's receipt for the proposal exists (bounded by ``timeout``).

        Raises :class:`ProposalClosed` when it ended without one (rejected, expired, withdrawn,
        denied) and :class:`WaitTimeout` when ``timeout`` passes (e.g. it awaits review).
        """
        deadline = time.monotonic() + timeout
        while True:
            found = self.receipts(proposal=proposal_id)
            if found:
                return found[0]
            status = self.proposal(proposal_id)["status"]
            if status in _core.CLOSED_WITHOUT_RECEIPT:
                raise ProposalClosed(0, f"proposal_{status}", f"proposal {proposal_id} is {status}")
            if time.monotonic() >= deadline:
                raise WaitTimeout(0, "receipt_timeout", f"no receipt for {proposal_id} (status {status})")
            self._sleep(interval)

    # --- erasure --------------------------------------------------------------------------------

    def erase_subject(
        self, subject_kind: str, subject_id: str, reason: str, *, idempotency_key: str | None = None
    ) -> dict[str, Any]:
        """Ask to erase every memory about a subject; the server plans it and sends it to review.

        Needs a live grant to act for the subject (``ErasureNotAllowed`` otherwise). Nothing
        is removed until reviewers approve the plan; follow it with :meth:`erasure`.
        """
        of = {"subject": {"kind": subject_kind, "id": subject_id}}
        return cast(dict[str, Any], self._send(_core.request_erasure(of, reason, idempotency_key)))

    def retract_source(
        self, evidence_id: str, reason: str, *, idempotency_key: str | None = None
    ) -> dict[str, Any]:
        """Ask to retract an evidence source you registered: its content and every memory resting on it go.

        Planned and reviewed as :meth:`erase_subject` is; follow it with :meth:`erasure`.
        """
        of = {"source": {"evidence_id": evidence_id}}
        return cast(dict[str, Any], self._send(_core.request_erasure(of, reason, idempotency_key)))

    def erasure(self, erasure_id: str) -> dict[str, Any]:
        """Where an erasure you asked for stands; once applied, its certificate."""
        return cast(dict[str, Any], self._send(_core.get_erasure(erasure_id)))

    def erasure_certificate(self, erasure_id: str) -> str:
        """The erasure's receipts as JSON Lines, for ``manage.py verify_export`` (or ``verify_export``)."""
        return cast(str, self._send(_core.erasure_certificate(erasure_id)))

    def receipts(self, *, proposal: str | None = None, memory: str | None = None) -> list[Receipt]:
        """The newest receipts (first page), narrowed to a proposal or a memory."""
        return cast(list[Receipt], self._send(_core.receipts(proposal=proposal, memory=memory))["results"])

    def receipt(self, receipt_id: str) -> Receipt:
        return cast(Receipt, self._send(_core.get_receipt(receipt_id)))

    # --- one-call remember (custodian_client.remember) -----------------------------------------

    def remember(
        self,
        text: str,
        *,
        about: str,
        type: str = REMEMBER_DEFAULTS["type"],
        scope: str = REMEMBER_DEFAULTS["scope"],
        evidence_text: str | None = None,
        evidence_kind: str = REMEMBER_DEFAULTS["evidence_kind"],
        evidence_ref: str | None = None,
        dedupe_key: str | None = None,
        acting_for: str | None = None,
        consent_basis: str = REMEMBER_DEFAULTS["consent_basis"],
        risk_level: str = REMEMBER_DEFAULTS["risk_level"],
        wait: float = REMEMBER_DEFAULTS["wait_seconds"],
    ) -> Remembered:
        """Remember ``text`` about ``about`` (``kind:id``) in one call: evidence, proposal, receipt.

        The text is its own evidence unless ``evidence_text`` is given. The answer's ``status``
        is ``stored``, ``pending_review``, ``queued`` (no receipt within ``wait`` seconds) or
        ``duplicate`` (an active memory says it already; ``memory_id`` names it). A malformed
        ``about`` raises ``ValueError`` before anything is sent; other refusals raise as
        :meth:`propose` does.
        """
        request = remember_request(
            text,
            about=about,
            type=type,
            scope=scope,
            evidence_text=evidence_text,
            evidence_kind=evidence_kind,
            evidence_ref=evidence_ref,
            dedupe_key=dedupe_key,
            acting_for=acting_for,
            consent_basis=consent_basis,
            risk_level=risk_level,
            wait=wait,
        )
        return self._drive(remember_flow(request))

    def settle(self, proposal: Proposal, *, wait: float = REMEMBER_DEFAULTS["wait_seconds"]) -> Remembered:
        """Say what a submitted proposal came to, in :meth:`remember`'s statuses (``stored``: applied).

        Waits up to ``wait`` seconds for the receipt of one the policy allowed; never for review.
        """
        return self._drive(settle_flow(proposal, wait))

    def _drive(self, flow: Generator[Step, Any, Remembered]) -> Remembered:
        """Perform each step the flow yields; send its answer back in, or throw its error in."""
        answer: Any = None
        failure: CustodianError | None = None
        while True:
            try:
                step = flow.throw(failure) if failure is not None else flow.send(answer)
            except StopIteration as done:
                return cast(Remembered, done.value)
            answer, failure = None, None
            try:
                if isinstance(step, ReceiptWait):
                    answer = self.wait_for_receipt(step.proposal_id, timeout=step.timeout)
                else:
                    answer = self._send(step)
            except CustodianError as exc:
                failure = exc

    # --- reads --------------------------------------------------------------------------------

    def recall(
        self,
        query: str,
        *,
        filters: Mapping[str, Any] | None = None,
        include_inactive: bool = False,
        limit: int = 10,
        cursor: str | None = None,
        policy_context: Mapping[str, Any] | None = None,
        neighbours: int = 0,
    ) -> RecallResult:
        """Governed recall: ranked items, each in the view the read policy allows."""
        call = _core.recall(
            query,
            filters=filters,
            include_inactive=include_inactive,
            limit=limit,
            cursor=cursor,
            policy_context=policy_context,
            neighbours=neighbours,
        )
        return cast(RecallResult, self._send(call))

    def get_memory(
        self,
        memory_id: str,
        *,
        acting_for: str | None = None,
        data_zone: str | None = None,
        correlation_id: str | None = None,
    ) -> MemoryRead:
        """One memory in the view policy allows (``acting_for`` as ``kind:id``)."""
        call = _core.get_memory(
            memory_id, acting_for=acting_for, data_zone=data_zone, correlation_id=correlation_id
        )
        return cast(MemoryRead, self._send(call))

    def feedback(self, recall_id: str, memory_id: str, revision: int, verdict: str) -> Feedback:
        """Vote ``useful`` or ``not_useful`` on an item your own recall served."""
        return cast(Feedback, self._send(_core.feedback(recall_id, memory_id, revision, verdict)))

    def proposals(self, *, max_pages: int = 100, **filters: str) -> Iterator[Proposal]:
        """The tenant's proposals, newest first, page after page (``status``, ``classification``)."""
        return cast(Iterator[Proposal], self._pages("/api/v1/proposals/", filters, max_pages))

    def audit_events(self, *, max_pages: int = 100, **filters: str) -> Iterator[dict[str, Any]]:
        """Audited reads, newest first, page after page (``memory``, ``actor``, ``action``, ``since``…)."""
        return self._pages("/api/v1/audit/events/", filters, max_pages)

    def all_receipts(self, *, max_pages: int = 100, **filters: str) -> Iterator[Receipt]:
        """Every receipt of the tenant, newest first, page after page."""
        return cast(Iterator[Receipt], self._pages("/api/v1/receipts/", filters, max_pages))

    def _pages(self, path: str, params: Mapping[str, str], max_pages: int) -> Iterator[dict[str, Any]]:
        call: Call | None = _core.page(path, params)
        for _ in range(max_pages):
            if call is None:
                return
            body = self._send(call)
            yield from body["results"]
            call = _core.next_page(body["next"], self._http.base_url.path) if body.get("next") else None

    # --- reviewers (personal tokens) ----------------------------------------------------------

    def review_queue(self, **filters: str) -> list[Proposal]:
        """Proposals this person may decide, oldest first (first page)."""
        return cast(list[Proposal], self._send(_core.review_queue(**filters))["results"])

    def decide(
        self,
        proposal_id: str,
        decision: str,
        *,
        reason: str,
        action_digest: str,
        represented_owner: str = "",
    ) -> dict[str, Any]:
        """Record ``approve``, ``reject`` or ``request_changes`` of the ``action_digest`` you reviewed."""
        call = _core.decide(
            proposal_id,
            decision,
            reason=reason,
            action_digest=action_digest,
            represented_owner=represented_owner,
        )
        return cast(dict[str, Any], self._send(call))
