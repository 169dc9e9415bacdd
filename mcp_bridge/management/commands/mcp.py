"""``manage.py mcp``: serve Custodian to MCP agents (stdio, or ``--http`` streamable HTTP)."""

import os
from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from mcp_bridge.http_auth import MIN_TOKEN_LENGTH, serve_http
from mcp_bridge.server import BridgeSettings, build_server

LOOPBACK = ("127.0.0.1", "localhost", "::1")


class Command(BaseCommand):
    help = (
        "Run an MCP server that acts as ONE agent token (CUSTODIAN_TOKEN) against Custodian's REST API "
        "(CUSTODIAN_URL). stdio by default; --http serves MCP's streamable HTTP transport, behind "
        "a bearer token when CUSTODIAN_MCP_HTTP_TOKEN is set."
    )
    # It never touches the database, so it runs no system checks that might.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--http", action="store_true", help="serve streamable HTTP instead of stdio")
        parser.add_argument(
            "--host",
            default="127.0.0.1",
            help="--http: address to bind (default: local only; another needs CUSTODIAN_MCP_HTTP_TOKEN)",
        )
        parser.add_argument("--port", type=int, default=8765, help="--http: port (default 8765)")

    def handle(self, *args: Any, **options: Any) -> None:
        token = os.environ.get("CUSTODIAN_TOKEN", "")
        if not token:
            raise CommandError("Set CUSTODIAN_TOKEN to the agent token this MCP server acts as.")
        settings = BridgeSettings(
            base_url=os.environ.get("CUSTODIAN_URL", "http://127.0.0.1:8000"),
            token=token,
            acting_for=os.environ.get("CUSTODIAN_ACTING_FOR", ""),
            wait_seconds=float(os.environ.get("CUSTODIAN_MCP_WAIT_SECONDS", "5")),
        )
        http_token = os.environ.get("CUSTODIAN_MCP_HTTP_TOKEN", "")
        if http_token and len(http_token) < MIN_TOKEN_LENGTH:
            raise CommandError(f"CUSTODIAN_MCP_HTTP_TOKEN must be at least {MIN_TOKEN_LENGTH} characters.")
        if options["http"] and options["host"] not in LOOPBACK and not http_token:
            raise CommandError(
                "The MCP HTTP endpoint has no login of its own: whoever reaches it acts as CUSTODIAN_TOKEN's "
                "agent. Bind it to 127.0.0.1, or set CUSTODIAN_MCP_HTTP_TOKEN so every request needs "
                "Authorization: Bearer <it>."
            )
        server = build_server(settings)
        if options["http"]:
            serve_http(server, options["host"], options["port"], http_token)
        else:
            server.run("stdio")
