"""Latency samples, percentiles and the median over repeated runs."""

import statistics
from dataclasses import dataclass, field


def percentile(samples: list[float], q: float) -> float:
    """Return the ``q``-th percentile (0-100) by linear interpolation; 0.0 for no samples."""
    if not samples:
        return 0.0
    ordered = sorted(samples)
    rank = (len(ordered) - 1) * q / 100
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


@dataclass
class Run:
    """One timed run: per-operation latencies in seconds and the wall time of the whole run."""

    latencies: list[float] = field(default_factory=list)
    wall_seconds: float = 0.0
    errors: int = 0
    empty: int = 0  # searches that found nothing (a benchmark of empty answers proves little)

    def summary(self) -> dict:
        return {
            "count": len(self.latencies),
            "errors": self.errors,
            "empty": self.empty,
            "p50_ms": round(percentile(self.latencies, 50) * 1000, 2),
            "p95_ms": round(percentile(self.latencies, 95) * 1000, 2),
            "per_second": round(len(self.latencies) / self.wall_seconds, 1) if self.wall_seconds else 0.0,
        }


def over_runs(runs: list[Run]) -> dict:
    """Summarise repeated runs: the median of each run's p50, p95 and rate, plus every run."""
    summaries = [run.summary() for run in runs]
    return {
        "p50_ms": round(statistics.median(s["p50_ms"] for s in summaries), 2),
        "p95_ms": round(statistics.median(s["p95_ms"] for s in summaries), 2),
        "per_second": round(statistics.median(s["per_second"] for s in summaries), 1),
        "errors": sum(s["errors"] for s in summaries),
        "empty": sum(s["empty"] for s in summaries),
        "runs": summaries,
    }
