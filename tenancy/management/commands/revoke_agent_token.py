from django.core.management.base import BaseCommand, CommandError

from core.commands import check_text_options
from core.errors import DomainError
from tenancy.services import get_tenant, revoke_agent_tokens


class Command(BaseCommand):
    help = "Revoke an agent's tokens (all active ones, or the one whose hint is given)."

    def add_arguments(self, parser):
        parser.add_argument("--tenant", required=True)
        parser.add_argument("--agent", required=True)
        parser.add_argument("--hint", default="", help="First characters of the token")

    def handle(self, *args, tenant, agent, hint, **options):
        check_text_options(tenant=tenant, agent=agent, hint=hint)
        try:
            count = revoke_agent_tokens(tenant=get_tenant(name=tenant), agent_name=agent, hint=hint)
        except DomainError as exc:
            raise CommandError(exc.detail) from None
        if count == 0:
            raise CommandError(f"No active token for agent {agent!r} in tenant {tenant!r}")
        self.stdout.write(f"Revoked {count} token(s)")
