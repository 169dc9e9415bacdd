"""Strict JSON: accept only what can be stored, hashed and verified byte for byte on both databases.

Every JSON that enters Custodian (REST bodies, the admin's JSON fields, operator
files) is read here. Besides well-formedness it refuses:

- nesting deeper than the caller's limit (no recursion in the checks either);
- U+0000, which PostgreSQL cannot keep in text or jsonb, and lone surrogates,
  which are not Unicode and cannot be encoded as UTF-8;
- ``NaN``, ``Infinity`` and anything that overflows a double (``1e400``);
- integers beyond ±(2**53 - 1), which a double cannot hold exactly (I-JSON,
  RFC 7493) and RFC 8785 cannot hash;
- floats of magnitude 2**53 or more. All of them are integral, and jsonb keeps
  numbers as decimals: ``1e16`` comes back as the integer ``10000000000000000``,
  another JSON text than the one hashed when it was written.

Every smaller finite double reads back from jsonb as the same double (Python
writes the shortest repr, a decimal that converts back exactly), and SQLite keeps
the text, so what passes hashes the same before storing and after reading back.

Pure Python, no Django: the offline export verifier reads with it too.
"""

import json
import math
from collections.abc import Iterable, Iterator
from typing import Any

MAX_SAFE_INTEGER = 2**53 - 1
# Operator files (a registration document, an export, checkpoints): deeper than any body the API
# accepts wrapped in an export line or a registration's schemas, far below what Python's recursion takes.
FILE_MAX_DEPTH = 64
_FLOAT_LIMIT = float(2**53)


class JSONRefused(ValueError):
    """The text is not JSON Custodian can keep exactly (malformed, too deep, or an unkeepable value)."""


def loads(text: str | bytes, *, max_depth: int) -> Any:
    """Parse ``text`` (bytes must be UTF-8) and return the value; raise :class:`JSONRefused`."""
    try:
        if isinstance(text, bytes):
            text = text.decode("utf-8")
        value = json.loads(text, parse_constant=_refuse_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise JSONRefused(str(exc)[:200]) from None
    check(value, max_depth=max_depth)
    return value


def check(value: Any, *, max_depth: int) -> None:
    """Raise :class:`JSONRefused` unless ``value`` is a JSON value Custodian can keep exactly.

    The message names where (a JSON Pointer), so an operator can find it in a file. This walk
    keeps no path (it runs on every request body); a refusal walks again to find where.
    """
    try:
        _walk(value, max_depth)
    except JSONRefused as exc:
        where = _where(value, max_depth)
        raise JSONRefused(f"{exc} (at {where})" if where else str(exc)) from None


def _walk(value: Any, max_depth: int) -> None:
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > max_depth:
            raise JSONRefused(f"JSON nested deeper than {max_depth} levels")
        if isinstance(node, str):
            check_text(node)
        elif isinstance(node, bool):
            continue
        elif isinstance(node, int):
            if abs(node) > MAX_SAFE_INTEGER:
                _check_scalar(node)
        elif isinstance(node, float):
            _check_float(node)
        elif isinstance(node, dict):
            for key, child in node.items():
                if type(key) is not str:
                    _refuse_key()
                check_text(key)
                stack.append((child, depth + 1))
        elif isinstance(node, list):
            stack.extend((child, depth + 1) for child in node)
        elif node is not None:
            _check_scalar(node)


def _check_scalar(node: Any) -> None:
    if isinstance(node, str):
        check_text(node)
    elif isinstance(node, bool) or node is None:
        return
    elif isinstance(node, int):
        if abs(node) > MAX_SAFE_INTEGER:
            raise JSONRefused("Integers must lie within ±(2**53 - 1); send larger ones as strings")
    elif isinstance(node, float):
        _check_float(node)
    else:
        raise JSONRefused(f"{type(node).__name__} is not a JSON value")


def _refuse_key() -> None:
    raise JSONRefused("Object keys must be strings")


def _where(value: Any, max_depth: int) -> str:
    """Return the JSON Pointer of the first node :func:`check` refuses (the same walk, keeping the path)."""
    stack: list[tuple[Any, int, Any]] = [(value, 1, None)]  # (node, depth, (parent's link, key))
    while stack:
        node, depth, link = stack.pop()
        try:
            if depth > max_depth:
                return _pointer(link)
            if isinstance(node, dict):
                for key in node:
                    if type(key) is not str:
                        _refuse_key()
                    check_text(key)
                stack.extend((child, depth + 1, (link, key)) for key, child in node.items())
            elif isinstance(node, list):
                stack.extend((child, depth + 1, (link, index)) for index, child in enumerate(node))
            else:
                _check_scalar(node)
        except JSONRefused:
            return _pointer(link)
    return ""


def _pointer(link: Any) -> str:
    """Render a (parent's link, key) chain as a JSON Pointer (RFC 6901)."""
    keys = []
    while link is not None:
        link, key = link
        text = str(key)
        if not text.isprintable():  # (a NUL or a lone surrogate must not reach a terminal or a response)
            text = text.encode("unicode_escape", "backslashreplace").decode("ascii")
        keys.append(text.replace("~", "~0").replace("/", "~1"))
    pointer = "".join(f"/{key}" for key in reversed(keys))
    return pointer if len(pointer) <= 200 else pointer[:199] + "…"


def check_text(text: str) -> None:
    """Raise :class:`JSONRefused` for a string PostgreSQL or UTF-8 cannot keep (NUL, a lone surrogate)."""
    if "\x00" in text:
        raise JSONRefused("NUL characters are not allowed")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise JSONRefused("Lone surrogate escapes are not valid Unicode") from None


def _check_float(number: float) -> None:
    if not math.isfinite(number):
        raise JSONRefused("Numbers must be finite")
    if abs(number) >= _FLOAT_LIMIT:
        raise JSONRefused(
            "Numbers of magnitude 2**53 or more are not kept exactly (stored, they read back as "
            "another number); send them as strings"
        )


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def checked_lines(lines: Iterable[str], *, max_depth: int) -> Iterator[str]:
    """Yield each line of JSON Lines once it is strict JSON; raise :class:`JSONRefused` naming the line.

    Blank lines pass as they are; the reader decides what they mean.
    """
    for number, line in enumerate(lines, 1):
        if line.strip():
            try:
                loads(line, max_depth=max_depth)
            except JSONRefused as exc:
                raise JSONRefused(f"line {number}: {exc}") from None
        yield line
