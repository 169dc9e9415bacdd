"""A registration as the hot paths use it: compiled once per version, validating content.

Each type's schema is compiled the first time a version is used in a process
(keyed by the document's fingerprint, so identical documents share).
"""

import functools
from dataclasses import dataclass, field
from typing import Any

from jsonschema import Draft202012Validator

from registrations.document import DEFAULT_DOCUMENT, DEFAULT_FINGERPRINT, DEFAULT_VERSION


@dataclass(frozen=True)
class ActiveRegistration:
    """The registration a tenant runs under: its version, fingerprint and document."""

    version: int
    fingerprint: str
    document: dict = field(repr=False, compare=False)

    def entry(self, memory_type: str) -> dict:
        return self.document["types"][memory_type]

    def labels(self, memory_type: str) -> dict[str, str]:
        return self.entry(memory_type)["labels"]

    def content_problems(self, memory_type: str, content: Any) -> list[dict]:
        """Return where ``content`` breaks the registered schema of ``memory_type`` ([] if valid)."""
        return content_problems(self.fingerprint, self.document, memory_type, content)


DEFAULT = ActiveRegistration(DEFAULT_VERSION, DEFAULT_FINGERPRINT, DEFAULT_DOCUMENT)


def content_problems(fingerprint: str, document: dict, memory_type: str, content: Any) -> list[dict]:
    """Validate ``content``; each problem names its JSON pointer, the keyword that failed and why."""
    if memory_type not in document["types"]:
        return [{"path": "/type", "kind": "unregistered", "message": f"{memory_type!r} is not registered"}]
    validator = _validator(fingerprint, memory_type, document)
    problems = []
    for error in validator.iter_errors(content):
        base = "/content" + "".join(f"/{part}" for part in error.absolute_path)
        if error.validator == "additionalProperties" and isinstance(error.instance, dict):
            allowed = error.schema.get("properties", {})
            problems += [
                {"path": f"{base}/{key}", "kind": "not_registered", "message": "not a registered property"}
                for key in sorted(error.instance)
                if key not in allowed
            ]
            continue
        problems.append({"path": base, "kind": str(error.validator), "message": error.message[:300]})
    return sorted(problems, key=lambda problem: (problem["path"], problem["kind"]))[:20]


def _validator(fingerprint: str, memory_type: str, document: dict) -> Draft202012Validator:
    return _compiled(fingerprint, memory_type, _Frozen(document))


class _Frozen:
    """Carry the (unhashable) document through the cache; the fingerprint is the key."""

    def __init__(self, document: dict) -> None:
        self.document = document

    def __hash__(self) -> int:
        return 0

    def __eq__(self, other: object) -> bool:
        return True  # the fingerprint beside it already tells documents apart


@functools.lru_cache(maxsize=512)
def _compiled(fingerprint: str, memory_type: str, frozen: _Frozen) -> Draft202012Validator:
    return Draft202012Validator(frozen.document["types"][memory_type]["schema"])
