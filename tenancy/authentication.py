"""Bearer-token authentication for agents and people.

An agent token makes the :class:`~tenancy.models.Agent` ``request.user``;
its tenant is the only tenant the request can touch. A personal token makes
the person ``request.user``; what they may see is then decided by their
object permissions per tenant.
"""

from typing import cast

from django.contrib.auth.models import AbstractBaseUser
from rest_framework import authentication, exceptions, permissions

from tenancy.models import Agent, AgentToken, UserToken
from tenancy.selectors import active_agent_token


class BearerTokenAuthentication(authentication.BaseAuthentication):
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
        if raw_key.startswith(UserToken.PREFIX):
            token = (
                UserToken.objects.active()
                .select_related("user")
                .filter(key_hash=UserToken.hash_key(raw_key), user__is_active=True)
                .first()
            )
            principal = token and token.user
        else:
            token = active_agent_token(AgentToken.hash_key(raw_key))
            principal = token and token.agent
        if token is None:
            raise exceptions.AuthenticationFailed("Unknown or revoked token.")
        return principal, token

    def authenticate_header(self, request):
        return self.keyword


def request_agent(request) -> Agent:
    """The agent a request's token authenticated; for views behind :class:`IsAgent`."""
    return cast(Agent, request.user)


class IsAgent(permissions.BasePermission):
    """Allow only requests authenticated by an agent token."""

    def has_permission(self, request, view):
        return isinstance(request.user, Agent)


class IsPerson(permissions.BasePermission):
    """Allow only people (session or personal token); agents are refused."""

    message = "This endpoint is for people; agent tokens cannot use it."

    def has_permission(self, request, view):
        return isinstance(request.user, AbstractBaseUser) and request.user.is_active
