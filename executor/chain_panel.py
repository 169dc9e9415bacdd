"""The chain panel's "last verification" cell: the result, or live progress that htmx polls for."""

from typing import Any

from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString

from executor.models import ChainVerification

POLL_SECONDS = 1


def verification_cell(tenant_id: Any, verification: ChainVerification | None) -> SafeString:
    """Render the latest verification of a chain with a "verify now" button.

    While it is queued or running the cell asks for itself again every
    ``POLL_SECONDS`` (htmx) and stops once the task has recorded a result.
    """
    status = verification.status if verification is not None else None
    cell_id = f"verification-{tenant_id}"
    if verification is not None and not verification.finished:
        if status == ChainVerification.Status.QUEUED:
            text = format_html("queued since {} UTC", f"{verification.requested_at:%Y-%m-%d %H:%M:%S}")
        else:
            text = format_html(
                '<progress max="{}" value="{}"></progress> running: {} of {} receipts checked ({}%)',
                max(verification.total, 1),
                verification.receipts,
                verification.receipts,
                verification.total,
                verification.percent,
            )
        poll = reverse("admin:executor_receiptchain_verification", args=[tenant_id])
        return format_html(
            '<div id="{}" class="verification running" hx-get="{}" hx-trigger="every {}s" '
            'hx-swap="outerHTML" aria-live="polite">{}</div>',
            cell_id,
            poll,
            POLL_SECONDS,
            text,
        )
    if verification is None:
        text = format_html("{}", "never verified here")
    else:
        when = f"{verification.finished_at:%Y-%m-%d %H:%M:%S} UTC"
        if verification.ok:
            text = format_html(
                "verified ✓ up to #{} at {} ({} receipts)", verification.head_seq, when, verification.receipts
            )
        else:
            problems = verification.problems or []
            text = format_html("<strong>BROKEN ✗</strong> at {}: {}", when, problems[0] if problems else "")
    verify = reverse("admin:executor_receiptchain_verify", args=[tenant_id])
    return format_html(
        '<div id="{}" class="verification" aria-live="polite">{} '
        '<button type="button" class="button verify-now" hx-post="{}" hx-target="#{}" hx-swap="outerHTML">'
        "Verify now</button></div>",
        cell_id,
        text,
        verify,
        cell_id,
    )
