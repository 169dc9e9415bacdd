from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from executor.offline import main


class Command(BaseCommand):
    help = (
        "Verify a receipt export (JSON Lines from the admin) offline: recompute every hash, check every "
        "link and the signed checkpoint; touches no database (same as bin/verify-export)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file")
        parser.add_argument("--public-key", help="The checkpoint public key you trust (base64)")

    def handle(self, *args: Any, file: Any, public_key: Any = None, **options: Any) -> None:
        argv = [file, *(["--public-key", public_key] if public_key else [])]
        code = main(argv)
        if code:
            raise CommandError(f"{file} did not verify (exit {code}); see the line above", returncode=code)
