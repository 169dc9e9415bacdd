"""The write-time admission firewall: detectors whose findings become policy facts.

``scan`` reads the text a proposal carries (its memory fields, rationale,
observation and cited evidence) and returns findings: which detector, at
which field path, found what kind, where. It never returns the matched text.
``proposals`` turns findings into the facts its rule set reads; ``evidence``
refuses a secret before a revision is stored; ``memory_core`` redacts
personal-data spans in its masked view.
"""

from admission.detectors import DETECTORS, Finding, Scan, detector_versions, scan
from admission.personal import redact_personal

__all__ = ["DETECTORS", "Finding", "Scan", "detector_versions", "redact_personal", "scan"]
