"""Cursor pagination: stable under inserts and constant-time at any depth."""

from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework.exceptions import NotFound
from rest_framework.pagination import CursorPagination

from core.errors import DomainError


class InvalidCursor(DomainError):
    code = "invalid_cursor"
    status = 400
    title = "The cursor is not one this API issued"


class CreatedCursorPagination(CursorPagination):
    ordering = ("-created_at", "-id")
    page_size = 50
    page_size_query_param = "limit"
    max_page_size = 200

    def paginate_queryset(self, queryset, request, view=None):
        try:
            return super().paginate_queryset(queryset, request, view)
        except DjangoValidationError:  # a well-formed cursor with a forged position
            raise InvalidCursor() from None

    def decode_cursor(self, request):
        try:
            return super().decode_cursor(request)
        except NotFound:
            raise InvalidCursor() from None
