import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.errors import DomainError
from executor.checkpoints import record_checkpoints, sign_checkpoints


class Command(BaseCommand):
    help = (
        "Sign every tenant's receipt-chain head (Ed25519) and append it to a file kept outside the database."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--output", required=True, help="Checkpoint file (JSON Lines, appended)")

    def handle(self, *args: Any, output: Any, **options: Any) -> None:
        try:
            checkpoints = sign_checkpoints()
        except DomainError as exc:
            raise CommandError(exc.detail) from None
        try:
            with open(output, "a", encoding="utf-8") as out:
                for checkpoint in checkpoints:
                    out.write(json.dumps(checkpoint) + "\n")
        except OSError as exc:
            raise CommandError(f"cannot write {output}: {exc.strerror}") from None
        record_checkpoints(checkpoints)
        self.stdout.write(f"Signed {len(checkpoints)} chain head(s) into {output}")
