"""07: an MCP client session: the agent's tools, served by ``manage.py mcp`` over stdio.

This starts the MCP server the way a desktop or IDE agent would (same command, same env) and
calls its tools with the MCP SDK's own client. The server acts as CUSTODIAN_TOKEN's agent
through the REST API, so remember/forget are proposals like any other.
"""

import os
import sys
from pathlib import Path

import anyio
from _common import ACTING_FOR, RUN, URL, step, token
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.types import TextResourceContents

MANAGE = Path(__file__).resolve().parent.parent / "manage.py"


async def main() -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=[str(MANAGE), "mcp"],
        env={
            **os.environ,
            "CUSTODIAN_URL": URL,
            "CUSTODIAN_TOKEN": token("CUSTODIAN_TOKEN"),
            "CUSTODIAN_ACTING_FOR": ACTING_FOR,
        },
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = sorted(tool.name for tool in (await session.list_tools()).tools)
        step("tools", names=",".join(tools))
        stored = await session.call_tool(
            "remember",
            {
                "statement": f"Alice prefers charts over tables ({RUN})",
                "evidence_text": "Charts, not tables.",
            },
        )
        result = stored.structured_content
        step("remember", message=result["message"])
        found = (await session.call_tool("recall", {"query": f"charts tables {RUN}"})).structured_content
        step("recall", top=found["items"][0]["text"][:60])
        receipt = await session.read_resource(f"custodian://receipts/{result['receipt_id']}")
        body = receipt.contents[0]
        assert isinstance(body, TextResourceContents)
        step("receipt resource", bytes=len(body.text))
        forgotten = await session.call_tool(
            "forget", {"memory_id": result["memory_id"], "reason": "Alice asked"}
        )
        step("forget", message=forgotten.structured_content["message"])


anyio.run(main)
