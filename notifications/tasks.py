"""Celery tasks of the notifications queue: thin shells over ``notifications.delivery``."""

from core.tasks import shared_task
from notifications.delivery import deliver
from notifications.email import send
from notifications.services import sweep


@shared_task(name="notifications.deliver", acks_late=True, ignore_result=True)
def deliver_task(delivery_ids: list[str]) -> None:
    """Make one attempt at each delivery named (those delivered or in other hands are skipped)."""
    for delivery_id in delivery_ids:
        deliver(delivery_id)


@shared_task(name="notifications.sweep", ignore_result=True)
def sweep_task() -> int:
    """Publish what is due: retries, lost nudges, deliveries of a worker that died."""
    return sweep()


@shared_task(name="notifications.send_email", acks_late=True, ignore_result=True)
def send_email_task(delivery_ids: list[str]) -> None:
    """Send each reviewer message named (a digest row sends the person's whole due digest)."""
    for delivery_id in delivery_ids:
        send(delivery_id)
