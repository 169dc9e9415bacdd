from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from guardian.shortcuts import assign_perm

from core.commands import check_text_options
from reviews.selectors import AUDIT, DECIDE
from tenancy.models import Tenant


class Command(BaseCommand):
    help = "Let a person decide proposals in one tenant (or only view them, with --auditor)."

    def add_arguments(self, parser):
        parser.add_argument("--tenant", required=True)
        parser.add_argument("--user", required=True)
        parser.add_argument("--auditor", action="store_true", help="View only, never decide")

    def handle(self, *args, tenant, user, auditor, **options):
        check_text_options(tenant=tenant, user=user)
        tenant_row = Tenant.objects.filter(name=tenant).first()
        if tenant_row is None:
            raise CommandError(f"No tenant named {tenant!r}")
        person = get_user_model().objects.filter(username=user).first()
        if person is None:
            raise CommandError(f"No user named {user!r}")
        perm = AUDIT if auditor else DECIDE
        assign_perm(perm, person, tenant_row)
        self.stdout.write(f"Granted {perm} on tenant {tenant} to {user}")
