"""Verify a receipt export (JSON Lines) offline: no database, no Django, only the file and a public key.

Plain Python on purpose: ``bin/verify-export`` runs it without Django, and
``manage.py verify_export`` wraps it. It recomputes every receipt's hash from
its body with the canonical JSON the executor used (``core.canonical``),
checks each link (``prev_hash`` is the hash of the line before, seqs have no
gap), and checks the signed checkpoint: its Ed25519 signature and that the
segment holds the signed head. What a pass proves, per tenant: the receipts
from the segment's first seq up to the checkpoint's seq are the ones the
signer's chain held, unchanged; receipts after the checkpoint are linked but
not yet signed. Without a trusted key (``--public-key``) the signature is
checked with the key the file carries, and the report says so.

The format (``custodian.receipt-export/1``), one JSON object per line:
``{"kind": "export", ...}`` first; per tenant ``{"kind": "segment",
"tenant_id", "tenant", "first_seq", "last_seq", "selected", "checkpoint",
"public_key"}`` followed by one ``{"kind": "receipt", "selected", "hash",
"body"}`` per seq from ``first_seq`` to ``last_seq``; last ``{"kind": "end",
"tenants", "receipts"}``. Receipts between the selected ones, and up to the
checkpoint, are included in full (``"selected": false``): a hash alone cannot
be recomputed, so only full bodies chain a selected receipt to the signed head.

A tenant export (``manage.py export_tenant``) carries the same lines, each
wrapped as ``{"model": "custodian.receipt-export", "line": {...}}`` after the
tenant's rows; verifying it also proves that the receipt rows an import would
load are exactly the chain that verified.

Exit status: 0 verified, 1 broken (altered, removed, reordered, forged),
2 unreadable, 3 intact but not fully checkable (a signed checkpoint and no
public key to check it with, or a tenant export too old to carry its chain).
"""

import argparse
import base64
import hashlib
import itertools
import os
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from core import strict_json
from core.canonical import canonical_json, digest

FORMAT = "custodian.receipt-export/1"
TENANT_EXPORT_HEADER = "custodian.usernames"  # the first line of manage.py export_tenant's file
EMBEDDED_LINE = "custodian.receipt-export"  # a receipt export line inside a tenant export
GENESIS_HASH = "0" * 64
SIGNED_FIELDS = ("tenant_id", "tenant", "seq", "head_hash", "signed_at")
# Receipt columns a body leaves out while empty (``executor.models.Receipt.OPTIONAL_COLUMNS``).
OPTIONAL_COLUMNS = ("before_memory_hash", "after_memory_hash", "registration_version")


class ExportBroken(Exception):
    """The export fails verification at ``line`` (1-based; 0 for the file as a whole)."""

    def __init__(self, line: int, problem: str):
        super().__init__(f"line {line}: {problem}")
        self.line, self.problem = line, problem


class ExportUnverifiable(ExportBroken):
    """Nothing found altered, but something could not be checked: missing, not tampering."""


@dataclass
class TenantProof:
    """What verified for one tenant's segment."""

    tenant: str
    tenant_id: str
    first_seq: int
    last_seq: int
    receipts: int = 0
    selected: int = 0
    checkpoint_seq: int | None = None
    checkpoint_signed_at: str = ""
    key_fingerprint: str = ""
    key_from_file: bool = False
    signature_unchecked: bool = False
    notes: list[str] = field(default_factory=list)
    hashes: dict[int, str] = field(default_factory=dict, repr=False)
    bodies: dict[int, dict[str, Any]] = field(default_factory=dict, repr=False)

    def __str__(self) -> str:
        text = (
            f"ok {self.tenant}: receipts #{self.first_seq}..#{self.last_seq} "
            f"({self.receipts} in the segment, "
            f"{self.selected} selected): every hash recomputed from its body, every link checked"
        )
        if self.signature_unchecked:
            text += (
                f"; checkpoint #{self.checkpoint_seq} NOT checked: it is signed, and no public key was "
                "given to check its signature with (--public-key or CUSTODIAN_CHECKPOINT_PUBLIC_KEY)"
            )
        elif self.checkpoint_seq is not None and self.checkpoint_seq >= self.first_seq:
            source = "the key in the file" if self.key_from_file else "the trusted key"
            text += (
                f"; checkpoint #{self.checkpoint_seq} signed {self.checkpoint_signed_at} verified with "
                f"{source} (fingerprint {self.key_fingerprint}): "
                f"it covers #{self.first_seq}..#{self.checkpoint_seq}"
            )
        return "; ".join([text, *self.notes])


