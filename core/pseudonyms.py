"""Pseudonyms: what an erasure leaves in records of authority instead of the person's id.

A grant, a review decision and their history say who acted for whom; they stay
after an erasure, so the receipts and seals that cite them still verify, but
the person is named there by ``pseudonym(kind, id)``, never in clear. The
pseudonym is HMAC-SHA256 under ``SECRET_KEY`` of ``"<kind>:<id>"``: the same
person always gets the same one, so an auditor who holds an id and the
operator who holds the key can confirm a match (``manage.py erased_pseudonym``,
or any HMAC tool), while nobody can read the id back out of it.
"""

import hashlib
import hmac

from django.conf import settings

PREFIX = "erased:"


def pseudonym(kind: str, subject_id: str, *, secret: str | bytes | None = None) -> str:
    """Return the stable pseudonym of the subject ``kind:subject_id``: ``erased:<64 hex>``."""
    return pseudonymised(f"{kind}:{subject_id}", secret=secret)


def pseudonymised(owner: str, *, secret: str | bytes | None = None) -> str:
    """Return ``owner`` (``kind:id``, or a username) as its pseudonym; a pseudonym stays as it is."""
    if is_pseudonym(owner):
        return owner
    key = settings.SECRET_KEY if secret is None else secret
    key_bytes = key.encode() if isinstance(key, str) else key
    return PREFIX + hmac.new(key_bytes, owner.encode(), hashlib.sha256).hexdigest()


def is_pseudonym(value: str) -> bool:
    """True if ``value`` is a pseudonym an erasure wrote (the form the database triggers accept)."""
    digest = value[len(PREFIX) :]
    return value.startswith(PREFIX) and len(digest) == 64 and all(c in "0123456789abcdef" for c in digest)
