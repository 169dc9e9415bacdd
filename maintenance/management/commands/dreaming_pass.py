"""Run one Bounded Dreaming pass (the beat task runs it every six hours).

    manage.py dreaming_pass [--tenant NAME] [--limit N] [--scan N]

It only proposes: each run's actions are proposals of the tenant's system
agent, routed by the mode the type's registration fixes (proposal_only unless
an operator published another).
"""

from django.core.management.base import BaseCommand

from maintenance.dreaming.runs import dreaming_pass
from tenancy.services import get_tenant


class Command(BaseCommand):
    help = "Freeze windows of duplicate or colliding memories and propose their consolidation."

    def add_arguments(self, parser):
        parser.add_argument("--tenant", default="", help="only this tenant (by name)")
        parser.add_argument("--limit", type=int, default=50, help="most windows this run")
        parser.add_argument("--scan", type=int, default=20000, help="most active memories read per tenant")

    def handle(self, *args, tenant: str, limit: int, scan: int, **options):
        tenant_id = get_tenant(name=tenant).id if tenant else None
        result = dreaming_pass(tenant_id=tenant_id, limit=limit, scan=scan)
        self.stdout.write(
            f"{result.windows} windows, {result.runs} runs, {result.proposals} proposals"
            f" ({result.stale} stale, {result.refused} refused)"
        )
