"""Saying the same thing twice: a statement's normal form, and the dedupe key it implies.

A create that cites no ``dedupe_key`` claims one derived from what it says:
its subject, scope, type, normalised statement, validity window and, for an
event, when it occurred (the same sentence true over another period, or said
again on another day, is another memory). Everything that keeps one
active memory per key (the ``deny-duplicate`` rule at submission, the
executor's re-check, the partial unique index) then keeps restatements from
piling up, and a later update that rewords the statement moves the key with it.

Only memories every agent of the tenant may read raw (public, internal) derive
one: a refusal naming the holder would otherwise tell an agent that a masked
or metadata-only memory says exactly what it guessed.
"""

import hashlib
import re
import unicodedata
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from django.utils.dateparse import parse_datetime

STATEMENT_KEY_PREFIX = "statement:"
OPEN_SENSITIVITIES = frozenset({"public", "internal"})
_SPACE = re.compile(r"\s+")
_TRAILING = ".!?;:,"


def normalised_statement(text: str) -> str:
    """Case, width, spacing and final punctuation do not change what a statement says."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return _SPACE.sub(" ", folded).strip().rstrip(_TRAILING).rstrip()


def statement_key(fields: Mapping[str, Any]) -> str:
    """The key a memory with these fields derives, or "" when it derives none."""
    statement = (fields.get("content") or {}).get("statement")
    if not isinstance(statement, str) or fields.get("sensitivity") not in OPEN_SENSITIVITIES:
        return ""
    subject = fields.get("subject") or {}
    parts = (
        subject.get("kind"),
        subject.get("id"),
        fields.get("scope"),
        fields.get("type"),
        normalised_statement(statement),
        instant(fields.get("valid_from")),
        instant(fields.get("valid_to")),
        instant((fields.get("content") or {}).get("occurred_at")),
    )
    said = "\x1f".join(str(part) for part in parts)
    return STATEMENT_KEY_PREFIX + hashlib.sha256(said.encode()).hexdigest()[:48]


def instant(value: object) -> str:
    """One spelling per moment (UTC, ISO 8601), whether it came as JSON text or a column."""
    moment = parse_datetime(value) if isinstance(value, str) else value
    if not isinstance(moment, datetime):
        return str(value or "")  # not a moment (a schema may allow free text): as written
    return moment.astimezone(UTC).isoformat() if moment.tzinfo else moment.isoformat()


def is_statement_key(key: str) -> bool:
    return key.startswith(STATEMENT_KEY_PREFIX)
