"""MGP's JSON Schemas (v0.1.1, MIT, copied in ``schemas/``), compiled once per process.

The reference gateway re-reads and recompiles a schema on every call; here
each validator is built the first time it is asked for and then reused.
"""

import functools
import json
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from referencing import Registry, Resource

SCHEMA_DIR = Path(__file__).resolve().parent / "schemas"


class MgpError(Exception):
    """An MGP error answer: ``code`` is authoritative, ``status`` the HTTP hint."""

    STATUS = {
        "MGP_INVALID_OBJECT": 400,
        "MGP_UNSUPPORTED_VERSION": 400,
        "MGP_UNSUPPORTED_CAPABILITY": 501,
        "MGP_POLICY_DENIED": 403,
        "MGP_SCOPE_VIOLATION": 403,
        "MGP_MEMORY_NOT_FOUND": 404,
        "MGP_TASK_NOT_FOUND": 404,
        "MGP_CONFLICT_UNRESOLVED": 409,
        "MGP_BACKEND_ERROR": 502,
    }

    def __init__(self, code: str, message: str, status: int | None = None, **details: Any) -> None:
        super().__init__(message)
        self.code, self.message, self.details = code, message, details
        self.status = status or self.STATUS[code]


@functools.cache
def _registry() -> Registry:
    resources = []
    for path in SCHEMA_DIR.glob("*.json"):
        schema = json.loads(path.read_text())
        resource = Resource.from_contents(schema)
        resources += [(schema["$id"], resource), (path.name, resource)]
    return Registry().with_resources(resources)


@functools.cache
def validator(name: str) -> Draft202012Validator:
    schema = json.loads((SCHEMA_DIR / name).read_text())
    return Draft202012Validator(schema, registry=_registry())


def validate(instance: Any, name: str) -> None:
    """Raise ``MgpError(MGP_INVALID_OBJECT)`` naming the first failing path."""
    error = next(iter(validator(name).iter_errors(instance)), None)
    if error is not None:
        where = "/".join(str(part) for part in error.absolute_path) or "(root)"
        raise MgpError("MGP_INVALID_OBJECT", f"{where}: {error.message[:300]}", field=where)
