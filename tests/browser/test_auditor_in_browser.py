"""An auditor follows one receipt in the admin, in headless Chromium on a 1366 px laptop screen."""

import base64
import re
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat, PublicFormat
from django.contrib.auth.models import Permission, User
from django.core.management import call_command
from guardian.shortcuts import assign_perm
from playwright.sync_api import expect

from executor.models import Receipt
from memory_core.models import Memory
from reviews.selectors import AUDIT
from tests.admin.test_read_policy import _update
from tests.factories import apply_released, approve, create_payload, factor_fact, make_evidence, submit
from tests.workers import celery_worker

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def audited(agent):
    """A decided, applied factor conclusion and an auditor of its tenant."""
    fact = submit(agent.agent, create_payload(factor_fact(), [make_evidence(agent.agent)]))
    pm = User.objects.create_user("pm-alice", password="x")
    assign_perm("tenancy.decide_proposal", pm, agent.tenant)
    approve(pm, fact, reason="IC decay matches the notebook")
    apply_released(fact)
    auditor = User.objects.create_user("auditor-ann", password="auditor-ann-pw", is_staff=True)
    auditor.user_permissions.set(
        Permission.objects.filter(codename__in=["view_receipt", "view_receiptchain"])
    )
    assign_perm(AUDIT, auditor, agent.tenant)
    return Receipt.objects.get(proposal=fact)


def test_auditor_reads_the_receipt_list_and_follows_one_receipt(live_server, browser, audited, artifacts):
    page = browser.new_page(viewport={"width": 1366, "height": 768})
    errors = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.goto(f"{live_server.url}/admin/login/?next=/admin/executor/receipt/")
    page.get_by_label("Username").fill("auditor-ann")
    page.get_by_label("Password").fill("auditor-ann-pw")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_text("momentum_12_1 shows unstable IC")).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= 1366  # no sideways scrolling
    page.screenshot(path=artifacts / "auditor-receipt-list.png", full_page=True)
    page.get_by_role("link", name=audited.created_at.strftime("%Y-%m-%d %H:%M")).click()
    expect(page.get_by_role("heading", name="Policy verdict")).to_be_visible()
    expect(page.get_by_text("IC decay matches the notebook")).to_be_visible()
    page.screenshot(path=artifacts / "auditor-receipt-story.png", full_page=True)
    assert errors == []


@pytest.fixture
def signed_key(settings):
    """A checkpoint signing key (the live server runs in this process, so it sees the setting)."""
    key = Ed25519PrivateKey.generate()
    raw = key.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())
    settings.CUSTODIAN_CHECKPOINT_KEY = base64.b64encode(raw).decode()
    return base64.b64encode(key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)).decode()


def test_auditor_follows_a_receipt_end_to_end_verifies_and_exports(
    live_server, browser, audited, agent, signed_key, tmp_path, artifacts
):
    memory_id = audited.memory_id
    _update(
        agent,
        Memory.objects.get(pk=memory_id),
        {"content": {"statement": "IC decay confirmed out of sample"}},
    )
    second = Receipt.objects.get(memory_id=memory_id, seq=audited.seq + 1)
    call_command("checkpoint_receipts", output=str(tmp_path / "heads.jsonl"))
    page = browser.new_page(viewport={"width": 1366, "height": 768}, accept_downloads=True)
    errors = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.goto(f"{live_server.url}/admin/login/?next=/admin/executor/receipt/")
    page.get_by_label("Username").fill("auditor-ann")
    page.get_by_label("Password").fill("auditor-ann-pw")
    page.get_by_role("button", name="Sign in").click()

    # list → story → timeline → the neighbouring receipt in the memory's life
    page.locator(f'a[href$="/admin/executor/receipt/{audited.pk}/change/"]').first.click()
    expect(page.get_by_role("heading", name=f"Receipt #{audited.seq}")).to_be_visible()
    page.get_by_role("link", name="its timeline").click()
    timeline = page.locator(".timeline-table")
    expect(timeline).to_contain_text("1 → 2 “IC decay confirmed out of sample”")
    expect(timeline).to_contain_text("“IC decay matches the notebook”")
    page.screenshot(path=artifacts / "auditor-memory-timeline.png", full_page=True)
    page.get_by_role("link", name=f"#{second.seq}", exact=True).click()
    expect(page.get_by_role("heading", name=f"Receipt #{second.seq}")).to_be_visible()
    page.get_by_role("link", name=f"← receipt #{audited.seq}").click()
    expect(page.get_by_role("heading", name=f"Receipt #{audited.seq}")).to_be_visible()

    # "verify now" on the chain panel, run by a real worker, watched until it completes
    with celery_worker(tmp_path, concurrency=1):
        page.goto(f"{live_server.url}/admin/executor/receiptchain/")
        page.get_by_role("button", name="Verify now").click()
        cell = page.locator(f"#verification-{agent.tenant.pk}")
        expect(cell).to_contain_text(re.compile("queued since|running"))
        expect(cell).to_contain_text(f"verified ✓ up to #{second.seq}", timeout=90_000)
    page.screenshot(path=artifacts / "auditor-chain-verified.png", full_page=True)

    # export the receipts as JSON Lines and verify the file offline
    page.goto(f"{live_server.url}/admin/executor/receipt/")
    with page.expect_download() as download:
        page.get_by_role("link", name="Export JSON Lines").click()
    path = tmp_path / "receipts.jsonl"
    download.value.save_as(path)
    result = subprocess.run(
        [sys.executable, str(ROOT / "bin" / "verify-export"), str(path), "--public-key", signed_key],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert f"covers #1..#{second.seq}" in result.stdout
    assert errors == []
