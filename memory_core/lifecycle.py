"""The memory lifecycle: verbs, the states they lead to, and the only transitions allowed.

    active  --expire-->  expired   --restore--> active
    active  --revoke-->  revoked   --restore--> active
    active | expired | revoked  --delete-->  deleted  --purge-->  (row removed)

Everything else is refused, at submission and again at execution; MGP's
reference gateway lets a deleted memory come back by expiring it.
"""

from core.errors import DomainError

ACTIVE, EXPIRED, REVOKED, DELETED, PURGED = "active", "expired", "revoked", "deleted", "purged"
VERBS = ("expire", "revoke", "delete", "purge", "restore")

TRANSITIONS: dict[tuple[str, str], str] = {
    (ACTIVE, "expire"): EXPIRED,
    (ACTIVE, "revoke"): REVOKED,
    (ACTIVE, "delete"): DELETED,
    (EXPIRED, "restore"): ACTIVE,
    (REVOKED, "restore"): ACTIVE,
    (EXPIRED, "delete"): DELETED,
    (REVOKED, "delete"): DELETED,
    (DELETED, "purge"): PURGED,
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
        raise InvalidTransition(f"A {state} memory cannot be {verb}d", state=state, verb=verb) from None
