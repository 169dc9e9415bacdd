"""Label values: every one from a closed set, or folded into ``(other)``.

A value that does not look like an identifier of the code (a problem code, a rule id, an
outcome) is never passed through: whatever a future caller hands in, a label cannot carry
an id, a name or text.
"""

import re

OTHER = "(other)"  # never a slug, so never a tenant, rule or code of the same name
UNMATCHED_ROUTE = "unmatched"  # no URL pattern matched (a 404 from the resolver)
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_.-]{0,63}")  # MGP's codes are upper case
# What an id looks like inside a word: eight hex digits in a row (a UUID, a hash), or four digits.
_ID_LIKE = re.compile(r"[0-9a-f]{8}|[0-9]{4}", re.IGNORECASE)
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
# The url names of the recall endpoints, and the surface each is counted under.
RECALL_ROUTES = {"recall-search": "rest", "mgp-search": "mgp"}


def word(value: str) -> str:
    """``value`` if it is a short identifier (``not_found``, ``deny-duplicate``), else OTHER."""
    return value if _WORD.fullmatch(value) and not _ID_LIKE.search(value) else OTHER


def method(value: str) -> str:
    return value if value in METHODS else OTHER


def status(value: int) -> str:
    return str(value) if 100 <= value <= 599 else OTHER
