"""A tenant export is verified offline like the admin's receipt export, and proves its rows are the chain.

The command an auditor runs (``bin/verify-export``, no Django) on the file ``export_tenant``
wrote; a missing key reads as missing, never as tampering; the key pair comes from manage.py.
"""

import base64
import json
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat, PublicFormat
from django.core.management import call_command

from executor import offline
from executor.models import Receipt

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.django_db


@pytest.fixture
def signing_key(settings):
    key = Ed25519PrivateKey.generate()
    settings.CUSTODIAN_CHECKPOINT_KEY = base64.b64encode(
        key.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())
    ).decode()
    return key


def public_text(key: Ed25519PrivateKey) -> str:
    return base64.b64encode(key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)).decode()


@pytest.fixture
def exported(agent, applied_memory_factory, signing_key, tmp_path) -> Path:
    """Three receipts signed by a checkpoint and one after it, exported as a whole tenant."""
    for _ in range(3):
        applied_memory_factory(agent)
    call_command("checkpoint_receipts", output=str(tmp_path / "heads.jsonl"))
    applied_memory_factory(agent)
    path = tmp_path / "tenant.jsonl"
    call_command("export_tenant", tenant=agent.tenant.name, output=str(path))
    return path


def verify(path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ROOT / "bin" / "verify-export"), str(path), *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={"PATH": "/usr/bin:/bin"},  # no CUSTODIAN_CHECKPOINT_PUBLIC_KEY from the test's environment
    )


def rewrite(path: Path, change) -> None:
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    path.write_text("".join(json.dumps(item) + "\n" for item in change(lines)))


def test_the_tenant_export_verifies_offline_with_the_trusted_key(exported, agent, signing_key):
    done = verify(exported, "--public-key", public_text(signing_key))
    assert done.returncode == 0, done.stderr
    assert f"ok {agent.tenant.name}: receipts #1..#4" in done.stdout
    assert "checkpoint #3" in done.stdout and "verified with the trusted key" in done.stdout
    assert done.stdout.strip().endswith("verified 4 receipts in 1 tenant(s)")
    assert Receipt.objects.filter(tenant=agent.tenant).count() == 4


def test_a_receipt_row_altered_beside_its_untouched_hash_is_broken(exported, signing_key):
    def alter(lines):
        for item in lines:
            if item.get("model") == "executor.receipt" and item["fields"]["seq"] == 2:
                item["fields"]["reason"] = "nothing to see"
        return lines

    rewrite(exported, alter)
    done = verify(exported, "--public-key", public_text(signing_key))
    assert done.returncode == 1
    assert done.stderr.startswith("BROKEN line")
    assert "receipt row seq 2 is not the receipt the chain holds" in done.stderr


def test_a_receipt_row_removed_is_broken(exported, signing_key):
    def remove(lines):
        return [i for i in lines if not (i.get("model") == "executor.receipt" and i["fields"]["seq"] == 4)]

    rewrite(exported, remove)
    done = verify(exported, "--public-key", public_text(signing_key))
    assert done.returncode == 1 and "receipt seq 4 is in the chain but not among the rows" in done.stderr


def test_an_embedded_receipt_altered_is_broken(exported, signing_key):
    def alter(lines):
        for item in lines:
            line = item.get("line", {})
            if item.get("model") == offline.EMBEDDED_LINE and line.get("kind") == "receipt":
                line["body"]["outcome"] = "stale"
                break
        return lines

    rewrite(exported, alter)
    done = verify(exported, "--public-key", public_text(signing_key))
    assert done.returncode == 1 and "its hash does not match its body (altered)" in done.stderr


def test_without_any_public_key_the_export_is_intact_but_not_fully_verified(
    agent, applied_memory_factory, signing_key, settings, tmp_path
):
    applied_memory_factory(agent)
    call_command("checkpoint_receipts", output=str(tmp_path / "heads.jsonl"))
    settings.CUSTODIAN_CHECKPOINT_KEY = ""  # the exporting side holds no key: the file carries none
    path = tmp_path / "tenant.jsonl"
    call_command("export_tenant", tenant=agent.tenant.name, output=str(path))
    done = verify(path)
    assert done.returncode == 3, done.stderr
    assert "BROKEN" not in done.stdout + done.stderr
    assert "checkpoint #1 NOT checked: it is signed, and no public key was given" in done.stdout
    assert "intact but NOT fully verified" in done.stdout
    assert verify(path, "--public-key", public_text(signing_key)).returncode == 0


def test_a_tenant_export_without_its_chain_is_unverifiable_not_broken(exported, signing_key):
    rewrite(exported, lambda lines: [i for i in lines if i.get("model") != offline.EMBEDDED_LINE])
    done = verify(exported, "--public-key", public_text(signing_key))
    assert done.returncode == 3
    assert done.stderr.startswith("UNVERIFIED") and "export it again" in done.stderr


@pytest.mark.django_db(transaction=True)  # flush, as a fresh database before an import
def test_the_embedded_chain_does_not_get_in_the_way_of_an_import(exported, agent):
    call_command("flush", interactive=False, verbosity=0)
    call_command("import_tenant", input=str(exported))
    assert Receipt.objects.filter(tenant__name=agent.tenant.name).count() == 4


def test_generate_checkpoint_key_prints_a_working_pair_and_where_each_half_goes(capsys):
    call_command("generate_checkpoint_key")
    printed = capsys.readouterr()
    pairs = dict(line.split("=", 1) for line in printed.out.splitlines())
    assert list(pairs) == ["CUSTODIAN_CHECKPOINT_KEY", "CUSTODIAN_CHECKPOINT_PUBLIC_KEY"]
    private = Ed25519PrivateKey.from_private_bytes(base64.b64decode(pairs["CUSTODIAN_CHECKPOINT_KEY"]))
    public = Ed25519PublicKey.from_public_bytes(base64.b64decode(pairs["CUSTODIAN_CHECKPOINT_PUBLIC_KEY"]))
    public.verify(private.sign(b"head"), b"head")  # raises if the halves do not belong together
    assert "checkpoint_receipts" in printed.err and "auditors" in printed.err


def test_the_offline_verifier_knows_the_optional_receipt_columns():
    assert offline.OPTIONAL_COLUMNS == Receipt.OPTIONAL_COLUMNS
