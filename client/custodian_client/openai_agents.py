"""Custodian's remember, recall and forget as tools for the OpenAI Agents SDK (``openai-agents``).

    from agents import Agent
    from custodian_client import AsyncCustodian
    from custodian_client.openai_agents import custodian_tools

    agent = Agent(name="assistant", tools=custodian_tools(client, acting_for="user:pm-alice"))

Every tool calls Custodian through the one ``AsyncCustodian`` given (one agent token), so each
goes through the same governance as any other agent: a remember is a proposal, a forget a
lifecycle proposal, a recall governed recall. Whom the agent acts for is the developer's
setting, never an argument the model fills. Each tool's schema is strict (every property
required, nullable when optional, ``additionalProperties: false``), and an argument a tool does
not declare is refused with a message naming it: the SDK's own argument parsing would drop it
silently, storing a memory under defaults the model did not mean.

This is the only module of the client that imports ``agents``; install ``openai-agents`` to use it.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any, Literal, TypeVar

from agents import FunctionTool
from agents.tool_context import ToolContext
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from custodian_client.aio import AsyncCustodian
from custodian_client.errors import CustodianError, ProposalDenied
from custodian_client.remember import REMEMBER_DEFAULTS, describe, parse_subject
from custodian_client.types import Remembered

MAX_RECALL = 50
Arguments = TypeVar("Arguments", bound="_StrictArguments")


class _StrictArguments(BaseModel):
    """A tool's arguments: an undeclared key is an error, never dropped."""

    model_config = ConfigDict(extra="forbid")


class RememberArguments(_StrictArguments):
    text: str = Field(description="What to remember, as one statement: 'Alice prefers weekly summaries'.")
    about: str | None = Field(
        None, description="Whom it is about, as kind:id (user:pm-alice); null: whom the agent acts for."
    )
    type: Literal["preference", "semantic_fact", "episodic_event", "procedural_rule"] | None = Field(
        None, description="The kind of memory; null: preference."
    )
    scope: Literal["user", "session", "task", "agent", "shared_team", "org"] | None = Field(
        None, description="Who it is for; null: user."
    )
    evidence_text: str | None = Field(
        None, description="What was said or seen, verbatim, that supports it; null: the text itself."
    )
    dedupe_key: str | None = Field(
        None, description="A stable key for this fact (one active memory per key); null: none."
    )
    consent_basis: Literal["explicit", "inferred"] | None = Field(
        None, description="explicit when the person said it themself; inferred otherwise; null: explicit."
    )
    risk_level: Literal["low", "medium", "high"] | None = Field(
        None, description="How sensitive it is; null: low."
    )


class RecallArguments(_StrictArguments):
    query: str = Field(description="What to look for, in a few words.")
    limit: int | None = Field(None, description=f"At most this many memories (1 to {MAX_RECALL}); null: 5.")


class ForgetArguments(_StrictArguments):
    memory_id: str = Field(description="The memory to forget (an id recall or remember answered).")
    reason: str = Field(description="Why, in a sentence (kept in the audit trail).")
    how: Literal["expire", "revoke", "delete"] | None = Field(
        None, description="expire: stop using it; revoke: it was wrong; delete: remove it. null: expire."
    )


def custodian_tools(
    client: AsyncCustodian, *, acting_for: str, wait: float = REMEMBER_DEFAULTS["wait_seconds"]
) -> list[FunctionTool]:
    """Return the remember, recall and forget tools, acting for ``acting_for`` (``kind:id``).

    ``acting_for`` is the subject an operator granted the token's agent to act for ("" when the
    agent speaks for itself); the server refuses it otherwise. ``wait`` bounds how long a tool
    waits for the receipt of a proposal the policy allowed.
    """
    if acting_for:
        parse_subject(acting_for, "acting_for")  # a malformed one fails here, not at the model's first call
    tools = _Tools(client, acting_for, wait)
    return [
        _function_tool(
            "remember",
            "Propose a memory resting on evidence. Answers 'stored: memory X', 'pending review, "
            "proposal X' (nothing stored until a reviewer approves) or 'already stored: memory X'.",
            RememberArguments,
            tools.remember,
        ),
        _function_tool(
            "recall",
            "Search memory; each item comes in the view the read policy allows (raw, summary, masked).",
            RecallArguments,
            tools.recall,
        ),
        _function_tool(
            "forget",
            "Propose to expire, revoke or delete a memory; the policy decides, as for remember.",
            ForgetArguments,
            tools.forget,
        ),
    ]


