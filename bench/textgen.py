"""Deterministic, realistic memory content for benchmarks, with a controllable vocabulary.

Full-text recall is only benchmarked honestly if a query word matches a
small, predictable fraction of rows. ``vocabulary`` is how many distinct
made-up words exist: a quarter name factors, a twentieth users, one in a
hundred universes, the rest (about 70 %) are free words. Each memory draws
three free words, so one word matches about ``3 / len(words)`` of the
memories (0.2 % at the default 2000).
Words are made of plain syllables ending in a, o or u, which PostgreSQL's
English stemmer leaves alone, so a word is its own lexeme.

Pure Python (no Django): the floor benchmark uses it without Django too.
"""

import random
from typing import Any

from memory_core.statements import statement_key

# Kinds a memory can be, in the mix ``memory_fields`` draws from.
FACTOR, PREFERENCE, EPISODIC = "factor", "preference", "episodic"
KINDS = (FACTOR, PREFERENCE, EPISODIC)
_MIX = ((0.5, FACTOR), (0.8, PREFERENCE), (1.0, EPISODIC))

# What a create action's memory defaults to: a copy of ``Memory.optional_field_defaults()``
# (no Django here), which tests/bench/test_textgen.py checks against the real freezing.
MEMORY_DEFAULTS: dict[str, Any] = {
    "sensitivity": "internal",
    "confidence": 1.0,
    "retention_policy": "persistent",
    "ttl_seconds": None,
    "expires_at": None,
    "valid_from": None,
    "valid_to": None,
    "dedupe_key": "",
}

_FACTOR_BASES = (
    "momentum",
    "value",
    "quality",
    "size",
    "low_vol",
    "reversal",
    "carry",
    "liquidity",
    "growth",
    "earnings_yield",
    "accruals",
    "beta",
    "profitability",
    "investment",
    "short_interest",
    "analyst_revision",
)
_WINDOWS = ("12_1", "6_1", "3_1", "1m", "20d", "60d", "120d", "252d", "ttm", "5y")
_UNIVERSES = (
    "CSI300",
    "CSI500",
    "CSI800",
    "CSI1000",
    "SPX",
    "R1000",
    "R2000",
    "STOXX600",
    "TOPIX",
    "MSCI_EM",
)
_HORIZONS = ("1d", "5d", "10d", "20d", "60d", "120d")
_METRICS = (
    ("rank_ic", "rank IC"),
    ("ic_ir", "IC IR"),
    ("sharpe", "long-short Sharpe"),
    ("turnover", "turnover"),
)
_QUALITIES = ("unstable", "stable", "decaying", "robust", "weak", "strong", "noisy", "persistent")
_TREATMENTS = (
    "after industry neutralisation",
    "after size neutralisation",
    "before costs",
    "after costs",
    "in the out-of-sample window",
    "after removing microcaps",
)
_CONCLUSIONS = (
    "unstable after neutralisation",
    "holds out of sample",
    "decays within a quarter",
    "driven by a few sectors",
    "not worth the turnover",
    "robust across regimes",
)
_PREFERENCES = {
    "summary_cadence": ("daily", "weekly", "monthly"),
    "report_format": ("pdf", "slides", "notebook", "email"),
    "alert_channel": ("chat", "email", "pager"),
    "risk_view": ("gross", "net", "beta_adjusted"),
    "chart_style": ("dark", "light", "print"),
}
_EVENTS = ("finished", "failed", "was rerun", "was cancelled", "was reviewed")
_ONSETS = "bdfgklmnprstvz"
_VOWELS = "aeiou"
_ENDINGS = "aou"


