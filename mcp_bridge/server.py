"""Custodian's tools and resources for MCP agents, built on the official ``mcp`` SDK.

Every tool calls the REST API through custodian-client as ONE agent token, so each goes through
the same governance as any other agent: a remember is a proposal, a forget is a lifecycle
proposal, reads are governed recall. This module imports no Custodian app (import-linter
enforces it): the process needs a token, never database rights.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from custodian_client import AsyncCustodian, CustodianError
from custodian_client.errors import ProposalDenied
from custodian_client.remember import (
    DUPLICATE_CODE,
    REMEMBER_DEFAULTS,
    describe,
    parse_subject,
)
from custodian_client.types import Remembered
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError, ToolError
from mcp.server.mcpserver.tools import Tool
from pydantic import BaseModel, ConfigDict, create_model, model_validator

INSTRUCTIONS = (
    "Custodian is governed memory. You never write memory directly: remember and forget submit "
    "proposals that a policy applies, sends to a human reviewer, or refuses. Report what the tool "
    "says: 'pending review' means nothing was stored yet. Cite real evidence in remember."
)


@dataclass(frozen=True)
class BridgeSettings:
    """What the MCP process knows: where Custodian is, its one token, and whom it acts for."""

    base_url: str
    token: str
    acting_for: str = ""  # "kind:id", e.g. "user:pm-alice"; empty: the agent itself
    # How long a tool waits for an auto-applied proposal's receipt: shorter than the SDK's
    # REMEMBER_DEFAULTS["wait_seconds"], since an agent's turn stalls while a tool waits.
    wait_seconds: float = 5.0


def _subject(spec: str) -> dict[str, str] | None:
    kind, _, subject_id = spec.partition(":")
    return {"kind": kind, "id": subject_id} if kind and subject_id else None


def _refusal(exc: CustodianError) -> ToolError:
    """Turn a refusal into a tool error the model can read (code, detail, proposal when stored)."""
    text = f"refused ({exc.code}): {exc.detail}"
    if isinstance(exc, ProposalDenied):
        text = (
            f"denied by policy ({exc.code}); proposal {exc.proposal_id} is stored for audit, nothing changed"
        )
    return ToolError(text)


@dataclass(frozen=True)
class _Bridge:
    """The one client every tool calls, and the settings it acts under."""

    settings: BridgeSettings
    client: AsyncCustodian

    def context(self, acting_for: str | None, **extra: str) -> dict[str, Any]:
        """The policy context a call sends: whom it acts for (the default when not named), and ``extra``."""
        subject = _subject(acting_for or self.settings.acting_for)
        return {**({"acting_for_subject": subject} if subject else {}), **extra}


class _RefusesUndeclaredArguments(BaseModel):
    """Mixed into each tool's argument model: a misnamed argument is an error, never dropped.

    Dropping it silently stored memories under defaults the agent did not mean (``type`` for
    ``memory_type`` kept the default scope); ``extra="forbid"`` also advertises
    ``additionalProperties: false``, and the validator says which names the tool does take.
    """

    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def refuse_undeclared(cls, data: Any) -> Any:
        if isinstance(data, dict):
            accepted = [field.alias or name for name, field in cls.model_fields.items()]
            if unknown := sorted(set(data) - set(accepted)):
                tool = cls.__name__.removesuffix("Arguments")
                raise ValueError(
                    f"unknown argument(s): {', '.join(unknown)}; {tool} accepts: {', '.join(accepted)}"
                )
        return data


def _strict_tool(fn: Callable[..., Any]) -> Tool:
    """The SDK's tool for ``fn``, its argument model (and so its input schema) refusing extra keys."""
    tool = Tool.from_function(fn)
    loose = tool.fn_metadata.arg_model
    strict = create_model(loose.__name__, __base__=(_RefusesUndeclaredArguments, loose))
    return tool.model_copy(
        update={
            "fn_metadata": tool.fn_metadata.model_copy(update={"arg_model": strict}),
            "parameters": strict.model_json_schema(by_alias=True),
        }
    )


def build_server(settings: BridgeSettings, custodian: AsyncCustodian | None = None) -> MCPServer:
    """Return the MCP server; ``custodian`` may be given (tests), else one is made from ``settings``."""
    bridge = _Bridge(settings, custodian or AsyncCustodian(settings.base_url, settings.token))
    server: MCPServer = MCPServer(
        "custodian",
        instructions=INSTRUCTIONS,
        version="0.1.0",
        tools=[_strict_tool(fn) for fn in _tools(bridge)],
    )
    _add_resources(server, bridge)
    return server


def _answer(outcome: Remembered, done: str) -> dict[str, Any]:
    """Say what a remember or forget came to, in the words agents read (the SDK's interpretation)."""
    proposal, receipt, status = outcome["proposal"] or {}, outcome["receipt"], outcome["status"]
    answer = {
        "proposal_id": outcome["proposal_id"],
        "memory_id": outcome["memory_id"],
        "classification": proposal.get("classification", "denied"),
        "reason_codes": proposal.get("reason_codes", [DUPLICATE_CODE] if status == "duplicate" else []),
        "status": receipt["outcome"] if receipt is not None else status,
        "message": describe(outcome, done) + (" (ask proposal_status later)" if status == "queued" else ""),
    }
    return answer if receipt is None else {**answer, "receipt_id": receipt["id"]}


