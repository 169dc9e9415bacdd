"""Describe agent bearer tokens to drf-spectacular."""

from drf_spectacular.extensions import OpenApiAuthenticationExtension


class AgentTokenScheme(OpenApiAuthenticationExtension):
    target_class = "tenancy.authentication.BearerTokenAuthentication"
    name = "AgentToken"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "Agent token (cst_…) or personal reviewer token (csu_…)",
        }