class TextGenerator:
    """Generate memory content from ``seed``; the same seed and index always give the same memory.

    ``reserve(count)`` hands out consecutive, never reused indices, so the
    seeding functions of one world never generate the same memory twice
    (which the real policy engine would refuse as a duplicate).
    """

    def __init__(self, seed: int = 0, vocabulary: int = 2000):
        if vocabulary < 50:
            raise ValueError("vocabulary must be at least 50 words")
        self.seed, self.vocabulary = seed, vocabulary
        rng = random.Random(f"custodian-textgen-{seed}-{vocabulary}")
        words = _pseudo_words(rng, vocabulary)
        n_factors = vocabulary // 4
        n_universes = max(len(_UNIVERSES), vocabulary // 100) - len(_UNIVERSES)
        n_users = max(10, vocabulary // 20)
        bases = list(_FACTOR_BASES) + words[:n_factors]
        self.factors = [f"{base}_{_WINDOWS[n % len(_WINDOWS)]}" for n, base in enumerate(bases)]
        taken = n_factors
        self.universes = list(_UNIVERSES) + [
            f"{word.upper()}{n}" for n, word in enumerate(words[taken : taken + n_universes])
        ]
        taken += n_universes
        self.users = [f"pm-{word}" for word in words[taken : taken + n_users]]
        taken += n_users
        self.words = words[taken:]
        self._next = 0

    def reserve(self, count: int) -> range:
        """Return the next ``count`` unused indices."""
        indices = range(self._next, self._next + count)
        self._next += count
        return indices

    def kind(self, i: int) -> str:
        """Return the kind of memory ``i``: half factor conclusions, 30 % preferences, 20 % events."""
        draw = self._rng(i).random()
        return next(kind for limit, kind in _MIX if draw < limit)

    def memory_payload(self, i: int, *, kind: str | None = None) -> dict[str, Any]:
        """Return the ``memory`` object an agent would send in a create proposal."""
        rng = self._rng(i)
        draw = rng.random()
        kind = kind or next(k for limit, k in _MIX if draw < limit)
        if kind == FACTOR:
            return self._factor(rng, i)
        if kind == PREFERENCE:
            return self._preference(rng)
        if kind == EPISODIC:
            return self._episodic(rng, i)
        raise ValueError(f"unknown kind {kind!r}")

    def memory_fields(self, i: int, *, kind: str | None = None) -> dict[str, Any]:
        """Return the ``fields`` a create proposal freezes for memory ``i`` (defaults filled in)."""
        return frozen_fields(self.memory_payload(i, kind=kind))

    def rationale(self, i: int) -> str:
        """Return the agent's rationale for memory ``i`` (no random draws: it is on the hot path)."""
        run = (i * 7919 + self.seed * 104729) % 10**6
        return f"observed in backtest run {run} ({self.words[(i * 31 + self.seed) % len(self.words)]} review)"

    def query_words(self, n: int) -> list[str]:
        """Return ``n`` distinct words that occur in the statements of the first indices.

        Word ``k`` is the first new free word of index ``j >= k`` (``j == k``
        unless an earlier index drew it too, rare while ``n`` is small next to
        the vocabulary), so rows seeded from a fresh generator's first ``2 * n``
        indices contain every returned word; each also occurs in about
        ``3 / len(self.words)`` of all rows.
        """
        found: list[str] = []
        i = 0
        while len(found) < n:
            rng = self._rng(i)
            rng.random()  # the kind
            for word in self._words(rng):
                if word not in found:
                    found.append(word)
                    break
            i += 1
        return found

    # --- one memory of each kind --------------------------------------------

    def _rng(self, i: int) -> random.Random:
        return random.Random(self.seed * 1_000_003 + i)

    def _words(self, rng: random.Random) -> list[str]:
        """Draw a memory's three free words: always the first draws after the kind."""
        return [rng.choice(self.words) for _ in range(3)]

    def _factor(self, rng: random.Random, i: int) -> dict[str, Any]:
        w1, w2, w3 = self._words(rng)
        factor, universe = rng.choice(self.factors), rng.choice(self.universes)
        horizon = rng.choice(_HORIZONS)
        metric, metric_label = rng.choice(_METRICS)
        value = round(rng.uniform(-0.08, 0.08), 4)
        quality, treatment, conclusion = (
            rng.choice(_QUALITIES),
            rng.choice(_TREATMENTS),
            rng.choice(_CONCLUSIONS),
        )
        return {
            "subject": {"kind": "org", "id": "quant-desk"},
            "scope": "org",
            "type": "semantic_fact",
            "content": {
                "statement": (
                    f"{factor} shows {quality} {metric_label} on {universe} at {horizon} "
                    f"{treatment} during the {w1} {w2} regime, per the {w3} review"
                ),
                "factor": factor,
                "universe": universe,
                "horizon": horizon,
                "metric": metric,
                "value": value,
                "conclusion": conclusion,
            },
            "sensitivity": "internal",
            "confidence": round(rng.uniform(0.5, 0.95), 2),
            "dedupe_key": f"factor:{factor}:{universe}:{horizon}:{metric}:{self.seed}-{i}",
        }

    def _preference(self, rng: random.Random) -> dict[str, Any]:
        w1, w2, w3 = self._words(rng)
        user = rng.choice(self.users)
        key = rng.choice(list(_PREFERENCES))
        value = rng.choice(_PREFERENCES[key])
        return {
            "subject": {"kind": "user", "id": user},
            "scope": "user",
            "type": "preference",
            "content": {
                "statement": f"{user} prefers {value} {key.replace('_', ' ')} for the {w1} {w2} {w3} book",
                "preference_key": key,
                "preference_value": value,
            },
            "sensitivity": rng.choice(("internal", "internal", "public")),
        }

    def _episodic(self, rng: random.Random, i: int) -> dict[str, Any]:
        w1, w2, w3 = self._words(rng)
        factor, universe = rng.choice(self.factors), rng.choice(self.universes)
        in_task = rng.random() < 0.7
        subject = (
            {"kind": "task", "id": f"task-{self.seed}-{i // 20}"}
            if in_task
            else {"kind": "user", "id": rng.choice(self.users)}
        )
        memory = {
            "subject": subject,
            "scope": "task" if in_task else "user",
            "type": "episodic_event",
            "content": {
                "statement": (
                    f"backtest of {factor} on {universe} {rng.choice(_EVENTS)} with rank IC "
                    f"{round(rng.uniform(-0.08, 0.08), 4)} ({w1} {w2} {w3} sweep)"
                ),
                "keywords": [factor, universe],
                "run_id": f"run-{self.seed}-{i}",
            },
            "sensitivity": "internal",
            "confidence": 0.9,
        }
        if rng.random() < 0.5:
            memory["ttl_seconds"] = 90 * 24 * 3600
        return memory


def frozen_fields(memory: dict[str, Any]) -> dict[str, Any]:
    """Return the fields a create proposal freezes for ``memory`` (as ``_prepare_create`` does)."""
    fields = {**MEMORY_DEFAULTS, **memory}
    if (memory.get("ttl_seconds") or memory.get("expires_at")) and "retention_policy" not in memory:
        fields["retention_policy"] = "time_bound"
    if not fields.get("dedupe_key"):
        fields["dedupe_key"] = statement_key(fields)
    return fields


def _pseudo_words(rng: random.Random, count: int) -> list[str]:
    """Return ``count`` distinct pronounceable non-words."""
    words: dict[str, None] = {}
    while len(words) < count:
        syllables = rng.choice((2, 3, 3))
        word = "".join(rng.choice(_ONSETS) + rng.choice(_VOWELS) for _ in range(syllables - 1))
        word += rng.choice(_ONSETS) + rng.choice(_ENDINGS)
        words.setdefault(word, None)
    return list(words)
