"""Reading notification settings for the person who asks."""

from dataclasses import dataclass
from typing import Any

from guardian.shortcuts import get_objects_for_user

from notifications.models import EmailDelivery, EmailPreference
from tenancy.models import Tenant


@dataclass(frozen=True)
class EmailSettings:
    """What the preference page shows one person: their choice, where mail goes, and for what."""

    mode: str
    address: str
    reviewed_tenants: list[str]
    unsent: int


def email_settings(*, user: Any) -> EmailSettings:
    """Return the signed-in person's own email settings (three queries, whatever they review)."""
    preference = EmailPreference.objects.filter(user=user).values_list("mode", flat=True).first()
    tenants = get_objects_for_user(
        user, "tenancy.decide_proposal", klass=Tenant, accept_global_perms=False, with_superuser=False
    )
    unsent = EmailDelivery.objects.filter(user=user, status=EmailDelivery.Status.PENDING).count()
    return EmailSettings(
        mode=preference or EmailPreference.Mode.IMMEDIATE,
        address=user.email,
        reviewed_tenants=sorted(tenants.values_list("name", flat=True)),
        unsent=unsent,
    )
