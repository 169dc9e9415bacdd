import getpass
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
                total = export_tenant(row, out, progress, exported_by=_operator())
        else:
            total = export_tenant(row, sys.stdout, progress, exported_by=_operator())
        self.stderr.write(f"Exported {total} rows of tenant {tenant}")


def _operator() -> str:
    """Who ran the export, as the operating system names them (recorded with the export)."""
    try:
        return f"export_tenant ({getpass.getuser()})"
    except (KeyError, OSError):
        return "export_tenant"
