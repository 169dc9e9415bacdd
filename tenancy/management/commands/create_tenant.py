from django.core.management.base import BaseCommand, CommandError

from core.commands import check_text_options
from core.errors import DomainError
from tenancy.services import create_tenant


class Command(BaseCommand):
    help = "Create a tenant (workspace)."

    def add_arguments(self, parser):
        parser.add_argument("name")

    def handle(self, *args, name, **options):
        check_text_options(name=name)
        try:
            tenant = create_tenant(name=name)
        except DomainError as exc:
            raise CommandError(exc.detail) from None
        except Exception as exc:  # full_clean's ValidationError
            raise CommandError(f"Invalid tenant name {name!r}: {exc}") from None
        self.stdout.write(f"Created tenant {tenant.name} ({tenant.id})")
