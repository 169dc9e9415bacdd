"""Record refused requests (announced once per request by ``tenancy.middleware.ThrottleMiddleware``)."""

from datetime import UTC, datetime

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.dispatch import receiver
from django.utils import timezone

from core.signals import request_denied
from tenancy.models import Agent, DeniedRequest
from tenancy.throttling import address_key, client_address

ANONYMOUS, OVERFLOW = "addr:", "addr:*"


@receiver(request_denied, dispatch_uid="tenancy.record_denied_request")
def record_denied_request(sender, request, status: int, code: str, **kwargs) -> None:
    record_denial(request=request, status=status, code=code)


def record_denial(*, request, status: int, code: str) -> None:
    """Count a refusal on its (window, caller, status, code) row, inserting the row the first time.

    Table growth is bounded per window by callers and codes; anonymous callers by
    ``CUSTODIAN_DENIED_ANONYMOUS_ROWS`` rows in all, however many addresses a flood comes from.
    """
    now = timezone.now()
    principal = getattr(request, "user", None)
    agent = principal if isinstance(principal, Agent) else None
    user = principal if isinstance(principal, get_user_model()) and principal.is_authenticated else None
    address = client_address(request) or None
    if agent:
        caller = f"agent:{agent.pk}"
    elif user:
        caller = f"user:{user.pk}"
    else:
        caller = ANONYMOUS + address_key(address or "")
    window_start = _window_start(now)
    key = {"window_start": window_start, "status": status, "code": code[:64]}
    if DeniedRequest.objects.filter(caller=caller, **key).bump(at=now):
        return
    if caller.startswith(ANONYMOUS) and _anonymous_rows_full(window_start):
        caller, address = OVERFLOW, None
        if DeniedRequest.objects.filter(caller=caller, **key).bump(at=now):
            return
    try:
        with transaction.atomic():
            DeniedRequest.objects.create(
                caller=caller,
                tenant_id=agent.tenant_id if agent else None,
                agent=agent,
                user=user,
                method=request.method[:10],
                path=request.path[:500],
                remote_addr=address,
                created_at=now,
                last_seen_at=now,
                **key,
            )
    except IntegrityError:  # another process inserted the row first
        DeniedRequest.objects.filter(caller=caller, **key).bump(at=now)


def _window_start(now: datetime) -> datetime:
    seconds = settings.CUSTODIAN_DENIED_WINDOW_SECONDS
    return datetime.fromtimestamp(now.timestamp() // seconds * seconds, tz=UTC)


def _anonymous_rows_full(window_start: datetime) -> bool:
    cap = settings.CUSTODIAN_DENIED_ANONYMOUS_ROWS
    rows = DeniedRequest.objects.filter(window_start=window_start, caller__startswith=ANONYMOUS)
    return rows[:cap].count() >= cap
