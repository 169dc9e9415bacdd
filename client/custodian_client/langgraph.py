"""``CustodianStore``: LangGraph's long-term memory store over Custodian, where a put is a proposal.

The mapping (namespace → subject and scope, key → dedupe_key, value → content) is written out,
language-neutral, in ``docs/adapters/langgraph.md``; the constants below are its table. Every
operation is a plan of client calls (``_Plan``), run by :meth:`CustodianStore.batch` on the sync
client and by :meth:`CustodianStore.abatch` on the async one, so both follow one code path.

This is the only module of custodian-client that imports ``langgraph``.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import uuid
from collections.abc import Callable, Generator, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, TypeVar

from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from custodian_client import errors
from custodian_client.aio import AsyncCustodian
from custodian_client.client import Custodian

SUBJECT_KINDS = ("user", "agent", "org", "task", "session", "custom")
# The scope a subject kind's memories take unless a route says otherwise.
DEFAULT_SCOPES = {
    "user": "user",
    "agent": "agent",
    "org": "org",
    "task": "task",
    "session": "session",
    "custom": "shared_team",
}
# First labels read as a subject kind: LangGraph's common ("memories", user_id) is a user's.
DEFAULT_KIND_ALIASES = {"memories": "user"}
# The types whose closed content schema has a key/value pair of its own; the others keep the
# value in an attribute.
VALUE_FIELDS = {
    "preference": ("preference_key", "preference_value"),
    "profile": ("profile_key", "profile_value"),
    "semantic_fact": ("fact_key", "fact_value"),
}
NAMESPACE_ATTRIBUTE = "langgraph.namespace"
KEY_ATTRIBUTE = "langgraph.key"
VALUE_ATTRIBUTE = "langgraph.value"
DEDUPE_PREFIX = "langgraph:"
# Value fields whose text, when it is one, becomes the statement (else a JSON rendering).
STATEMENT_FIELDS = ("statement", "text", "content", "memory", "summary")
MAX_STATEMENT = 4000
MAX_KEY_FIELD = 200
PAGE = 50  # recall's largest page
DEFAULT_MAX_SCAN = 1000  # memories a search or a namespace listing reads at most
OPEN_STATUSES = frozenset({"pending_review", "changes_requested"})
DeleteAction = Literal["delete", "expire"]


class PendingReview(errors.CustodianError):
    """The put is a proposal waiting for a person; nothing is stored until it is approved.

    ``proposal_id`` names it (``Custodian.proposal``, ``wait_for_receipt``); a get of the same
    namespace and key keeps answering what was there before until the executor applies it.
    """

    code = "pending_review"

    def __init__(self, proposal: Mapping[str, Any], namespace: tuple[str, ...], key: str) -> None:
        reasons = ", ".join(proposal.get("reason_codes") or [])
        super().__init__(0, self.code, f"proposal {proposal['id']} awaits review ({reasons})", dict(proposal))
        self.proposal_id: str = str(proposal["id"])
        self.reason_codes: list[str] = list(proposal.get("reason_codes") or [])
        self.namespace = namespace
        self.key = key


class NotApplied(errors.CustodianError):
    """The executor's receipt says the proposal was not applied (stale revision, failed gate…)."""

    code = "not_applied"


@dataclass(frozen=True)
class Placement:
    """Where a namespace's items live in Custodian: whose memories, in which scope, of which type."""

    subject_kind: str
    subject_id: str
    scope: str
    memory_type: str = "preference"
    sensitivity: str = "internal"

    @property
    def subject(self) -> dict[str, str]:
        return {"kind": self.subject_kind, "id": self.subject_id}


Route = Callable[[tuple[str, ...]], Placement]


def default_route(
    namespace: tuple[str, ...],
    *,
    kind_aliases: Mapping[str, str] = DEFAULT_KIND_ALIASES,
    memory_type: str = "preference",
    sensitivity: str = "internal",
) -> Placement:
    """Place ``(kind, id, *rest)``: subject ``kind:id``, the kind's default scope; rest names a folder."""
    if len(namespace) < 2:
        raise InvalidNamespaceError(f"{namespace}: a Custodian namespace starts (subject kind, subject id)")
    kind = kind_aliases.get(namespace[0], namespace[0])
    if kind not in SUBJECT_KINDS:
        raise InvalidNamespaceError(
            f"{namespace}: the first label must be a subject kind ({', '.join(SUBJECT_KINDS)}) or an alias"
            f" ({', '.join(kind_aliases) or 'none'})"
        )
    return Placement(kind, namespace[1], DEFAULT_SCOPES[kind], memory_type, sensitivity)


