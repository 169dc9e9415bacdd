"""ACT-R base-level activation of a memory from its use history, computed when it is asked for.

``B = ln(Σ t_j^-d)`` over the memory's uses ``j`` (explicit reads), ``t_j`` the
time since use ``j`` in days and ``d`` the decay. Uses are kept as daily
counts (``MemoryReads``), so a day's ``n`` uses count as ``n`` uses at that
day's midpoint; ages are floored at one hour, so a use this minute is strong
but finite. Nothing is stored: a score computed yesterday would be stale today.

Ranking needs a bounded signal, so ``signal`` maps the strength ``e^B`` onto
0..1 by saturation: half of it at ``HALF_STRENGTH`` (five reads a day old).
"""

import math
from collections.abc import Iterable
from datetime import UTC, date, datetime, time, timedelta

from django.utils import timezone

DEFAULT_DECAY = 0.5
HALF_STRENGTH = 5.0
MIN_AGE_DAYS = 1 / 24


def base_level(
    uses: Iterable[tuple[date, int]], *, at: datetime | None = None, decay: float = DEFAULT_DECAY
) -> float:
    """``ln(Σ n · t^-d)`` over ``(day, n)`` daily use counts; ``-inf`` when there are none."""
    at = at or timezone.now()
    strength = sum(count * _age_days(day, at) ** -decay for day, count in uses if count > 0)
    return math.log(strength) if strength > 0 else -math.inf


def signal(level: float) -> float:
    """0..1, rising with the strength ``e^B`` and half at ``HALF_STRENGTH``; 0 for a memory never used."""
    if level == -math.inf:
        return 0.0
    strength = math.exp(level)
    return strength / (strength + HALF_STRENGTH)


def _age_days(day: date, at: datetime) -> float:
    """Days from the middle of ``day`` (UTC, as ``MemoryReads`` counts days) to ``at``."""
    return max((at - datetime.combine(day, time(12), tzinfo=UTC)) / timedelta(days=1), MIN_AGE_DAYS)