class _Tools:
    """What each tool does once its arguments are valid; answers are JSON objects."""

    def __init__(self, client: AsyncCustodian, acting_for: str, wait: float) -> None:
        self.client, self.acting_for, self.wait = client, acting_for, wait

    def context(self, **extra: str) -> dict[str, Any]:
        subject = (
            {"acting_for_subject": parse_subject(self.acting_for, "acting_for")} if self.acting_for else {}
        )
        return {**subject, **extra}

    async def remember(self, args: RememberArguments) -> dict[str, Any]:
        about = args.about or self.acting_for
        if not about:
            raise ValueError("say whom the memory is about: about='kind:id' (e.g. user:pm-alice)")
        outcome = await self.client.remember(
            args.text,
            about=about,
            type=args.type or REMEMBER_DEFAULTS["type"],
            scope=args.scope or REMEMBER_DEFAULTS["scope"],
            evidence_text=args.evidence_text,
            dedupe_key=args.dedupe_key,
            acting_for=self.acting_for,
            consent_basis=args.consent_basis or REMEMBER_DEFAULTS["consent_basis"],
            risk_level=args.risk_level or REMEMBER_DEFAULTS["risk_level"],
            wait=self.wait,
        )
        return _answer(outcome, "stored")

    async def recall(self, args: RecallArguments) -> dict[str, Any]:
        found = await self.client.recall(
            args.query,
            limit=max(1, min(args.limit or 5, MAX_RECALL)),
            policy_context=self.context() or None,
        )
        items = [
            {
                "memory_id": item["memory"].get("memory_id"),
                "state": item["memory"].get("state"),
                "text": item["consumable_text"],
                "return_mode": item["return_mode"],
            }
            for item in found["results"]
        ]
        return {"recall_id": found["recall_id"], "items": items}

    async def forget(self, args: ForgetArguments) -> dict[str, Any]:
        how = args.how or "expire"
        read = await self.client.get_memory(args.memory_id, acting_for=self.acting_for or None)
        proposal = await self.client.propose(
            how,
            memory_id=args.memory_id,
            base_revision=int(read["memory"]["revision"]),
            reason=args.reason,
            policy_context=self.context(consent_basis="explicit", risk_level="low"),
        )
        outcome = await self.client.settle(proposal, wait=self.wait)
        return _answer(outcome, {"expire": "expired", "revoke": "revoked"}.get(how, "deleted"))


def _answer(outcome: Remembered, done: str) -> dict[str, Any]:
    """The tool's answer; ``stored`` (the receipt says applied) reads as what was done."""
    return {
        "status": done if outcome["status"] == "stored" else outcome["status"],
        "memory_id": outcome["memory_id"],
        "proposal_id": outcome["proposal_id"],
        "message": describe(outcome, done),
    }


def _function_tool(
    name: str,
    description: str,
    arguments: type[Arguments],
    run: Callable[[Arguments], Awaitable[dict[str, Any]]],
) -> FunctionTool:
    """A strict-schema tool that validates its JSON arguments itself, then runs ``run``.

    Every failure the model can fix (unknown or invalid arguments, a refusal) comes back as the
    tool's text, so the model reads it and can try again; anything else fails the run.
    """

    async def invoke(context: ToolContext[Any], raw_arguments: str) -> str:
        try:
            parsed = arguments.model_validate_json(raw_arguments or "{}")
        except ValidationError as exc:
            return _invalid(name, arguments, exc)
        try:
            return json.dumps(await run(parsed))
        except CustodianError as exc:
            return _refusal(exc)
        except ValueError as exc:  # a malformed kind:id
            return f"refused: {exc}"

    return FunctionTool(
        name=name,
        description=description,
        params_json_schema=arguments.model_json_schema(),
        on_invoke_tool=invoke,
        strict_json_schema=True,
    )


def _invalid(name: str, arguments: type[BaseModel], exc: ValidationError) -> str:
    accepted = ", ".join(arguments.model_fields)
    unknown = sorted(str(error["loc"][0]) for error in exc.errors() if error["type"] == "extra_forbidden")
    if unknown:
        return f"unknown argument(s): {', '.join(unknown)}; {name} accepts: {accepted}"
    problems = "; ".join(
        f"{'.'.join(str(part) for part in error['loc']) or 'arguments'}: {error['msg']}"
        for error in exc.errors()
    )
    return f"invalid arguments for {name} ({problems}); {name} accepts: {accepted}"


def _refusal(exc: CustodianError) -> str:
    if isinstance(exc, ProposalDenied):
        return (
            f"denied by policy ({exc.code}); proposal {exc.proposal_id} is stored for audit, nothing changed"
        )
    return f"refused ({exc.code}): {exc.detail}"
