"""The streamable-HTTP transport, optionally behind one bearer token.

Whoever reaches the endpoint acts as the MCP server's agent, so it is either loopback-only or
every request must carry ``Authorization: Bearer <token>``. The check is a plain ASGI
middleware around the SDK's Starlette app: it answers 401 before the MCP session manager sees
the request.
"""

from __future__ import annotations

import hmac

import uvicorn
from mcp.server.mcpserver import MCPServer
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

MIN_TOKEN_LENGTH = 32


class RequireBearerToken:
    """Answer 401 to any HTTP request without ``Authorization: Bearer <token>`` (constant-time compare)."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.expected = token.encode()

    def authorized(self, header: str) -> bool:
        scheme, _, credentials = header.partition(" ")
        # compare_digest even on a wrong scheme, so the timing says nothing about the header.
        matches = hmac.compare_digest(credentials.strip().encode(), self.expected)
        return scheme.lower() == "bearer" and matches

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        # Lifespan events pass: the SDK's session manager starts and stops on them.
        if scope["type"] == "http" and not self.authorized(Headers(scope=scope).get("authorization", "")):
            refusal = JSONResponse(
                {"error": "unauthorized", "detail": "send Authorization: Bearer <CUSTODIAN_MCP_HTTP_TOKEN>"},
                status_code=401,
                headers={"WWW-Authenticate": 'Bearer realm="custodian-mcp"'},
            )
            await refusal(scope, receive, send)
            return
        await self.app(scope, receive, send)


def serve_http(server: MCPServer, host: str, port: int, token: str = "") -> None:
    """Serve ``server`` over streamable HTTP at ``/mcp``, behind ``token`` when one is given."""
    app: ASGIApp = server.streamable_http_app(host=host)
    if token:
        app = RequireBearerToken(app, token)
    uvicorn.run(app, host=host, port=port, log_level="info")
