"""``manage.py mcp`` driven by the MCP SDK's own client, against a live Custodian and a real worker.

The MCP process gets a token and a URL, and a database URL that cannot connect: every tool
goes through the REST API and its governance, never around it.
"""

import contextlib
import json
import os
import secrets
import socket
import subprocess
import sys
import time
from pathlib import Path

import anyio
import httpx
import httpx2
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from evidence.models import EvidenceRevision
from memory_core.models import Memory
from proposals.models import Proposal
from tests.factories import (
    apply_released,
    create_payload,
    make_agent,
    make_evidence,
    owner_context,
    submit,
    user_preference,
)

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

BASE_DIR = Path(__file__).resolve().parent.parent.parent
TOOLS = {"remember", "recall", "get_memory", "forget", "proposal_status"}


def mcp_env(url: str, token: str, tmp_path: Path) -> dict[str, str]:
    """The MCP process's environment: Custodian's URL and one agent token; no reachable database."""
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    return {
        **env,
        "CUSTODIAN_URL": url,
        "CUSTODIAN_TOKEN": token,
        "CUSTODIAN_ACTING_FOR": "user:pm-alice",
        # A tool answers as soon as the receipt exists; a loaded machine only makes it wait longer.
        "CUSTODIAN_MCP_WAIT_SECONDS": "60",
        "DATABASE_URL": "postgres://nobody@127.0.0.1:1/no_database",
        "CUSTODIAN_VAR_DIR": str(tmp_path / "mcp-var"),
        "PYTHONPATH": str(BASE_DIR / "client"),
    }


def _data(result) -> dict:
    assert not result.is_error, result.content
    return result.structured_content


def _text(result) -> str:
    return " ".join(block.text for block in result.content)


async def _session_flow(session: ClientSession, other_memory_id: str) -> dict:
    await session.initialize()
    assert {tool.name for tool in (await session.list_tools()).tools} >= TOOLS

    stored = _data(
        await session.call_tool(
            "remember",
            {
                "statement": "Alice prefers weekly summaries",
                "evidence_text": "Weekly summaries, please.",
                "dedupe_key": "pref:summary_cadence",
            },
        )
    )
    assert stored["status"] == "applied" and stored["message"].startswith("stored: memory ")
    memory_id = stored["memory_id"]

    again = _data(
        await session.call_tool(
            "remember",
            {
                "statement": "Alice prefers weekly summaries",
                "evidence_text": "Weekly, as I said.",
                "dedupe_key": "pref:summary_cadence",
            },
        )
    )
    assert (again["status"], again["memory_id"]) == ("duplicate", memory_id)
    assert again["message"].startswith(f"already stored: memory {memory_id}")

    contradiction = await session.call_tool(
        "remember",
        {
            "statement": "Alice prefers daily summaries",
            "evidence_text": "Daily, actually.",
            "dedupe_key": "pref:summary_cadence",
        },
    )
    assert contradiction.is_error
    assert "denied by policy (contradicts_active_memory); proposal" in _text(contradiction)

    pending = _data(
        await session.call_tool(
            "remember",
            {
                "statement": "momentum_12_1 shows unstable IC after industry neutralisation",
                "evidence_text": "backtest 2026-11: IC 0.031 -> 0.012 neutralised",
                "evidence_kind": "backtest_run",
                "memory_type": "semantic_fact",
                "scope": "org",
                "about": "org:quant-desk",
                "risk_level": "medium",
            },
        )
    )
    assert pending["status"] == "pending_review"
    assert pending["message"].startswith(f"pending review, proposal {pending['proposal_id']}")
    status = _data(await session.call_tool("proposal_status", {"proposal_id": pending["proposal_id"]}))
    assert (status["status"], status["receipt"]) == ("pending_review", None)

    found = _data(await session.call_tool("recall", {"query": "weekly summaries"}))
    assert found["items"][0]["memory_id"] == memory_id
    assert "momentum" not in json.dumps(_data(await session.call_tool("recall", {"query": "momentum IC"})))
    read = _data(await session.call_tool("get_memory", {"memory_id": memory_id}))
    assert read["memory"]["state"] == "active"

    resource = await session.read_resource(f"custodian://memories/{memory_id}")
    assert json.loads(resource.contents[0].text)["memory"]["memory_id"] == memory_id
    receipt = await session.read_resource(f"custodian://receipts/{stored['receipt_id']}")
    assert json.loads(receipt.contents[0].text)["outcome"] == "applied"

    forgotten = _data(await session.call_tool("forget", {"memory_id": memory_id, "reason": "Alice asked"}))
    assert forgotten["status"] == "applied" and forgotten["message"].startswith("expired: memory")

    # Another tenant's memory is as unknown to this token as a made-up id.
    refused = await session.call_tool("get_memory", {"memory_id": other_memory_id})
    assert refused.is_error and "not_found" in _text(refused)
    return {"memory_id": memory_id, "pending": pending["proposal_id"]}


