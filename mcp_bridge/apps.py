from django.apps import AppConfig


class McpBridgeConfig(AppConfig):
    """An MCP server that speaks to Custodian only over its REST API, as one agent token."""

    name = "mcp_bridge"
    verbose_name = "MCP server"