def _tools(bridge: _Bridge) -> list[Callable[..., Any]]:
    """The tools, in the order agents list them; each signature is its tool's input schema."""
    client, settings, context = bridge.client, bridge.settings, bridge.context

    # Each parameter is a field of the tool's MCP input schema, as agents see it: the list stays long.
    async def remember(  # noqa: PLR0913
        statement: str,
        evidence_text: str,
        evidence_kind: Literal[
            "conversation", "document", "tool_result", "backtest_run", "commit", "dataset"
        ] = REMEMBER_DEFAULTS["evidence_kind"],
        evidence_ref: str = "",
        memory_type: Literal[
            "preference", "semantic_fact", "episodic_event", "procedural_rule"
        ] = REMEMBER_DEFAULTS["type"],
        scope: Literal["user", "session", "task", "agent", "shared_team", "org"] = REMEMBER_DEFAULTS["scope"],
        about: str = "",
        dedupe_key: str = "",
        consent_basis: str = REMEMBER_DEFAULTS["consent_basis"],
        risk_level: Literal["low", "medium", "high"] = REMEMBER_DEFAULTS["risk_level"],
    ) -> dict[str, Any]:
        """Propose a memory resting on evidence (what was said or seen, verbatim).

        ``about`` is the subject as kind:id (default: whom this server acts for); ``evidence_ref``
        names the source (a chat or document id; default: a fresh one). The policy decides:
        the answer says 'stored' with a receipt, 'pending review, proposal X' (nothing stored yet),
        or 'already stored: memory X' when an active memory says it already.
        """
        try:
            parse_subject(about or settings.acting_for)
        except ValueError:
            raise ToolError("say whom the memory is about: about='kind:id' (e.g. user:pm-alice)") from None
        try:
            outcome = await client.remember(
                statement,
                about=about or settings.acting_for,
                type=memory_type,
                scope=scope,
                evidence_text=evidence_text,
                evidence_kind=evidence_kind,
                evidence_ref=evidence_ref or None,
                dedupe_key=dedupe_key or None,
                acting_for=settings.acting_for,  # this server's setting, never the model's choice
                consent_basis=consent_basis,
                risk_level=risk_level,
                wait=settings.wait_seconds,
            )
        except CustodianError as exc:
            raise _refusal(exc) from exc
        return _answer(outcome, "stored")

    async def recall(
        query: str, limit: int = 5, include_inactive: bool = False, acting_for: str = ""
    ) -> dict[str, Any]:
        """Search memory; each item comes in the view the read policy allows (raw, summary, masked…)."""
        try:
            found = await client.recall(
                query,
                limit=max(1, min(limit, 50)),
                include_inactive=include_inactive,
                policy_context=context(acting_for) or None,
            )
        except CustodianError as exc:
            raise _refusal(exc) from exc
        items = [
            {
                "memory_id": item["memory"].get("memory_id"),
                "revision": item["memory"].get("revision"),
                "state": item["memory"].get("state"),
                "text": item["consumable_text"],
                "return_mode": item["return_mode"],
                "score": item["score"],
            }
            for item in found["results"]
        ]
        return {"recall_id": found["recall_id"], "items": items}

    async def get_memory(memory_id: str, acting_for: str = "") -> dict[str, Any]:
        """Read one memory (its state, revision and content, as the read policy allows)."""
        try:
            return dict(
                await client.get_memory(memory_id, acting_for=acting_for or settings.acting_for or None)
            )
        except CustodianError as exc:
            raise _refusal(exc) from exc

    async def forget(
        memory_id: str,
        reason: str,
        how: Literal["expire", "revoke", "delete"] = "expire",
        risk_level: Literal["low", "medium", "high"] = "low",
    ) -> dict[str, Any]:
        """Propose to expire (stop using), revoke (it was wrong) or delete a memory; policy decides."""
        acting_for = settings.acting_for or None
        try:
            proposal = await client.propose(
                how,
                memory_id=memory_id,
                base_revision=int(
                    (await client.get_memory(memory_id, acting_for=acting_for))["memory"]["revision"]
                ),
                reason=reason,
                policy_context=context(None, consent_basis="explicit", risk_level=risk_level),
            )
            outcome = await client.settle(proposal, wait=settings.wait_seconds)
        except CustodianError as exc:
            raise _refusal(exc) from exc
        return _answer(outcome, {"expire": "expired", "revoke": "revoked"}.get(how, "deleted"))

    async def proposal_status(proposal_id: str) -> dict[str, Any]:
        """Where a proposal stands (pending_review, released, applied, rejected…) and its receipt."""
        try:
            proposal = await client.proposal(proposal_id)
            receipts = await client.receipts(proposal=proposal_id)
        except CustodianError as exc:
            raise _refusal(exc) from exc
        return {
            "proposal_id": proposal["id"],
            "action": proposal["action"],
            "status": proposal["status"],
            "classification": proposal["classification"],
            "memory_id": proposal.get("memory_id"),
            "receipt": receipts[0] if receipts else None,
        }

    return [remember, recall, get_memory, forget, proposal_status]


def _add_resources(server: MCPServer, bridge: _Bridge) -> None:
    """Register the resources: a memory and a receipt, each by its id."""
    client, settings = bridge.client, bridge.settings

    @server.resource("custodian://memories/{memory_id}", mime_type="application/json")
    async def memory_resource(memory_id: str) -> str:
        """One memory, as ``get_memory`` reads it."""
        try:
            return json.dumps(await client.get_memory(memory_id, acting_for=settings.acting_for or None))
        except CustodianError as exc:
            raise ResourceNotFoundError(f"{exc.code}: {exc.detail}") from exc

    @server.resource("custodian://receipts/{receipt_id}", mime_type="application/json")
    async def receipt_resource(receipt_id: str) -> str:
        """One executor receipt (hash-chained proof that a proposal was applied, or why not)."""
        try:
            return json.dumps(await client.receipt(receipt_id))
        except CustodianError as exc:
            raise ResourceNotFoundError(f"{exc.code}: {exc.detail}") from exc