def test_an_mcp_session_over_stdio_goes_through_governance(live_server, agent, executor, tmp_path):
    other = make_agent("other-desk", "intruder-agent")
    theirs = submit(
        other.agent, create_payload(user_preference(), [make_evidence(other.agent)], owner_context())
    )
    apply_released(theirs)

    async def run() -> dict:
        async with _stdio_session(mcp_env(live_server.url, agent.token, tmp_path), tmp_path) as session:
            return await _session_flow(session, str(theirs.target_id))

    outcome = anyio.run(run)
    assert Memory.objects.get(pk=outcome["memory_id"]).state == "expired"
    assert not Memory.objects.filter(type="semantic_fact", tenant=agent.tenant).exists()


def test_a_tool_refuses_arguments_it_does_not_declare(live_server, agent, tmp_path):
    """``type``/``subject`` for ``memory_type``/``about`` must not quietly store a user preference."""

    async def run() -> tuple[list, str, bool]:
        async with _stdio_session(mcp_env(live_server.url, agent.token, tmp_path), tmp_path) as session:
            await session.initialize()
            tools = (await session.list_tools()).tools
            misnamed = await session.call_tool(
                "remember",
                {
                    "statement": "Alice prefers weekly summaries",
                    "evidence_text": "Weekly summaries, please.",
                    "type": "preference",
                    "subject": "pm-alice",
                },
            )
            return tools, _text(misnamed), misnamed.is_error

    tools, text, is_error = anyio.run(run)
    assert {tool.name for tool in tools} >= TOOLS
    assert all(tool.input_schema.get("additionalProperties") is False for tool in tools), [
        (tool.name, tool.input_schema) for tool in tools
    ]
    assert is_error, text
    assert "unknown argument(s): subject, type" in text
    assert "remember accepts: statement, evidence_text, evidence_kind" in text
    assert "memory_type" in text and "about" in text
    assert not Proposal.objects.exists()
    assert not EvidenceRevision.objects.exists()


@contextlib.asynccontextmanager
async def _stdio_session(env: dict[str, str], tmp_path: Path):
    params = StdioServerParameters(
        command=sys.executable, args=["manage.py", "mcp"], env=env, cwd=str(BASE_DIR)
    )
    with open(tmp_path / "mcp-stderr.log", "w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            yield session


@contextlib.contextmanager
def _mcp_over_http(env: dict[str, str], log: Path):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with log.open("w") as out:
        process = subprocess.Popen(
            [sys.executable, "manage.py", "mcp", "--http", "--port", str(port)],
            cwd=BASE_DIR,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, log.read_text()
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
                break
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_the_streamable_http_transport_serves_the_same_tools(live_server, agent, executor, tmp_path):
    async def run(url: str) -> dict:
        async with streamable_http_client(url) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            names = {tool.name for tool in (await session.list_tools()).tools}
            stored = await session.call_tool(
                "remember", {"statement": "Alice likes charts", "evidence_text": "Charts, please."}
            )
            return {"names": names, "stored": _data(stored)}

    with _mcp_over_http(mcp_env(live_server.url, agent.token, tmp_path), tmp_path / "mcp-http.log") as url:
        outcome = anyio.run(run, url)
    assert outcome["names"] >= TOOLS
    assert outcome["stored"]["status"] == "applied"


def test_the_http_transport_can_require_a_bearer_token(live_server, agent, tmp_path):
    token = secrets.token_urlsafe(32)
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "probe", "version": "0"},
        },
    }
    accept = {"Accept": "application/json, text/event-stream"}

    async def session_tools(url: str) -> set[str]:
        headers = {"Authorization": f"Bearer {token}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=60) as http,
            streamable_http_client(url, http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            return {tool.name for tool in (await session.list_tools()).tools}

    env = {**mcp_env(live_server.url, agent.token, tmp_path), "CUSTODIAN_MCP_HTTP_TOKEN": token}
    with _mcp_over_http(env, tmp_path / "mcp-http.log") as url:
        refusals = [
            httpx.post(url, json=initialize, headers={**accept, **extra}, timeout=30)
            for extra in ({}, {"Authorization": f"Bearer {token[:-1]}x"}, {"Authorization": token})
        ]
        names = anyio.run(session_tools, url)
    assert [response.status_code for response in refusals] == [401, 401, 401]
    assert refusals[0].headers["WWW-Authenticate"].startswith("Bearer")
    assert names >= TOOLS
