from datetime import timedelta

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from core.commands import check_text_options
from core.errors import DomainError
from tenancy.services import get_agent, get_tenant, grant_delegation


def parse_subject(value: str) -> dict[str, str]:
    kind, sep, subject_id = value.partition(":")
    if not sep or not kind or not subject_id:
        raise CommandError(f"--subject must be kind:id, not {value!r}")
    return {"kind": kind, "id": subject_id}


class Command(BaseCommand):
    help = "Let an agent act for a subject (policy_context.acting_for_subject, ?acting_for=)."

    def add_arguments(self, parser):
        parser.add_argument("--tenant", required=True)
        parser.add_argument("--agent", required=True)
        parser.add_argument("--subject", required=True, help="kind:id, e.g. user:alice")
        parser.add_argument("--expires-days", type=int, default=None, help="Days until it lapses")
        parser.add_argument("--reason", default="")

    def handle(self, *args, tenant, agent, subject, expires_days, reason, **options):
        check_text_options(tenant=tenant, agent=agent, subject=subject, reason=reason)
        try:
            delegation = grant_delegation(
                agent=get_agent(tenant=get_tenant(name=tenant), name=agent),
                subject=parse_subject(subject),
                expires_at=timezone.now() + timedelta(days=expires_days) if expires_days else None,
                reason=reason,
            )
        except DomainError as exc:
            raise CommandError(exc.detail) from None
        except ValidationError as exc:
            raise CommandError("; ".join(exc.messages)) from None
        until = f" until {delegation.expires_at:%Y-%m-%d %H:%M}" if delegation.expires_at else ""
        self.stdout.write(f"{delegation}{until}")
