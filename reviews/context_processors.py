"""What every page of the review UI knows about the person viewing it."""

from django.http import HttpRequest
from django.utils.functional import SimpleLazyObject

from reviews.roles import roles_of


def roles(request: HttpRequest) -> dict[str, SimpleLazyObject]:
    """``roles`` (``reviews.roles.Roles``) for the top bar, read only by a page that shows it."""
    return {"roles": SimpleLazyObject(lambda: roles_of(request.user))}
