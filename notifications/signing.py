"""The bytes a delivery posts and the Standard Webhooks headers that sign them."""

import json
from datetime import datetime
from typing import Any

from standardwebhooks import Webhook

from notifications.models import WebhookDelivery, WebhookEndpoint


def body(delivery: WebhookDelivery) -> str:
    """The delivery's body in its endpoint's format (metadata only, either way)."""
    if delivery.endpoint.format == WebhookEndpoint.Format.SLACK:
        return json.dumps({"text": slack_text(delivery.payload)}, sort_keys=True)
    return json.dumps(delivery.payload, sort_keys=True, separators=(",", ":"))


def slack_text(payload: dict[str, Any]) -> str:
    """One line naming the event and its ids, kinds and outcome."""
    data = payload.get("data", {})
    facts = ", ".join(f"{key} {value}" for key, value in sorted(data.items()) if value not in (None, ""))
    return f"Custodian {payload.get('type')}: {facts}"


def headers(delivery: WebhookDelivery, content: str, *, now: datetime) -> dict[str, str]:
    """``webhook-id`` (the delivery id, the same on every attempt), ``-timestamp`` and ``-signature``."""
    webhook_id = str(delivery.id)
    return {
        "content-type": "application/json",
        "user-agent": "Custodian-Webhooks/1",
        "webhook-id": webhook_id,
        "webhook-timestamp": str(int(now.timestamp())),
        "webhook-signature": Webhook(delivery.endpoint.secret).sign(webhook_id, now, content),
    }
