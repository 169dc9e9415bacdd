"""Run the dormancy sweep once (the beat task runs it hourly).

    manage.py dormancy_sweep [--limit N] [--scan N] [--tenant NAME]

It only proposes: each ``dormant`` proposal is auto-applied by the executor
under ``auto-system-dormancy`` and leaves a receipt.
"""

from django.core.management.base import BaseCommand

from maintenance.dormancy import propose_dormancy
from tenancy.services import get_tenant


class Command(BaseCommand):
    help = "Propose dormancy for memories whose activation stayed below their type's threshold."

    def add_arguments(self, parser):
        parser.add_argument("--limit", type=int, default=500, help="most proposals this run")
        parser.add_argument("--scan", type=int, default=2000, help="most candidates read per tenant and type")
        parser.add_argument("--tenant", default="", help="only this tenant (by name)")

    def handle(self, *args, limit: int, scan: int, tenant: str, **options):
        tenant_id = get_tenant(name=tenant).id if tenant else None
        proposed = propose_dormancy(limit=limit, scan=scan, tenant_id=tenant_id)
        self.stdout.write(f"proposed {proposed} dormancy change(s)")
