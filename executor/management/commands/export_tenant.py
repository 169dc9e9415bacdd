import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.commands import check_text_options
from executor.transfer import export_tenant
from tenancy.models import Tenant


class Command(BaseCommand):
    help = (
        "Export one tenant (memories with revisions, evidence, proposals, decisions, receipts) as JSON Lines."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--tenant", required=True)
        parser.add_argument("--output", help="File to write (default: standard output)")

    def handle(self, *args: Any, tenant: Any, output: Any = None, **options: Any) -> None:
        check_text_options(tenant=tenant)
        row = Tenant.objects.filter(name=tenant).first()
        if row is None:
            raise CommandError(f"No tenant named {tenant!r}")

        def progress(label: str, count: int) -> None:
            self.stderr.write(f"  {label:<40} {count:>9} rows")

        if output:
            with open(output, "w", encoding="utf-8") as out:
                total = export_tenant(row, out, progress)
        else:
            total = export_tenant(row, sys.stdout, progress)
        self.stderr.write(f"Exported {total} rows of tenant {tenant}")
