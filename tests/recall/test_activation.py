"""ACT-R base-level activation against values computed by hand."""

import math
from datetime import UTC, date, datetime

from memory_core.activation import HALF_STRENGTH, base_level, signal

NOON = datetime(2026, 12, 10, 12, tzinfo=UTC)


def test_one_use_a_day_ago_with_the_default_decay_is_ln_1():
    assert base_level([(date(2026, 12, 9), 1)], at=NOON) == 0.0  # ln(1 · 1^-0.5)


def test_uses_add_their_decayed_strengths():
    # 2 uses 1 day ago and 1 use 4 days ago: ln(2 · 1^-0.5 + 1 · 4^-0.5) = ln(2.5)
    uses = [(date(2026, 12, 9), 2), (date(2026, 12, 6), 1)]
    assert math.isclose(base_level(uses, at=NOON), math.log(2.5))


def test_the_decay_comes_from_the_caller():
    # d = 1: ln(1/4) for one use 4 days ago
    assert math.isclose(base_level([(date(2026, 12, 6), 1)], at=NOON, decay=1.0), math.log(0.25))


def test_a_use_today_counts_from_at_least_an_hour_ago():
    at = datetime(2026, 12, 10, 12, 5, tzinfo=UTC)  # five minutes after today's midpoint
    assert math.isclose(base_level([(date(2026, 12, 10), 1)], at=at), math.log((1 / 24) ** -0.5))


def test_never_used_is_minus_infinity_and_signals_nothing():
    assert base_level([], at=NOON) == -math.inf
    assert signal(-math.inf) == 0.0


def test_the_signal_is_bounded_and_half_at_the_half_strength():
    assert math.isclose(signal(math.log(HALF_STRENGTH)), 0.5)
    assert 0 < signal(base_level([(date(2026, 12, 9), 10_000)], at=NOON)) < 1
