"""The memory lifecycle: verbs, the states they lead to, and the only transitions allowed.

    active  --expire-->  expired   --restore--> active
    active  --revoke-->  revoked   --restore--> active
    active  --dormant-> dormant   --restore--> active   (Custodian's own dormancy sweep)
    dormant --expire|revoke--> expired | revoked
    active | expired | revoked | dormant  --delete-->  deleted  --purge-->  (row removed)
    any state  --erase-->  (row removed)   (an erasure of its subject, reviewed as one plan)

A dormant memory is kept whole (content, evidence, lineage) but left out of
default recall, and, like an expired one, it no longer holds its dedupe key:
restoring it claims the key again and is refused if another memory took it.

Everything else is refused, at submission and again at execution; MGP's
reference gateway lets a deleted memory come back by expiring it.
"""

from core.errors import DomainError

ACTIVE, EXPIRED, REVOKED, DELETED, PURGED = "active", "expired", "revoked", "deleted", "purged"
DORMANT = "dormant"
VERBS = ("expire", "revoke", "delete", "purge", "restore", "dormant")

TRANSITIONS: dict[tuple[str, str], str] = {
    (ACTIVE, "expire"): EXPIRED,
    (ACTIVE, "revoke"): REVOKED,
    (ACTIVE, "delete"): DELETED,
    (EXPIRED, "restore"): ACTIVE,
    (REVOKED, "restore"): ACTIVE,
    (EXPIRED, "delete"): DELETED,
    (REVOKED, "delete"): DELETED,
    (DELETED, "purge"): PURGED,
    (ACTIVE, "dormant"): DORMANT,
    (DORMANT, "restore"): ACTIVE,
    (DORMANT, "expire"): EXPIRED,
    (DORMANT, "revoke"): REVOKED,
    (DORMANT, "delete"): DELETED,
    # An erasure purges a memory from whatever state it is in (its plan was reviewed as one).
    **{(state, "erase"): PURGED for state in (ACTIVE, EXPIRED, REVOKED, DELETED, DORMANT)},
}


class InvalidTransition(DomainError):
    code = "invalid_transition"
    status = 409
    title = "The memory cannot make that lifecycle transition"


def next_state(state: str, verb: str) -> str:
    """Return the state ``verb`` leads to from ``state``, or raise :class:`InvalidTransition`."""
    try:
        return TRANSITIONS[(state, verb)]
    except KeyError:
        action = "made dormant" if verb == DORMANT else f"{verb}d"
        raise InvalidTransition(f"A {state} memory cannot be {action}", state=state, verb=verb) from None
