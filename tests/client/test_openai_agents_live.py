"""The OpenAI Agents SDK tools, invoked as the SDK's runner invokes them, against a live server.

No model is called: a model's tool call reaches a ``FunctionTool`` as ``on_invoke_tool`` with a
``ToolContext`` and the raw JSON arguments, which is what these tests send.
"""

import asyncio
import json

import pytest
from agents import FunctionTool, function_tool
from agents.tool_context import ToolContext
from custodian_client import AsyncCustodian
from custodian_client.openai_agents import custodian_tools

from evidence.models import EvidenceSource
from memory_core.models import Memory

live = pytest.mark.django_db(transaction=True)


async def _invoke(tool: FunctionTool, arguments: dict | str) -> str:
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
    context = ToolContext(context=None, tool_name=tool.name, tool_call_id="call-1", tool_arguments=raw)
    return await tool.on_invoke_tool(context, raw)


def _tools(url: str = "http://127.0.0.1:1", token: str = "cst_unused") -> dict[str, FunctionTool]:
    client = AsyncCustodian(url, token)
    return {tool.name: tool for tool in custodian_tools(client, acting_for="user:pm-alice", wait=60)}


def test_every_tool_schema_is_strict_and_closed():
    tools = _tools()
    assert set(tools) == {"remember", "recall", "forget"}
    for tool in tools.values():
        schema = tool.params_json_schema
        assert tool.strict_json_schema is True
        assert schema["additionalProperties"] is False
        assert set(schema["required"]) == set(schema["properties"])  # strict: optional means nullable
    assert tools["remember"].params_json_schema["properties"]["about"]["anyOf"][1] == {"type": "null"}


def test_the_sdks_own_argument_parsing_drops_an_unknown_key():
    """Why the tools parse their arguments themselves: the SDK's function_tool ignores extra keys."""

    @function_tool
    async def echo(text: str) -> str:
        return text

    assert echo.params_json_schema["additionalProperties"] is False
    assert asyncio.run(_invoke(echo, {"text": "kept", "subject": "dropped"})) == "kept"


def test_a_malformed_acting_for_is_refused_when_the_tools_are_built():
    with pytest.raises(ValueError, match="acting_for must be 'kind:id'"):
        custodian_tools(AsyncCustodian("http://127.0.0.1:1", "cst_unused"), acting_for="pm-alice")


@live
def test_an_unknown_or_invalid_argument_is_refused_before_anything_is_sent(live_server, agent):
    async def flow() -> list[str]:
        tools = _tools(live_server.url, agent.token)
        return [
            await _invoke(tools["remember"], {"text": "Alice prefers charts", "subject": "user:pm-alice"}),
            await _invoke(tools["remember"], {"text": "Alice prefers charts", "type": "gossip"}),
            await _invoke(tools["remember"], "not json"),
            await _invoke(tools["remember"], {"text": "Alice prefers charts", "about": "pm-alice"}),
            await _invoke(tools["forget"], {"memory_id": "m", "reason": "r", "how": "shred"}),
        ]

    unknown, invalid, garbled, malformed, forget = asyncio.run(flow())
    assert unknown.startswith("unknown argument(s): subject; remember accepts: text, about, type, scope")
    assert invalid.startswith("invalid arguments for remember (type: ")
    assert garbled.startswith("invalid arguments for remember (")
    assert malformed.startswith("refused: about must be 'kind:id'")
    assert forget.startswith("invalid arguments for forget (how: ")
    assert not EvidenceSource.objects.exists()


@pytest.mark.services
@live
def test_remember_recall_and_forget_go_through_governance(live_server, agent, executor):
    async def flow() -> dict[str, dict | str]:
        tools = _tools(live_server.url, agent.token)
        remember, recall, forget = tools["remember"], tools["recall"], tools["forget"]
        said = {"text": "Alice prefers weekly summaries", "dedupe_key": "pref:cadence", "about": None}
        answers: dict[str, dict | str] = {"stored": json.loads(await _invoke(remember, said))}
        answers["again"] = json.loads(await _invoke(remember, said))
        answers["contradiction"] = await _invoke(remember, {**said, "text": "Alice prefers daily summaries"})
        answers["pending"] = json.loads(
            await _invoke(
                remember,
                {
                    "text": "momentum_12_1 shows unstable IC after industry neutralisation",
                    "about": "org:quant-desk",
                    "type": "semantic_fact",
                    "scope": "org",
                    "evidence_text": "backtest 2026-11: IC 0.031 -> 0.012 neutralised",
                    "risk_level": "medium",
                },
            )
        )
        answers["recall"] = json.loads(await _invoke(recall, {"query": "weekly summaries", "limit": None}))
        memory_id = answers["stored"]["memory_id"]
        answers["forget"] = json.loads(await _invoke(forget, {"memory_id": memory_id, "reason": "asked"}))
        return answers

    answers = asyncio.run(flow())
    stored, again, pending, found, forgotten = (
        answers[name] for name in ("stored", "again", "pending", "recall", "forget")
    )
    memory_id = stored["memory_id"]
    assert stored["status"] == "stored" and stored["message"].startswith(f"stored: memory {memory_id}")
    assert (again["status"], again["memory_id"]) == ("duplicate", memory_id)
    assert again["message"].startswith(f"already stored: memory {memory_id}")
    assert answers["contradiction"].startswith("denied by policy (contradicts_active_memory); proposal")
    assert pending["status"] == "pending_review"
    assert pending["message"].startswith(f"pending review, proposal {pending['proposal_id']}")
    assert not Memory.objects.filter(pk=pending["memory_id"]).exists()
    assert [item["memory_id"] for item in found["items"]] == [memory_id]
    assert found["items"][0]["text"] == "Alice prefers weekly summaries"
    assert forgotten["status"] == "expired" and forgotten["message"].startswith(
        f"expired: memory {memory_id}"
    )
    assert Memory.objects.get(pk=memory_id).state == "expired"
