"""Run the compaction sweep once (the beat task runs it hourly).

    manage.py compaction_sweep [--limit N] [--scan N] [--tenant NAME]

It only proposes: each ``compact`` proposal is auto-applied by the executor
under ``auto-system-compaction`` and leaves one receipt listing every member.
"""

from django.core.management.base import BaseCommand

from maintenance.compaction import propose_compactions
from tenancy.services import get_tenant


class Command(BaseCommand):
    help = "Propose compactions for subject+scope+type groups over their registered capacity."

    def add_arguments(self, parser):
        parser.add_argument("--limit", type=int, default=100, help="most proposals this run")
        parser.add_argument("--scan", type=int, default=2000, help="most members read per group")
        parser.add_argument("--tenant", default="", help="only this tenant (by name)")

    def handle(self, *args, limit: int, scan: int, tenant: str, **options):
        tenant_id = get_tenant(name=tenant).id if tenant else None
        proposed = propose_compactions(limit=limit, scan=scan, tenant_id=tenant_id)
        self.stdout.write(f"proposed {proposed} compaction(s)")