def dedupe_key(namespace: tuple[str, ...], key: str) -> str:
    """Return the item's dedupe_key: ``langgraph:`` + sha256 of each label and the key, NUL-terminated."""
    if "\x00" in key:
        raise InvalidNamespaceError("a key cannot contain NUL")
    message = b"".join(part.encode("utf-8") + b"\x00" for part in (*namespace, key))
    return DEDUPE_PREFIX + hashlib.sha256(message).hexdigest()


EvidenceSource = Callable[[tuple[str, ...], str, Mapping[str, Any]], tuple[str, str, Any]]


def default_evidence(namespace: tuple[str, ...], key: str, value: Mapping[str, Any]) -> tuple[str, str, Any]:
    """What a put rests on: a ``tool_result`` saying the graph wrote it, under a fresh external_ref.

    It carries neither the value nor the key: evidence is read by id within the tenant, outside
    the read policy, so it must not hold what the memory's view may mask. A graph that has the
    real source (the conversation turn, the tool output) passes ``evidence=`` instead.
    """
    return "tool_result", f"langgraph-store/{uuid.uuid4()}", {"source": "langgraph-store", "operation": "put"}


def statement_of(value: Mapping[str, Any]) -> str:
    """The text recall searches: a text field of the value, else the value rendered as JSON."""
    for name in STATEMENT_FIELDS:
        text = value.get(name)
        if isinstance(text, str) and text.strip():
            return text[:MAX_STATEMENT]
    rendered = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    return rendered[:MAX_STATEMENT] if rendered.strip("{} ") else "(empty value)"


def content_of(placement: Placement, namespace: tuple[str, ...], key: str, value: Mapping[str, Any]) -> dict:
    """Return the memory content for an item: the statement, the exact value, namespace and key."""
    plain = dict(value)
    attributes: list[dict[str, Any]] = [
        {"key": NAMESPACE_ATTRIBUTE, "value": list(namespace)},
        {"key": KEY_ATTRIBUTE, "value": key},
    ]
    content: dict[str, Any] = {"statement": statement_of(plain)}
    pair = VALUE_FIELDS.get(placement.memory_type)
    if pair:
        if 0 < len(key) <= MAX_KEY_FIELD:
            content[pair[0]] = key
        content[pair[1]] = plain
    else:
        attributes.append({"key": VALUE_ATTRIBUTE, "value": plain})
    content["attributes"] = attributes
    return content


@dataclass(frozen=True)
class Stored:
    """An item as a raw view shows it, with the memory it lives in."""

    item: Item
    memory_id: str
    revision: int
    score: float | None = None


def stored_from(result: Mapping[str, Any]) -> Stored | None:
    """Rebuild an item from a recall result; None unless it is shown raw and was written by a store."""
    if result.get("return_mode") != "raw":
        return None
    view = result["memory"]
    content = view.get("content") or {}
    attributes = {
        entry.get("key"): entry.get("value")
        for entry in content.get("attributes") or []
        if isinstance(entry, Mapping)
    }
    namespace, key = attributes.get(NAMESPACE_ATTRIBUTE), attributes.get(KEY_ATTRIBUTE)
    if not isinstance(namespace, list) or not isinstance(key, str):
        return None
    pair = VALUE_FIELDS.get(view["type"])
    value = (
        attributes[VALUE_ATTRIBUTE] if VALUE_ATTRIBUTE in attributes else content.get(pair[1] if pair else "")
    )
    if not isinstance(value, dict):
        return None
    created, updated = datetime.fromisoformat(view["created_at"]), datetime.fromisoformat(view["updated_at"])
    score = result.get("score")
    item = SearchItem(tuple(namespace), key, value, created, updated, score)
    return Stored(item, view["memory_id"], int(view["revision"]), score)


def matches_filter(value: Mapping[str, Any], wanted: Mapping[str, Any] | None) -> bool:
    """LangGraph's search filter: each key equal, or ``{"$eq"|"$ne"|"$gt"|"$gte"|"$lt"|"$lte": x}``."""
    return all(_compare(value.get(name), expected) for name, expected in (wanted or {}).items())


