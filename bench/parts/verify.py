"""verify_receipts: seconds to recompute a tenant's chain and check its memories, per 100k receipts."""

import io
import time

from django.core.management import call_command

from executor.models import Receipt


def measure(tenant) -> dict:
    receipts = Receipt.objects.filter(tenant=tenant).count()
    started = time.perf_counter()
    call_command("verify_receipts", tenant=tenant.name, stdout=io.StringIO())
    seconds = time.perf_counter() - started
    return {
        "receipts": receipts,
        "seconds": round(seconds, 2),
        "seconds_per_100k": round(seconds / receipts * 100_000, 2) if receipts else 0.0,
    }
