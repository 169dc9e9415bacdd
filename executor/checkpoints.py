"""Signed checkpoints of receipt chains, kept outside the database.

A chain proves its receipts were not altered only against someone without
database access: a DBA could rewrite every hash. A checkpoint is the chain
head (tenant, seq, head hash) signed with an Ed25519 key that the database
never sees; an auditor keeps the file. ``verify_receipts --checkpoint``
then proves the chain still *extends* that head.
"""

import base64
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from django.conf import settings
from django.utils import timezone

from core import strict_json
from core.canonical import canonical_json
from core.errors import DomainError
from executor.models import Receipt, ReceiptChain

_FIELDS = frozenset({"tenant_id", "tenant", "seq", "head_hash", "signed_at", "signature"})


class CheckpointKeyMissing(DomainError):
    code = "checkpoint_key_missing"
    title = "Set CUSTODIAN_CHECKPOINT_KEY (base64 of a 32-byte Ed25519 private key)"


class CheckpointKeyInvalid(DomainError):
    code = "checkpoint_key_invalid"
    title = "The checkpoint key is not base64 of a 32-byte Ed25519 key"


class CheckpointFileInvalid(DomainError):
    code = "checkpoint_file_invalid"
    title = "Not a checkpoint file written by checkpoint_receipts"


@dataclass(frozen=True)
class CheckpointProblem:
    tenant_id: str
    problem: str

    def __str__(self) -> str:
        return f"tenant {self.tenant_id}: {self.problem}"


def private_key() -> Ed25519PrivateKey:
    raw = settings.CUSTODIAN_CHECKPOINT_KEY
    if not raw:
        raise CheckpointKeyMissing()
    return _load(Ed25519PrivateKey.from_private_bytes, raw, "CUSTODIAN_CHECKPOINT_KEY")


def public_key() -> Ed25519PublicKey:
    raw = settings.CUSTODIAN_CHECKPOINT_PUBLIC_KEY
    if raw:
        return _load(Ed25519PublicKey.from_public_bytes, raw, "CUSTODIAN_CHECKPOINT_PUBLIC_KEY")
    try:
        return private_key().public_key()
    except CheckpointKeyMissing:
        raise CheckpointKeyMissing(
            "Set CUSTODIAN_CHECKPOINT_PUBLIC_KEY (or CUSTODIAN_CHECKPOINT_KEY) to verify checkpoints"
        ) from None


_Key = TypeVar("_Key", Ed25519PrivateKey, Ed25519PublicKey)


def _load(load: Callable[[bytes], _Key], raw: str, setting: str) -> _Key:
    try:
        return load(base64.b64decode(raw, validate=True))
    except ValueError:  # bad base64 (binascii.Error) or a key of the wrong length
        raise CheckpointKeyInvalid(f"{setting} is not base64 of a 32-byte Ed25519 key") from None


def sign_checkpoints() -> list[dict[str, Any]]:
    """Return one signed checkpoint per tenant chain."""
    key = private_key()
    checkpoints = []
    for chain in ReceiptChain.objects.select_related("tenant").order_by("tenant__name"):
        body = {
            "tenant_id": str(chain.tenant_id),
            "tenant": chain.tenant.name,
            "seq": chain.seq,
            "head_hash": chain.head_hash,
            "signed_at": timezone.now().isoformat(),
        }
        signature = key.sign(canonical_json(body))
        checkpoints.append({**body, "signature": base64.b64encode(signature).decode()})
    return checkpoints


def record_checkpoints(checkpoints: list[dict[str, Any]]) -> None:
    """Keep on each chain head the checkpoint last signed, for the chain panel and receipt exports.

    The signed file stays the auditor's proof; the copy here lets an export carry the
    signature (a DBA who alters it only makes the export fail to verify).
    """
    for checkpoint in checkpoints:
        ReceiptChain.objects.filter(tenant_id=checkpoint["tenant_id"]).update(
            checkpoint_seq=checkpoint["seq"],
            checkpoint_signed_at=checkpoint["signed_at"],
            checkpoint=checkpoint,
        )


def public_key_text() -> str | None:
    """Return the checkpoint public key as base64 (for an export to carry), or None if none is set."""
    try:
        key = public_key()
    except (CheckpointKeyMissing, CheckpointKeyInvalid):
        return None
    return base64.b64encode(key.public_bytes(Encoding.Raw, PublicFormat.Raw)).decode()


def verify_checkpoint(
    checkpoint: dict[str, Any], key: Ed25519PublicKey | None = None
) -> CheckpointProblem | None:
    """Check the signature, then that the chain in the database still extends the signed head."""
    body = {name: checkpoint[name] for name in _FIELDS - {"signature"}}
    tenant_id = body["tenant_id"]
    try:
        (key or public_key()).verify(base64.b64decode(checkpoint["signature"]), canonical_json(body))
    except (InvalidSignature, ValueError):
        return CheckpointProblem(tenant_id, "checkpoint signature is invalid (the file was altered)")
    if body["seq"] == 0:
        return None
    receipt = Receipt.objects.filter(tenant_id=tenant_id, seq=body["seq"]).first()
    if receipt is None:
        return CheckpointProblem(tenant_id, f"receipt seq {body['seq']} of the checkpoint is missing")
    if receipt.hash != body["head_hash"]:
        return CheckpointProblem(
            tenant_id, f"receipt seq {body['seq']} no longer has the signed hash (the chain was rewritten)"
        )
    return None


def read_checkpoints(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Return the signed checkpoints in a file; raise :class:`CheckpointFileInvalid` for anything else."""
    try:
        with open(path, encoding="utf-8") as lines:
            checkpoints = [
                strict_json.loads(line, max_depth=strict_json.FILE_MAX_DEPTH)
                for line in lines
                if line.strip()
            ]
    except OSError as exc:
        raise CheckpointFileInvalid(f"Cannot read checkpoint file {path}: {exc.strerror}") from None
    except ValueError:  # not JSON, or not UTF-8
        raise CheckpointFileInvalid(f"{path} is not a checkpoint file (JSON Lines)") from None
    for checkpoint in checkpoints:
        if not isinstance(checkpoint, dict) or not checkpoint.keys() >= _FIELDS:
            raise CheckpointFileInvalid(f"{path} holds a line that is not a signed checkpoint")
    return checkpoints
