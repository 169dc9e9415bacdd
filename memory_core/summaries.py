"""Summarisers: the content of a compaction's successor, written from its sources' content.

A summariser is anything with a ``name`` and a ``summarise`` method (the
:class:`Summariser` protocol); ``CUSTODIAN_SUMMARISER`` names the class to use
(dotted path), so a model can be plugged in later. The default is a
deterministic template: the same sources always give the same summary, so a
frozen compaction plan and its digest are reproducible, and nothing leaves
the process. The result is ordinary content of the memory type (a
``statement``), so the successor is indexed and searched like any memory.
"""

from typing import Any, Protocol

from django.conf import settings
from django.utils.module_loading import import_string

MAX_STATEMENT = 4000  # the registered statement's maxLength in the built-in default
MAX_LINE = 200


class Summariser(Protocol):
    name: str

    def summarise(
        self, *, memory_type: str, subject: dict[str, str], scope: str, contents: list[dict[str, Any]]
    ) -> dict[str, Any]:
        """Return the successor's content for sources of one type, subject and scope (oldest first)."""
        ...


class TemplateSummariser:
    """``N earlier <type> memories about <kind>:<id>: <first line of each>; …``, bounded in length."""

    name = "template.v1"

    def summarise(
        self, *, memory_type: str, subject: dict[str, str], scope: str, contents: list[dict[str, Any]]
    ) -> dict[str, Any]:
        head = f"{len(contents)} earlier {memory_type} memories about {subject['kind']}:{subject['id']}: "
        lines = [_first_line(content) for content in contents]
        statement = head
        for n, line in enumerate(lines):
            rest = f" (+{len(lines) - n} more)"
            piece = line if n == 0 else f"; {line}"
            if len(statement) + len(piece) + len(rest) > MAX_STATEMENT:
                statement += rest
                break
            statement += piece
        return {"statement": statement}


def _first_line(content: dict[str, Any]) -> str:
    text = str(content.get("statement") or content.get("summary") or "").strip()
    line = (text.splitlines() or [""])[0].strip() or "(no statement)"
    return line if len(line) <= MAX_LINE else line[: MAX_LINE - 1] + "…"


def active_summariser() -> Summariser:
    """The summariser ``CUSTODIAN_SUMMARISER`` names (read when asked, never at import)."""
    path = getattr(settings, "CUSTODIAN_SUMMARISER", "memory_core.summaries.TemplateSummariser")
    return import_string(path)()
