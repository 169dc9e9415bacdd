"""Bearer-token authentication for agents.

The authenticated :class:`~tenancy.models.Agent` becomes ``request.user``;
its tenant is the only tenant a request can touch.
"""

from rest_framework import authentication, exceptions, permissions

from tenancy.models import Agent, AgentToken


class AgentTokenAuthentication(authentication.BaseAuthentication):
    keyword = "Bearer"

    def authenticate(self, request):
        header = authentication.get_authorization_header(request).split()
        if not header or header[0].lower() != self.keyword.lower().encode():
            return None
        if len(header) != 2:
            raise exceptions.AuthenticationFailed("Malformed Authorization header.")
        try:
            raw_key = header[1].decode("ascii")
        except UnicodeDecodeError:
            raise exceptions.AuthenticationFailed("Malformed token.") from None
        token = (
            AgentToken.objects.active()
            .select_related("agent__tenant")
            .filter(key_hash=AgentToken.hash_key(raw_key))
            .first()
        )
        if token is None:
            raise exceptions.AuthenticationFailed("Unknown or revoked token.")
        return token.agent, token

    def authenticate_header(self, request):
        return self.keyword


class IsAgent(permissions.BasePermission):
    """Allow only requests authenticated by an agent token."""

    def has_permission(self, request, view):
        return isinstance(request.user, Agent)
