"""Cursor pagination: stable under inserts and constant-time at any depth."""

from rest_framework.pagination import CursorPagination


class CreatedCursorPagination(CursorPagination):
    ordering = ("-created_at", "-id")
    page_size = 50
    page_size_query_param = "limit"
    max_page_size = 200