_OPERATORS: dict[str, Callable[[Any, Any], bool]] = {
    "$eq": lambda a, b: a == b,
    "$ne": lambda a, b: a != b,
    "$gt": lambda a, b: a is not None and a > b,
    "$gte": lambda a, b: a is not None and a >= b,
    "$lt": lambda a, b: a is not None and a < b,
    "$lte": lambda a, b: a is not None and a <= b,
}


def _compare(actual: Any, expected: Any) -> bool:
    if isinstance(expected, Mapping) and expected and all(op in _OPERATORS for op in expected):
        try:
            return all(_OPERATORS[op](actual, operand) for op, operand in expected.items())
        except TypeError:  # an order between values that have none
            return False
    if isinstance(expected, Mapping) and isinstance(actual, Mapping):
        return matches_filter(actual, expected)
    return bool(actual == expected)


def namespace_matches(namespace: tuple[str, ...], conditions: Sequence[MatchCondition] | None) -> bool:
    """LangGraph's prefix and suffix conditions, ``*`` matching any one label."""
    for condition in conditions or ():
        path = tuple(condition.path)
        if len(path) > len(namespace):
            return False
        part = (
            namespace[: len(path)]
            if condition.match_type == "prefix"
            else namespace[len(namespace) - len(path) :]
        )
        if not all(want in ("*", have) for want, have in zip(path, part, strict=True)):
            return False
    return True


# --- plans: what an operation asks of the client, step by step ---------------------------------

T = TypeVar("T")


@dataclass(frozen=True)
class _Call:
    method: str
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)


_Plan = Generator[_Call, Any, T]


def _run(client: Custodian, plan: _Plan[T]) -> T:
    """Run a plan on the sync client: each call's answer (or error) goes back into the plan."""
    answer: Any = None
    failure: errors.CustodianError | None = None
    while True:
        try:
            step = plan.throw(failure) if failure else plan.send(answer)
        except StopIteration as done:
            return done.value
        try:
            answer, failure = getattr(client, step.method)(*step.args, **step.kwargs), None
        except errors.CustodianError as exc:
            answer, failure = None, exc


async def _arun(client: AsyncCustodian, plan: _Plan[T]) -> T:
    """Run a plan on the async client, exactly as :func:`_run` does on the sync one."""
    answer: Any = None
    failure: errors.CustodianError | None = None
    while True:
        try:
            step = plan.throw(failure) if failure else plan.send(answer)
        except StopIteration as done:
            return done.value
        try:
            answer, failure = await getattr(client, step.method)(*step.args, **step.kwargs), None
        except errors.CustodianError as exc:
            answer, failure = None, exc


