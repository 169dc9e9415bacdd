"""The detector table (kind -> handler, each with a name and a version) and the scan over it.

Findings carry the detector, its version, the field path, the kind and the character
span, never the matched text, so a finding can be stored, logged and shown where the
text it points at must not be. Each detector runs once over the string values joined
in document order (credentials with nothing between them, so a key split across two
fields is whole again; the others a line apart), once over the keys, and the
credential detector also over what each value's base64 or hex runs decode to.
"""

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from importlib.metadata import version
from typing import Any

from admission.credentials import credential_spans, encoded_credential_spans
from admission.injection import injection_spans
from admission.leaves import iter_bounds, joined, string_leaves
from admission.personal import personal_spans

CREDENTIALS, PERSONAL_DATA, INJECTION = "credentials", "personal_data", "injection"
WITHHELD_KEY = "[withheld key]"


@dataclass(frozen=True)
class Detector:
    name: str
    version: str
    spans: Callable[[str], Iterable[tuple[str, int, int]]]  # (kind, start, end) over joined text
    separator: str = "\n"  # between joined values: "" lets a match run across two fields
    # (kind, start, end, encoding) within one value, for what joining would break (encoded runs)
    leaf_spans: Callable[[str], Iterable[tuple[str, int, int, str]]] | None = None


DETECTORS: dict[str, Detector] = {
    CREDENTIALS: Detector(
        CREDENTIALS,
        f"1+detect-secrets-{version('detect-secrets')}",
        credential_spans,
        separator="",
        leaf_spans=encoded_credential_spans,
    ),
    PERSONAL_DATA: Detector(
        PERSONAL_DATA,
        f"1+phonenumbers-{version('phonenumbers')}+stdnum-{version('python-stdnum')}",
        personal_spans,
    ),
    INJECTION: Detector(INJECTION, "1", injection_spans),
}


def detector_versions() -> dict[str, str]:
    """Each detector's name and version: part of the policy fingerprint."""
    return {detector.name: detector.version for detector in DETECTORS.values()}


@dataclass(frozen=True)
class Finding:
    detector: str
    version: str
    field: str
    kind: str
    start: int
    end: int
    encoding: str = "plain"  # plain, base64, hex (or layers: base64+hex), or joined across fields

    def as_json(self) -> dict[str, Any]:
        return {
            "detector": self.detector,
            "version": self.version,
            "field": self.field,
            "kind": self.kind,
            "start": self.start,
            "end": self.end,
            "encoding": self.encoding,
        }


@dataclass(frozen=True)
class Scan:
    findings: tuple[Finding, ...] = ()
    # JSON keys that are themselves credentials: field paths name them, so they are withheld there too.
    secret_keys: frozenset[str] = frozenset()

    def stored(self) -> list[dict[str, Any]]:
        """The findings as they may be stored and shown: no field path spells a secret key."""
        return [self._safe(finding).as_json() for finding in self.findings]

    def _safe(self, finding: Finding) -> Finding:
        field = finding.field
        for key in self.secret_keys:
            field = field.replace(key, WITHHELD_KEY)
        return finding if field == finding.field else replace(finding, field=field)

    @property
    def contains_secret(self) -> bool:
        return any(finding.detector == CREDENTIALS for finding in self.findings)

    @property
    def personal_data(self) -> list[str]:
        return sorted({finding.kind for finding in self.findings if finding.detector == PERSONAL_DATA})

    @property
    def injection_suspected(self) -> bool:
        return any(finding.detector == INJECTION for finding in self.findings)

    def facts(self) -> dict[str, Any]:
        """The three facts the write policy reads."""
        return {
            "contains_secret": self.contains_secret,
            "contains_personal_data": self.personal_data,
            "injection_suspected": self.injection_suspected,
        }

    def merged(self, other: "Scan") -> "Scan":
        return Scan(self.findings + other.findings, self.secret_keys | other.secret_keys)


def scan(sources: Mapping[str, Any]) -> Scan:
    """Run every detector over the string leaves of ``sources`` (name -> JSON value)."""
    values, keys = string_leaves(sources)
    findings: list[Finding] = []
    for detector in DETECTORS.values():
        if values:
            findings += _joined(detector, values, detector.separator)
            if detector.leaf_spans is not None:
                findings += _per_leaf(detector, values)
        if keys:
            findings += _joined(detector, keys, "\n")
    secret_keys = frozenset(
        text
        for path, text in keys
        if any(f.detector == CREDENTIALS and path in f.field.split(" + ") for f in findings)
    )
    return Scan(tuple(findings), secret_keys)


def _joined(detector: Detector, leaves: list[tuple[str, str]], separator: str) -> Iterator[Finding]:
    text, bounds = joined(leaves, separator)
    for kind, start, end in detector.spans(text):
        touched = list(iter_bounds(bounds, start, end))
        if not touched:
            continue
        first, last = touched[0], touched[-1]
        field = " + ".join(path for _, _, path in touched)
        encoding = "joined" if len(touched) > 1 else "plain"
        yield Finding(detector.name, detector.version, field, kind, start - first[0], end - last[0], encoding)


def _per_leaf(detector: Detector, leaves: list[tuple[str, str]]) -> Iterator[Finding]:
    assert detector.leaf_spans is not None
    for path, text in leaves:
        for kind, start, end, encoding in detector.leaf_spans(text):
            yield Finding(detector.name, detector.version, path, kind, start, end, encoding)
