from django.core.management.base import BaseCommand, CommandError

from core.commands import check_text_options
from core.errors import DomainError
from tenancy.services import get_tenant, issue_agent_token


class Command(BaseCommand):
    help = "Issue an API token for an agent (created if new). The token is printed once."

    def add_arguments(self, parser):
        parser.add_argument("--expires-days", type=int, default=None, help="Days until it expires (0: never)")
        parser.add_argument("--tenant", required=True)
        parser.add_argument("--agent", required=True)

    def handle(self, *args, expires_days=None, tenant, agent, **options):
        check_text_options(tenant=tenant, agent=agent)
        try:
            token, raw_key = issue_agent_token(
                tenant=get_tenant(name=tenant), agent_name=agent, expires_in_days=expires_days
            )
        except DomainError as exc:
            raise CommandError(exc.detail) from None
        self.stderr.write(f"Token for {token.agent} (shown once, store it now):")
        self.stdout.write(raw_key)
