"""Record refused requests (sent by the problem handler and the 404 handler)."""

from django.contrib.auth import get_user_model
from django.dispatch import receiver

from core.signals import request_denied
from tenancy.models import Agent, DeniedRequest


@receiver(request_denied, dispatch_uid="tenancy.record_denied_request")
def record_denied_request(sender, request, status: int, code: str, **kwargs) -> None:
    principal = getattr(request, "user", None)
    agent = principal if isinstance(principal, Agent) else None
    user = principal if isinstance(principal, get_user_model()) and principal.is_authenticated else None
    DeniedRequest.objects.create(
        tenant_id=agent.tenant_id if agent else None,
        agent=agent,
        user=user,
        method=request.method[:10],
        path=request.path[:500],
        status=status,
        code=code[:64],
        remote_addr=request.META.get("REMOTE_ADDR") or None,
    )
