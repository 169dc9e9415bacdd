from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.core.serializers.base import DeserializationError
from django.db import DatabaseError

from core.commands import json_lines
from core.errors import DomainError
from executor.transfer import import_tenant


class Command(BaseCommand):
    help = "Import a tenant exported with export_tenant; refuse a broken receipt chain or an existing tenant."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--input", required=True)

    def handle(self, *args: Any, input: Any, **options: Any) -> None:
        def progress(label: str, count: int) -> None:
            self.stderr.write(f"  {label:<40} {count:>9} rows")

        try:
            with open(input, encoding="utf-8") as lines:
                tenant = import_tenant(json_lines(lines), progress)
        except (OSError, ValueError, DomainError) as exc:
            raise CommandError(f"Import refused: {getattr(exc, 'detail', exc)}") from None
        except (
            StopIteration,
            AttributeError,
            KeyError,
            TypeError,
            DeserializationError,
            DatabaseError,
        ) as exc:
            # Strict JSON, but not the shape of an export (or rows the database refuses): nothing was kept.
            raise CommandError(
                f"Import refused: not a Custodian tenant export ({type(exc).__name__}: {exc})"
            ) from None
        self.stdout.write(f"Imported tenant {tenant.name}; receipt chain verified")
