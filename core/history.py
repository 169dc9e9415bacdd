"""simple-history glue."""

from django.contrib.auth import get_user_model


def human_history_user(request=None, **kwargs):
    """Return the request's user for history rows only if it is a human account.

    Agents authenticate with tokens and are recorded on the rows themselves
    (``submitted_by``, receipts); history_user is a foreign key to users.
    """
    user = getattr(request, "user", None)
    return user if isinstance(user, get_user_model()) and user.is_authenticated else None
