"""Receipt exports: CSV and JSON Lines from the receipt list, and the offline verifier that checks them."""

import base64
import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat, PublicFormat
from django.contrib.auth.models import Group
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from executor.models import Receipt
from executor.offline import ExportBroken, verify_export
from tests.factories import make_person

ROOT = Path(__file__).resolve().parents[2]
JSONL = "admin:executor_receipt_export_jsonl"
CSV = "admin:executor_receipt_export_csv"


def _key_text(key) -> str:
    return base64.b64encode(key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)).decode()


@pytest.fixture
def signing_key(settings):
    key = Ed25519PrivateKey.generate()
    raw = key.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())
    settings.CUSTODIAN_CHECKPOINT_KEY = base64.b64encode(raw).decode()
    return key


@pytest.fixture
def chain(agent, applied_memory_factory, signing_key, tmp_path):
    """Five receipts, the first four signed by a checkpoint, the fifth after it."""
    memories = [applied_memory_factory(agent) for _ in range(4)]
    call_command("checkpoint_receipts", output=str(tmp_path / "heads.jsonl"))
    memories.append(applied_memory_factory(agent))
    return memories


def _download(client, name=JSONL, query="") -> str:
    response = client.get(reverse(name) + query)
    assert response.status_code == 200, response.content
    assert response.streaming
    return b"".join(response.streaming_content).decode()


def _lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines()]


def _text(items: list[dict]) -> list[str]:
    return [json.dumps(item) for item in items]


def test_an_auditor_of_another_tenant_exports_nothing_of_this_one(client, chain, other_agent, agent):
    person = make_person("b-auditor", other_agent.tenant, "tenancy.audit_tenant")
    person.is_staff = True
    person.save(update_fields=["is_staff"])
    person.groups.add(Group.objects.get(name="auditors"))
    client.force_login(person)
    for query in ("", f"?tenant__id__exact={agent.tenant.pk}", f"?q={chain[0].pk}"):
        for name in (JSONL, CSV):
            text = _download(client, name, query).replace(query[1:], "")  # the header echoes the query
            assert agent.tenant.name not in text and str(agent.tenant.pk) not in text
            assert str(chain[0].pk) not in text


def test_the_export_holds_only_the_viewers_tenants(
    auditor_client, chain, other_agent, applied_memory_factory
):
    foreign = applied_memory_factory(other_agent)
    text = _download(auditor_client)
    assert str(other_agent.tenant.pk) not in text and str(foreign.pk) not in text
    assert other_agent.tenant.name not in _download(auditor_client, CSV)


def test_staff_without_view_permission_get_no_export(client, agent, chain):
    person = make_person("no-perm", agent.tenant, "tenancy.audit_tenant")
    person.is_staff = True
    person.save(update_fields=["is_staff"])
    client.force_login(person)
    assert client.get(reverse(JSONL)).status_code == 403
    assert client.get(reverse(CSV)).status_code == 403


def test_a_person_who_is_not_staff_is_sent_to_log_in(client, agent, chain):
    client.force_login(make_person("outsider", agent.tenant, "tenancy.audit_tenant"))
    response = client.get(reverse(JSONL))
    assert response.status_code == 302 and "/login/" in response["Location"]


def test_a_bad_filter_is_a_problem_not_a_crash(auditor_client, chain):
    response = auditor_client.get(reverse(JSONL) + "?created_at__gte=not-a-date")
    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == "bad_filter"


def test_round_trip_on_a_real_chain(auditor_client, chain, signing_key):
    proof = verify_export(_download(auditor_client).splitlines(), public_key=_key_text(signing_key))
    [tenant] = proof.tenants
    assert (tenant.first_seq, tenant.last_seq, tenant.receipts, tenant.selected) == (1, 5, 5, 5)
    assert tenant.checkpoint_seq == 4 and not tenant.key_from_file
    assert "covers #1..#4" in str(tenant) and "#5..#5 came after the checkpoint" in str(tenant)


def test_a_filtered_set_carries_the_full_segment_up_to_the_checkpoint(auditor_client, chain, signing_key):
    second = Receipt.objects.get(memory_id=chain[1].pk)
    items = _lines(_download(auditor_client, query=f"?q={chain[1].pk}"))
    receipts = [item for item in items if item["kind"] == "receipt"]
    assert [(r["body"]["seq"], r["selected"]) for r in receipts] == [(2, True), (3, False), (4, False)]
    assert receipts[0]["hash"] == second.hash and receipts[0]["body"]["prev_hash"] == second.prev_hash
    proof = verify_export(_text(items), public_key=_key_text(signing_key))
    assert "covers #2..#4" in proof.lines()[0]


def test_without_a_trusted_key_the_report_says_the_files_key_was_used(auditor_client, chain):
    proof = verify_export(_download(auditor_client).splitlines())
    assert "verified with the key in the file" in proof.lines()[0]


def _broken(items: list[dict], key) -> ExportBroken:
    with pytest.raises(ExportBroken) as caught:
        verify_export(_text(items), public_key=_key_text(key))
    return caught.value


def test_a_tampered_body_is_detected(auditor_client, chain, signing_key):
    items = _lines(_download(auditor_client))
    items[3]["body"]["reason"] = "nothing to see"
    broken = _broken(items, signing_key)
    assert broken.line == 4 and "hash does not match its body" in broken.problem


def test_a_tampered_body_with_its_hash_recomputed_breaks_the_next_link(auditor_client, chain, signing_key):
    from core.canonical import digest

    items = _lines(_download(auditor_client))
    items[3]["body"]["reason"] = "nothing to see"
    items[3]["hash"] = digest(items[3]["body"])
    broken = _broken(items, signing_key)
    assert broken.line == 5 and "prev_hash is not the hash of receipt seq 2" in broken.problem