@dataclass
class ExportProof:
    tenants: list[TenantProof]

    @property
    def receipts(self) -> int:
        return sum(t.receipts for t in self.tenants)

    @property
    def complete(self) -> bool:
        """Every signature was checked (else the export is intact but only partly proved)."""
        return not any(t.signature_unchecked for t in self.tenants)

    def lines(self) -> list[str]:
        return [str(t) for t in self.tenants]


def key_fingerprint(raw: bytes) -> str:
    """Return the first 16 hex digits of the SHA-256 of a raw public key (for people to compare)."""
    return hashlib.sha256(raw).hexdigest()[:16]


def verify_export(lines: Iterable[str], *, public_key: str | None = None) -> ExportProof:
    """Verify an export's lines; return what was proved or raise :class:`ExportBroken` at the first failure.

    ``public_key`` is the base64 raw Ed25519 key the auditor trusts; without
    it, checkpoint signatures are checked with the key the file carries.
    """
    trusted = _raw_key(public_key, 0, "the trusted public key") if public_key else None
    items = ((number, _parse(text, number)) for number, text in enumerate(lines, start=1) if text.strip())
    first = next(items, None)
    if first is None:
        raise ExportBroken(0, "the file is empty")
    if first[1].get("model") == TENANT_EXPORT_HEADER:
        return _verify_tenant_export(items, trusted)
    return _verify_items(itertools.chain([first], items), trusted)


def _verify_tenant_export(items: Iterator[tuple[int, dict[str, Any]]], trusted: bytes | None) -> ExportProof:
    """Verify the chain a tenant export embeds, then that its receipt rows are that chain."""
    rows: dict[int, tuple[int, dict[str, Any]]] = {}

    def embedded() -> Iterator[tuple[int, dict[str, Any]]]:
        for number, item in items:
            if item.get("model") == "executor.receipt":
                fields = item.get("fields")
                if not isinstance(fields, dict):
                    raise ExportBroken(number, "a receipt row without fields")
                rows[_seq_of(fields.get("seq"), number)] = (number, item)
            elif item.get("model") == EMBEDDED_LINE:
                line = item.get("line")
                if not isinstance(line, dict):
                    raise ExportBroken(number, "an embedded receipt export line that is not an object")
                yield number, line

    try:
        proof = _verify_items(embedded(), trusted, keep_bodies=True)
    except ExportBroken as exc:
        if exc.line == 0:
            raise ExportUnverifiable(
                0,
                "this tenant export carries no receipt chain (written by an older version): export it again",
            ) from None
        raise
    chain = {seq: hash_ for tenant in proof.tenants for seq, hash_ in tenant.hashes.items()}
    bodies = dict(_embedded_bodies(proof))
    for seq, (number, row) in sorted(rows.items()):
        if chain.get(seq) != row["fields"].get("hash") or _row_differs(bodies.get(seq, {}), row):
            raise ExportBroken(number, f"receipt row seq {seq} is not the receipt the chain holds (altered)")
    missing = sorted(chain.keys() - rows.keys())
    if missing:
        raise ExportBroken(0, f"receipt seq {missing[0]} is in the chain but not among the rows (removed)")
    return proof


def _embedded_bodies(proof: ExportProof) -> Iterator[tuple[int, dict[str, Any]]]:
    for tenant in proof.tenants:
        yield from tenant.bodies.items()


def _row_differs(body: dict[str, Any], row: dict[str, Any]) -> bool:
    """Whether a serialized receipt row says anything other than the hashed body it claims to be.

    The row is Django's ``jsonl`` of ``executor.Receipt``: the id as ``pk``, a foreign key
    under its field's name. The tenant is the segment's, already checked line by line.
    """
    if not body:
        return True
    fields = row["fields"]
    values = {"id": row.get("pk"), **{f"{name}_id": value for name, value in fields.items()}, **fields}
    for column in (*body.keys(), *OPTIONAL_COLUMNS):
        if column == "tenant_id":
            continue
        expected, actual = body.get(column), values.get(column)
        if column in OPTIONAL_COLUMNS and column not in body:
            if actual not in (None, "", 0):
                return True
        elif (str(actual).lower() if isinstance(actual, str) else actual) != (
            str(expected).lower() if isinstance(expected, str) else expected
        ):
            return True
    return False


