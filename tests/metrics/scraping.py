"""Read a /metrics answer the way Prometheus does, into samples a test can look up."""

from dataclasses import dataclass

from prometheus_client.parser import text_string_to_metric_families

METRICS_TOKEN = "metrics-" + "k" * 40


@dataclass(frozen=True)
class Scrape:
    families: dict[str, str]  # family name -> type
    samples: dict[tuple[str, frozenset[tuple[str, str]]], float]

    def value(self, name: str, **labels: str) -> float:
        """The sample ``name`` with exactly these labels; 0 if absent (a counter not yet counted)."""
        return self.samples.get((name, frozenset(labels.items())), 0.0)

    def matching(self, name: str, **labels: str) -> list[tuple[dict[str, str], float]]:
        """Every sample ``name`` whose labels include these."""
        wanted = set(labels.items())
        return [
            (dict(key), value)
            for (sample, key), value in self.samples.items()
            if sample == name and wanted <= set(key)
        ]

    def label_values(self, prefix: str = "custodian_") -> set[tuple[str, str]]:
        """Every (label, value) pair of the samples named ``prefix…`` (not the process collectors')."""
        return {pair for (name, key) in self.samples if name.startswith(prefix) for pair in key}


def parse(text: str) -> Scrape:
    families: dict[str, str] = {}
    samples: dict[tuple[str, frozenset[tuple[str, str]]], float] = {}
    for family in text_string_to_metric_families(text):
        families[family.name] = family.type
        for sample in family.samples:
            samples[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return Scrape(families, samples)


def bearer(token: str = METRICS_TOKEN) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}