def test_a_removed_line_is_detected(auditor_client, chain, signing_key):
    items = _lines(_download(auditor_client))
    del items[4]
    broken = _broken(items, signing_key)
    assert "expected receipt seq 3, found seq 4" in broken.problem


def test_a_removed_last_line_is_detected(auditor_client, chain, signing_key):
    items = _lines(_download(auditor_client))
    del items[-2]
    assert "receipts stop at seq 4" in _broken(items, signing_key).problem


def test_a_reordered_line_is_detected(auditor_client, chain, signing_key):
    items = _lines(_download(auditor_client))
    items[3], items[4] = items[4], items[3]
    assert "expected receipt seq 2, found seq 3" in _broken(items, signing_key).problem


def test_a_forged_checkpoint_is_detected(auditor_client, chain, signing_key):
    items = _lines(_download(auditor_client))
    items[1]["checkpoint"]["seq"] = 5
    items[1]["checkpoint"]["head_hash"] = items[-2]["hash"]
    assert "checkpoint's signature is invalid" in _broken(items, signing_key).problem


def test_a_checkpoint_signed_with_another_key_is_detected(auditor_client, chain, signing_key, settings):
    forger = Ed25519PrivateKey.generate()
    items = _lines(_download(auditor_client))
    from core.canonical import canonical_json

    body = {k: items[1]["checkpoint"][k] for k in ("tenant_id", "tenant", "seq", "head_hash", "signed_at")}
    items[1]["checkpoint"]["signature"] = base64.b64encode(forger.sign(canonical_json(body))).decode()
    items[1]["public_key"] = _key_text(forger)  # a forger ships their own key too
    assert "checkpoint's signature is invalid" in _broken(items, signing_key).problem


def test_the_csv_reads_as_sentences_and_escapes_formulas(auditor_client, remember, marker):
    remember(f"=HYPERLINK({marker})")
    remember(f"{marker} secret", sensitivity="restricted", dedupe_key="r")
    rows = list(csv.DictReader(io.StringIO(_download(auditor_client, CSV))))
    assert [row["seq"] for row in rows] == ["1", "2"]
    assert rows[0]["summary"] == f"'=HYPERLINK({marker})"
    assert rows[1]["summary"] == "(content withheld: metadata_only)"
    assert rows[0]["proposed_by"] == "research-agent" and rows[0]["outcome"] == "applied"
    assert rows[0]["hash"] == Receipt.objects.get(seq=1).hash


@pytest.mark.parametrize("receipts", [2, 7])
def test_an_export_costs_the_same_queries_for_any_small_set(
    auditor_client, agent, applied_memory_factory, receipts, django_assert_max_num_queries
):
    for _ in range(receipts):
        applied_memory_factory(agent)
    for name in (JSONL, CSV):
        with django_assert_max_num_queries(14):
            _download(auditor_client, name)


def test_the_command_and_the_script_verify_a_downloaded_file(
    auditor_client, chain, signing_key, tmp_path, capsys
):
    path = tmp_path / "receipts.jsonl"
    path.write_text(_download(auditor_client))
    call_command("verify_export", str(path), public_key=_key_text(signing_key))
    assert "verified 5 receipts in 1 tenant(s)" in capsys.readouterr().out
    script = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bin" / "verify-export"),
            str(path),
            "--public-key",
            _key_text(signing_key),
        ],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin"},
        check=False,
    )
    assert script.returncode == 0, script.stderr
    assert "covers #1..#4" in script.stdout
    path.write_text(path.read_text().replace('"outcome":"applied"', '"outcome":"stale"', 1))
    with pytest.raises(CommandError):
        call_command("verify_export", str(path), public_key=_key_text(signing_key))
    assert "BROKEN line 3" in capsys.readouterr().err


def test_the_verifier_imports_nothing_of_django():
    probe = (
        "import sys, executor.offline; print(sorted(m for m in sys.modules if m.split('.')[0] == 'django'))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, env={}, check=True
    )
    assert result.stdout.strip() == "[]"


def test_exports_read_in_batches_keep_every_receipt_of_every_tenant(
    admin_client, agent, other_agent, applied_memory_factory, signing_key, monkeypatch
):
    for handle in (agent, other_agent, agent, other_agent, agent):
        applied_memory_factory(handle)
    monkeypatch.setattr("executor.export.BATCH", 2)  # several keyset batches per tenant
    proof = verify_export(_download(admin_client).splitlines(), public_key=_key_text(signing_key))
    assert sorted((t.tenant, t.receipts) for t in proof.tenants) == [("other-desk", 2), ("quant-desk", 3)]
    rows = list(csv.DictReader(io.StringIO(_download(admin_client, CSV))))
    assert sorted((row["tenant"], row["seq"]) for row in rows) == [
        ("other-desk", "1"),
        ("other-desk", "2"),
        ("quant-desk", "1"),
        ("quant-desk", "2"),
        ("quant-desk", "3"),
    ]


def test_a_selection_after_the_last_checkpoint_says_it_is_not_signed(
    auditor_client, chain, applied_memory_factory, agent, signing_key
):
    later = applied_memory_factory(agent)  # seq 6, after the checkpoint at 4
    proof = verify_export(
        _download(auditor_client, query=f"?q={later.pk}").splitlines(), public_key=_key_text(signing_key)
    )
    [tenant] = proof.tenants
    assert (tenant.first_seq, tenant.last_seq, tenant.selected) == (6, 6, 1)
    assert "precedes the segment: nothing here is covered by a signature" in str(tenant)
