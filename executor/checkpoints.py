"""Signed checkpoints of receipt chains, kept outside the database.

A chain proves its receipts were not altered only against someone without
database access: a DBA could rewrite every hash. A checkpoint is the chain
head (tenant, seq, head hash) signed with an Ed25519 key that the database
never sees; an auditor keeps the file. ``verify_receipts --checkpoint``
then proves the chain still *extends* that head.
"""

import base64
import json
from dataclasses import dataclass

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from django.conf import settings
from django.utils import timezone

from core.canonical import canonical_json
from core.errors import DomainError
from executor.models import Receipt, ReceiptChain


class CheckpointKeyMissing(DomainError):
    code = "checkpoint_key_missing"
    title = "Set CUSTODIAN_CHECKPOINT_KEY (base64 of a 32-byte Ed25519 private key)"


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
    return Ed25519PrivateKey.from_private_bytes(base64.b64decode(raw))


def public_key() -> Ed25519PublicKey:
    raw = settings.CUSTODIAN_CHECKPOINT_PUBLIC_KEY
    if raw:
        return Ed25519PublicKey.from_public_bytes(base64.b64decode(raw))
    return private_key().public_key()


def sign_checkpoints() -> list[dict]:
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


def verify_checkpoint(checkpoint: dict) -> CheckpointProblem | None:
    """Check the signature, then that the chain in the database still extends the signed head."""
    body = {name: checkpoint[name] for name in ("tenant_id", "tenant", "seq", "head_hash", "signed_at")}
    tenant_id = body["tenant_id"]
    try:
        public_key().verify(base64.b64decode(checkpoint["signature"]), canonical_json(body))
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


def read_checkpoints(path) -> list[dict]:
    with open(path, encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]
