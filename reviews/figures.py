"""Evidence as a reviewer reads it: the figures the conclusion cites, found in the evidence, and a safe link.

A figure is a number written in the proposal's content: in its text fields
(the statement, the conclusion) as a standalone number (``0.021``, ``-3``,
``2.1%``; not the ``12`` of ``momentum_12_1``) or a numeric field (``value``).
An evidence value matches a figure when it is equal, when the figure is a
percentage of it (2.1% and 0.021), or when the figure, written with two or
more decimals, is the value rounded (0.35 and 0.3512). Integers must be equal:
"3 years" should not light up every 3.2.
"""

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any
from urllib.parse import urlsplit

NUMBER = re.compile(r"(?<![\w.])[-+]?\d+(?:\.\d+)?%?(?!\w)")
MAX_ROWS = 200  # leaves shown as a table; the raw content stays available below it


@dataclass(frozen=True)
class Figure:
    text: str  # as written in the content, e.g. "2.1%"
    value: Decimal  # the number, a percentage divided by 100
    places: int  # decimals written (of the number before any %)


@dataclass(frozen=True)
class EvidenceRow:
    path: str
    value: Any
    cited: bool


def cited_figures(content: dict) -> list[Figure]:
    """Return the figures the proposal's content writes, in order, without repeats."""
    texts: list[str] = []
    for value in content.values():
        if isinstance(value, str):
            texts += [match.group() for match in NUMBER.finditer(value)]
        elif isinstance(value, int | float) and not isinstance(value, bool):
            texts.append(str(value))
    figures = [_figure(text) for text in dict.fromkeys(texts)]
    return [figure for figure in figures if figure is not None]


def evidence_rows(content: Any, figures: list[Figure]) -> list[EvidenceRow]:
    """Flatten structured evidence into (path, value) rows, marking the values a figure cites."""
    rows: list[EvidenceRow] = []
    for path, value in _leaves(content, ""):
        if len(rows) == MAX_ROWS:
            break
        rows.append(EvidenceRow(path or "(value)", value, _cites(figures, value)))
    return rows


def found_figures(figures: list[Figure], rows: list[EvidenceRow]) -> set[str]:
    """Return the texts of the figures that some evidence row matches."""
    return {f.text for f in figures for row in rows if row.cited and _matches(f, row.value)}


def external_link(ref: str) -> str | None:
    """Return ``ref`` when it is a plain http(s) URL a browser may open; anything else is shown as text.

    ``javascript:``, ``data:``, relative paths and refs with spaces or control
    characters (which browsers strip, so `` javascript:`` would run) never become links.
    """
    if not ref or any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 for ch in ref):
        return None
    try:
        parts = urlsplit(ref)
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return None
    return ref


def _figure(text: str) -> Figure | None:
    number = text.rstrip("%")
    try:
        value = Decimal(number)
    except InvalidOperation:
        return None
    places = len(number.split(".", 1)[1]) if "." in number else 0
    return Figure(text, value / 100 if text.endswith("%") else value, places)


def _leaves(content: Any, path: str):
    if isinstance(content, dict):
        for key, value in content.items():
            yield from _leaves(value, f"{path}.{key}" if path else str(key))
    elif isinstance(content, list):
        for index, value in enumerate(content):
            yield from _leaves(value, f"{path}[{index}]")
    else:
        yield path, content


def _cites(figures: list[Figure], value: Any) -> bool:
    return any(_matches(figure, value) for figure in figures)


def _matches(figure: Figure, value: Any) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    try:
        number = Decimal(str(value))
    except InvalidOperation:
        return False
    if not number.is_finite():
        return False
    if number == figure.value:
        return True
    if figure.text.endswith("%"):
        return round(number * 100, figure.places) == round(figure.value * 100, figure.places)
    return figure.places >= 2 and round(number, figure.places) == figure.value
