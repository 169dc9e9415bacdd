"""08: Custodian's memory tools for the OpenAI Agents SDK (pip install "./client[openai-agents]").

Builds the tools and an Agent that uses them, then invokes each tool the way the SDK's runner
does when a model calls it (no model is needed for that). Standalone on purpose: the docs'
quick start (docs/adapters/openai-agents.md) is this file.
"""

import asyncio
import json
import os
import uuid

from agents import Agent, FunctionTool
from agents.tool_context import ToolContext
from custodian_client import AsyncCustodian
from custodian_client.openai_agents import custodian_tools

URL = os.environ.get("CUSTODIAN_URL", "http://127.0.0.1:8000")
TOKEN = os.environ["CUSTODIAN_TOKEN"]  # an agent token
ACTING_FOR = os.environ.get("CUSTODIAN_ACTING_FOR", "user:pm-alice")  # an operator's grant
RUN = uuid.uuid4().hex[:8]  # keeps reruns from colliding with their earlier memories


async def call(tool: FunctionTool, arguments: dict) -> dict:
    """Invoke a tool as the SDK does for a model's call: a ToolContext and the JSON arguments."""
    raw = json.dumps(arguments)
    context = ToolContext(context=None, tool_name=tool.name, tool_call_id=f"call-{RUN}", tool_arguments=raw)
    answer = await tool.on_invoke_tool(context, raw)
    print(f"- {tool.name}: {answer}")
    return json.loads(answer) if answer.startswith("{") else {"refusal": answer}


async def main() -> None:
    async with AsyncCustodian(URL, TOKEN) as client:
        tools = custodian_tools(client, acting_for=ACTING_FOR)
        agent = Agent(
            name="assistant",
            instructions="Remember what the user asks you to; 'pending review' means nothing is stored yet.",
            tools=[*tools],
        )
        print("- tools:", ",".join(sorted(tool.name for tool in agent.tools)))
        remember, recall, forget = tools

        statement = f"Alice prefers charts over tables ({RUN})"
        stored = await call(remember, {"text": statement, "dedupe_key": f"charts-{RUN}"})
        await call(remember, {"text": statement, "dedupe_key": f"charts-{RUN}"})  # already stored
        await call(remember, {"text": statement, "subject": "user:pm-alice"})  # refused: unknown key
        await call(recall, {"query": f"charts tables {RUN}", "limit": 3})
        await call(forget, {"memory_id": stored["memory_id"], "reason": "Alice asked", "how": None})
        # With a model: from agents import Runner; await Runner.run(agent, "Remember I like charts.")


asyncio.run(main())
