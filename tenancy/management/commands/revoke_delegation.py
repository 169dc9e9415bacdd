from django.core.management.base import BaseCommand, CommandError

from core.commands import check_text_options
from core.errors import DomainError
from tenancy.management.commands.grant_delegation import parse_subject
from tenancy.services import get_agent, get_tenant, revoke_delegations


class Command(BaseCommand):
    help = "Revoke an agent's delegations for a subject."

    def add_arguments(self, parser):
        parser.add_argument("--tenant", required=True)
        parser.add_argument("--agent", required=True)
        parser.add_argument("--subject", required=True, help="kind:id, e.g. user:alice")

    def handle(self, *args, tenant, agent, subject, **options):
        check_text_options(tenant=tenant, agent=agent, subject=subject)
        try:
            count = revoke_delegations(
                agent=get_agent(tenant=get_tenant(name=tenant), name=agent), subject=parse_subject(subject)
            )
        except DomainError as exc:
            raise CommandError(exc.detail) from None
        self.stdout.write(f"Revoked {count} delegation(s)")