def _seq_of(value: object, number: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise ExportBroken(number, "a receipt row without an integer seq")
    return value


def _verify_items(
    items: Iterable[tuple[int, dict[str, Any]]], trusted: bytes | None, *, keep_bodies: bool = False
) -> ExportProof:
    """Verify receipt export lines, parsed and numbered by their line in the file."""
    proofs: list[TenantProof] = []
    current: _Segment | None = None
    header_seen = end_seen = False
    receipt_lines = 0
    number = 0
    for number, item in items:
        if end_seen:
            raise ExportBroken(number, "a line after the end line")
        kind = item.get("kind")
        if not header_seen:
            if kind != "export" or item.get("format") != FORMAT:
                raise ExportBroken(number, f"not a receipt export (the first line must be a {FORMAT} header)")
            header_seen = True
            continue
        if kind == "segment":
            if current is not None:
                proofs.append(current.finish(number))
            current = _Segment(item, number, trusted, keep_bodies=keep_bodies)
        elif kind == "receipt":
            if current is None:
                raise ExportBroken(number, "a receipt before any segment line")
            current.add(item, number)
            receipt_lines += 1
        elif kind == "end":
            if current is not None:
                proofs.append(current.finish(number))
                current = None
            if item.get("tenants") != len(proofs) or item.get("receipts") != receipt_lines:
                raise ExportBroken(
                    number,
                    f"the end line counts {item.get('tenants')} tenant(s) and "
                    f"{item.get('receipts')} receipt(s); "
                    f"the file holds {len(proofs)} and {receipt_lines}",
                )
            end_seen = True
        else:
            raise ExportBroken(number, f"unknown line kind {kind!r}")
    if not header_seen:
        raise ExportBroken(0, "the file is empty")
    if not end_seen:
        raise ExportBroken(number + 1, "the end line is missing (the file was cut short)")
    return ExportProof(proofs)


class _Segment:
    """One tenant's run of receipts being checked line by line."""

    def __init__(self, item: dict[str, Any], number: int, trusted: bytes | None, *, keep_bodies: bool):
        try:
            self.proof = TenantProof(
                tenant=str(item["tenant"]),
                tenant_id=str(item["tenant_id"]),
                first_seq=int(item["first_seq"]),
                last_seq=int(item["last_seq"]),
            )
            self.declared_selected = int(item["selected"])
        except (KeyError, TypeError, ValueError):
            raise ExportBroken(
                number, "a segment line without tenant, tenant_id, first_seq, last_seq, selected"
            ) from None
        if self.proof.first_seq < 1 or self.proof.last_seq < self.proof.first_seq:
            raise ExportBroken(number, "a segment line with an empty or negative seq range")
        self.number, self.trusted, self.keep_bodies = number, trusted, keep_bodies
        self.checkpoint = item.get("checkpoint")
        self.file_key = item.get("public_key")
        self.expected_seq = self.proof.first_seq
        self.previous_hash: str | None = GENESIS_HASH if self.proof.first_seq == 1 else None
        if self.checkpoint is not None:
            self._check_signature()

    def add(self, item: dict[str, Any], number: int) -> None:
        body, claimed = item.get("body"), item.get("hash")
        where = f"tenant {self.proof.tenant}"
        if not isinstance(body, dict) or not isinstance(claimed, str):
            raise ExportBroken(number, f"{where}: a receipt line without body and hash")
        seq = body.get("seq")
        if body.get("tenant_id") != self.proof.tenant_id:
            raise ExportBroken(number, f"{where}: receipt seq {seq} belongs to another tenant")
        if seq != self.expected_seq:
            raise ExportBroken(
                number,
                f"{where}: expected receipt seq {self.expected_seq}, found seq {seq} "
                "(a receipt was removed, added or moved)",
            )
        if self.expected_seq > self.proof.last_seq:
            raise ExportBroken(number, f"{where}: receipt seq {seq} lies past the segment's last seq")
        if digest(body) != claimed:
            raise ExportBroken(
                number, f"{where}: receipt seq {seq}: its hash does not match its body (altered)"
            )
        if self.previous_hash is not None and body.get("prev_hash") != self.previous_hash:
            raise ExportBroken(
                number, f"{where}: receipt seq {seq}: prev_hash is not the hash of receipt seq {seq - 1}"
            )
        self.previous_hash, self.proof.hashes[seq] = claimed, claimed
        if self.keep_bodies:
            self.proof.bodies[seq] = body
        self.expected_seq += 1
        self.proof.receipts += 1
        self.proof.selected += 1 if item.get("selected") else 0

    def finish(self, number: int) -> TenantProof:
        where = f"tenant {self.proof.tenant}"
        if self.expected_seq <= self.proof.last_seq:
            raise ExportBroken(
                number,
                f"{where}: receipts stop at seq {self.expected_seq - 1}; the segment runs to "
                f"{self.proof.last_seq} (a receipt was removed)",
            )
        if self.proof.selected != self.declared_selected:
            raise ExportBroken(
                number,
                f"{where}: {self.proof.selected} selected receipts; "
                f"the segment line says {self.declared_selected}",
            )
        if self.checkpoint is None:
            self.proof.notes.append(
                "no signed checkpoint: the chain is linked but proved against no signature"
            )
            return self.proof
        seq = self.proof.checkpoint_seq
        assert seq is not None
        if seq < self.proof.first_seq:
            self.proof.notes.append(
                f"the last signed checkpoint (#{seq}) precedes the segment: "
                "nothing here is covered by a signature"
            )
        elif seq > self.proof.last_seq:
            raise ExportBroken(self.number, f"{where}: the checkpoint's seq {seq} lies past the segment")
        elif self.proof.hashes.get(seq) != self.checkpoint["head_hash"]:
            raise ExportBroken(
                self.number, f"{where}: receipt seq {seq} does not have the hash the checkpoint signed"
            )
        if seq < self.proof.last_seq:
            self.proof.notes.append(
                f"receipts #{max(seq + 1, self.proof.first_seq)}..#{self.proof.last_seq} came after the "
                "checkpoint: linked, not yet signed"
            )
        return self.proof

    def _check_signature(self) -> None:
        from cryptography.exceptions import InvalidSignature
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

        where = f"tenant {self.proof.tenant}"
        checkpoint = self.checkpoint
        if not isinstance(checkpoint, dict) or not all(
            name in checkpoint for name in (*SIGNED_FIELDS, "signature")
        ):
            raise ExportBroken(self.number, f"{where}: the checkpoint lacks a signed field or its signature")
        if checkpoint["tenant_id"] != self.proof.tenant_id:
            raise ExportBroken(self.number, f"{where}: the checkpoint was signed for another tenant")
        raw = self.trusted
        if raw is None and not self.file_key:
            # Missing, not tampering: the links are still checked, the head compared unsigned.
            self.proof.checkpoint_seq = _seq_of(checkpoint["seq"], self.number)
            self.proof.signature_unchecked = True
            return
        if raw is None:
            raw = _raw_key(str(self.file_key), self.number, "the file's public key")
            self.proof.key_from_file = True
        body = {name: checkpoint[name] for name in SIGNED_FIELDS}
        try:
            Ed25519PublicKey.from_public_bytes(raw).verify(
                base64.b64decode(checkpoint["signature"], validate=True), canonical_json(body)
            )
        except (InvalidSignature, ValueError, TypeError):
            raise ExportBroken(
                self.number, f"{where}: the checkpoint's signature is invalid (forged or altered)"
            ) from None
        self.proof.checkpoint_seq = int(checkpoint["seq"])
        self.proof.checkpoint_signed_at = str(checkpoint["signed_at"])
        self.proof.key_fingerprint = key_fingerprint(raw)


def _parse(text: str, number: int) -> dict[str, Any]:
    try:
        item = strict_json.loads(text, max_depth=strict_json.FILE_MAX_DEPTH)
    except strict_json.JSONRefused as exc:
        raise ExportBroken(number, f"not strict JSON: {exc}") from None
    if not isinstance(item, dict):
        raise ExportBroken(number, "not a JSON object")
    return item


def _raw_key(value: str, number: int, name: str) -> bytes:
    try:
        raw = base64.b64decode(value, validate=True)
    except (ValueError, TypeError):
        raw = b""
    if len(raw) != 32:
        raise ExportBroken(number, f"{name} is not base64 of a 32-byte Ed25519 key")
    return raw


def main(argv: list[str] | None = None) -> int:
    """Verify an export file from the command line; exit 0 if it verifies, 1 if broken, 2 if unreadable."""
    parser = argparse.ArgumentParser(prog="verify-export", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "file",
        help="A receipt export (.jsonl) from the admin's receipt list, or a manage.py export_tenant file",
    )
    parser.add_argument(
        "--public-key",
        default=os.environ.get("CUSTODIAN_CHECKPOINT_PUBLIC_KEY") or None,
        help="The checkpoint public key you trust (base64 of 32 raw bytes); "
        "default $CUSTODIAN_CHECKPOINT_PUBLIC_KEY, else the key in the file",
    )
    args = parser.parse_args(argv)
    try:
        with open(args.file, encoding="utf-8") as lines:
            proof = verify_export(lines, public_key=args.public_key)
    except OSError as exc:
        print(f"cannot read {args.file}: {exc.strerror}", file=sys.stderr)
        return 2
    except UnicodeDecodeError:
        print(f"{args.file} is not UTF-8 text", file=sys.stderr)
        return 2
    except ExportUnverifiable as exc:
        print(f"UNVERIFIED {exc}", file=sys.stderr)
        return 3
    except ExportBroken as exc:
        print(f"BROKEN {exc}", file=sys.stderr)
        return 1
    for line in proof.lines():
        print(line)
    if not proof.complete:
        print(f"intact but NOT fully verified: {proof.receipts} receipts linked; a signature was not checked")
        return 3
    print(f"verified {proof.receipts} receipts in {len(proof.tenants)} tenant(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
