"""Run the dormancy sweep once (the beat task runs it hourly).

    manage.py dormancy_sweep [--limit N] [--scan N]

It only proposes: each ``dormant`` proposal is auto-applied by the executor
under ``auto-system-dormancy`` and leaves a receipt.
"""

from django.core.management.base import BaseCommand

from proposals.services import propose_dormancy


class Command(BaseCommand):
    help = "Propose dormancy for memories whose activation stayed below their type's threshold."

    def add_arguments(self, parser):
        parser.add_argument("--limit", type=int, default=500, help="most proposals this run")
        parser.add_argument("--scan", type=int, default=2000, help="most candidates read per tenant and type")

    def handle(self, *args, limit: int, scan: int, **options):
        proposed = propose_dormancy(limit=limit, scan=scan)
        self.stdout.write(f"proposed {proposed} dormancy change(s)")
