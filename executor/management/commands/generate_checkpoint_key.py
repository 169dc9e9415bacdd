"""``manage.py generate_checkpoint_key``: a fresh Ed25519 pair for signed checkpoints, each half's place."""

import base64
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = (
        "Generate a checkpoint signing key pair (base64 of 32 raw bytes each) and say where each half goes."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        key = Ed25519PrivateKey.generate()
        private = key.private_bytes(
            serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption()
        )
        public = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        # The two assignments go to standard output (so `>> .env` captures them); guidance to stderr.
        self.stdout.write(f"CUSTODIAN_CHECKPOINT_KEY={base64.b64encode(private).decode()}")
        self.stdout.write(f"CUSTODIAN_CHECKPOINT_PUBLIC_KEY={base64.b64encode(public).decode()}")
        self.stderr.write(
            "CUSTODIAN_CHECKPOINT_KEY is the signing half: set it only where checkpoint_receipts runs "
            "(an operator's machine or a secret store), never in the web or executor environment, "
            "never in the database.\n"
            "CUSTODIAN_CHECKPOINT_PUBLIC_KEY is the checking half: give it to auditors "
            "(verify_export --public-key, verify_receipts --checkpoint) and set it where the admin "
            "exports receipts, so each export names the key that signed it."
        )