class CustodianStore(BaseStore):
    """A LangGraph ``BaseStore`` whose writes are Custodian proposals and whose reads are governed recall.

    ``put`` returns once the executor's receipt exists (auto-applied, within ``wait_seconds``) and
    raises :class:`PendingReview` when a person must decide first: nothing is stored then, and a
    get does not show it. ``search`` and ``get`` return only what the read policy serves raw (the
    one view that holds the value); ``delete`` proposes ``delete`` (or ``expire``). Pass a sync
    :class:`Custodian` (``batch``), an :class:`AsyncCustodian` (``abatch``), or both; with only
    the sync one, ``abatch`` runs it in a thread. :meth:`from_url` builds and owns both.
    """

    def __init__(
        self,
        client: Custodian | None = None,
        *,
        async_client: AsyncCustodian | None = None,
        route: Route = default_route,
        acting_for: Literal["namespace"] | str | None = "namespace",
        consent_basis: str | None = None,
        risk_level: str = "low",
        data_zone: str | None = None,
        delete_action: DeleteAction = "delete",
        evidence: EvidenceSource = default_evidence,
        wait_seconds: float = 30.0,
        max_scan: int = DEFAULT_MAX_SCAN,
    ) -> None:
        if client is None and async_client is None:
            raise TypeError("CustodianStore needs a Custodian, an AsyncCustodian, or both (or use from_url)")
        self.client, self.async_client = client, async_client
        self.route = route
        self.acting_for, self.consent_basis, self.risk_level = acting_for, consent_basis, risk_level
        self.data_zone, self.delete_action, self.evidence = data_zone, delete_action, evidence
        self.wait_seconds, self.max_scan = wait_seconds, max_scan
        self._owned = False

    @classmethod
    def from_url(cls, url: str, token: str, **options: Any) -> CustodianStore:
        """Build both clients for one agent token; :meth:`close` / :meth:`aclose` close them."""
        store = cls(Custodian(url, token), async_client=AsyncCustodian(url, token), **options)
        store._owned = True
        return store

    def close(self) -> None:
        if self._owned and self.client is not None:
            self.client.close()

    async def aclose(self) -> None:
        self.close()
        if self._owned and self.async_client is not None:
            await self.async_client.close()

    def __enter__(self) -> CustodianStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- BaseStore ----------------------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run the ops in order on the sync client (a PendingReview stops the batch where it is raised)."""
        if self.client is None:
            raise TypeError("this CustodianStore has no sync Custodian: use the async methods")
        client = self.client
        return [_run(client, self._plan(op)) for op in ops]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Run the ops in order on the async client (without one, the sync client in a thread)."""
        if self.async_client is None:
            return await asyncio.to_thread(self.batch, list(ops))
        client = self.async_client
        return [await _arun(client, self._plan(op)) for op in ops]

    def _plan(self, op: Op) -> _Plan[Any]:
        if isinstance(op, GetOp):
            return self._get(op.namespace, op.key)
        if isinstance(op, PutOp):
            return self._put(op)
        if isinstance(op, SearchOp):
            return self._search(op)
        if isinstance(op, ListNamespacesOp):
            return self._list_namespaces(op)
        raise TypeError(f"unknown store operation {type(op).__name__}")

    # --- contexts -----------------------------------------------------------------------------

    def _acting_for(self, placement: Placement | None) -> dict[str, str] | None:
        if self.acting_for == "namespace":
            return placement.subject if placement else None
        if self.acting_for:
            kind, _, subject_id = self.acting_for.partition(":")
            return {"kind": kind, "id": subject_id}
        return None

    def _read_context(self, placement: Placement | None) -> dict[str, Any]:
        context: dict[str, Any] = {}
        subject = self._acting_for(placement)
        if subject:
            context["acting_for_subject"] = subject
        if self.data_zone:
            context["data_zone"] = self.data_zone
        return context

    def _write_context(self, placement: Placement) -> dict[str, Any]:
        context = {**self._read_context(placement), "risk_level": self.risk_level}
        if self.consent_basis:
            context["consent_basis"] = self.consent_basis
        return context

    # --- operations ---------------------------------------------------------------------------

    def _lookup(self, namespace: tuple[str, ...], key: str) -> _Plan[Stored | None]:
        """Find the item's memory by its dedupe_key, as recall serves it to this caller."""
        placement = self.route(tuple(namespace))
        found = yield _Call(
            "recall",
            ("",),
            {
                "filters": {
                    "subject": placement.subject,
                    "scope": placement.scope,
                    "types": [placement.memory_type],
                    "dedupe_key": dedupe_key(tuple(namespace), key),
                },
                "limit": 1,
                "policy_context": self._read_context(placement),
            },
        )
        for result in found["results"]:
            stored = stored_from(result)
            if stored and stored.item.namespace == tuple(namespace) and stored.item.key == key:
                return stored
        return None

    def _get(self, namespace: tuple[str, ...], key: str) -> _Plan[Item | None]:
        stored = yield from self._lookup(namespace, key)
        if stored is None:
            return None
        item = stored.item
        return Item(
            value=item.value,
            key=item.key,
            namespace=item.namespace,
            created_at=item.created_at,
            updated_at=item.updated_at,
        )

    def _put(self, op: PutOp) -> _Plan[None]:
        namespace = tuple(op.namespace)
        placement = self.route(namespace)
        current = yield from self._lookup(namespace, op.key)
        if op.value is None:
            if current is not None:
                yield from self._forget(placement, current)
            return None
        if current is not None and current.item.value == dict(op.value):
            return None  # already says exactly this: nothing to propose
        content = content_of(placement, namespace, op.key, op.value)
        evidence = yield _Call("register_evidence", self.evidence(namespace, op.key, op.value))
        common = {"evidence": [evidence], "policy_context": self._write_context(placement)}
        if current is None:
            memory = {
                "subject": placement.subject,
                "scope": placement.scope,
                "type": placement.memory_type,
                "content": content,
                "sensitivity": placement.sensitivity,
                "dedupe_key": dedupe_key(namespace, op.key),
            }
            proposal = yield _Call("propose", ("create",), {"memory": memory, **common})
        else:
            changes = {"content": content}
            update = {"memory_id": current.memory_id, "base_revision": current.revision, "changes": changes}
            proposal = yield _Call("propose", ("update",), {**update, **common})
        yield from self._settle(proposal, namespace, op.key)
        return None

    def _forget(self, placement: Placement, current: Stored) -> _Plan[None]:
        proposal = yield _Call(
            "propose",
            (self.delete_action,),
            {
                "memory_id": current.memory_id,
                "base_revision": current.revision,
                "reason": "deleted through the LangGraph store",
                "policy_context": self._write_context(placement),
            },
        )
        yield from self._settle(proposal, current.item.namespace, current.item.key)

    def _settle(self, proposal: Mapping[str, Any], namespace: tuple[str, ...], key: str) -> _Plan[None]:
        """Return once the receipt exists; raise PendingReview while a person has to decide."""
        if proposal["status"] in OPEN_STATUSES:
            raise PendingReview(proposal, namespace, key)
        receipt = yield _Call("wait_for_receipt", (proposal["id"],), {"timeout": self.wait_seconds})
        if receipt["outcome"] != "applied":
            raise NotApplied(
                0, f"receipt_{receipt['outcome']}", f"proposal {proposal['id']}: {receipt['outcome']}"
            )

    def _scan(
        self,
        prefix: tuple[str, ...],
        query: str,
        keep: Callable[[Stored], bool] = lambda stored: True,
        want: int | None = None,
    ) -> _Plan[list[Stored]]:
        """Read, page by page, the store's items under ``prefix`` that ``keep`` accepts.

        Stops at ``want`` of them, at the last page, or after ``max_scan`` memories read.
        """
        placement = self._placement_of_prefix(prefix)
        filters = {"subject": placement.subject} if placement else {}
        found: list[Stored] = []
        cursor, scanned = None, 0
        while scanned < self.max_scan:
            page = yield _Call(
                "recall",
                (query,),
                {
                    "filters": filters,
                    "limit": PAGE,
                    "cursor": cursor,
                    "policy_context": self._read_context(placement),
                },
            )
            scanned += PAGE
            for result in page["results"]:
                stored = stored_from(result)
                if stored and stored.item.namespace[: len(prefix)] == prefix and keep(stored):
                    found.append(stored)
            cursor = page.get("next_cursor")
            if not cursor or (want is not None and len(found) >= want):
                break
        return found

    def _placement_of_prefix(self, prefix: tuple[str, ...]) -> Placement | None:
        """The subject a prefix names, when it names one (two labels or more)."""
        if len(prefix) < 2:
            return None
        try:
            return self.route(prefix)
        except InvalidNamespaceError:
            return None

    def _search(self, op: SearchOp) -> _Plan[list[SearchItem]]:
        prefix = tuple(op.namespace_prefix)
        wanted = op.offset + op.limit
        found = yield from self._scan(
            prefix, op.query or "", lambda stored: matches_filter(stored.item.value, op.filter), wanted
        )
        return [s.item for s in found[op.offset : wanted] if isinstance(s.item, SearchItem)]

    def _list_namespaces(self, op: ListNamespacesOp) -> _Plan[list[tuple[str, ...]]]:
        prefixes: list[tuple[str, ...]] = [
            tuple(c.path) for c in op.match_conditions or () if c.match_type == "prefix" and "*" not in c.path
        ]
        prefix = max(prefixes, key=len) if prefixes else ()
        found = yield from self._scan(prefix, "")
        names = set()
        for stored in found:
            namespace = stored.item.namespace
            if namespace_matches(namespace, op.match_conditions):
                names.add(namespace[: op.max_depth] if op.max_depth is not None else namespace)
        return sorted(names)[op.offset : op.offset + op.limit]


__all__ = [
    "CustodianStore",
    "NotApplied",
    "PendingReview",
    "Placement",
    "dedupe_key",
    "default_route",
]
