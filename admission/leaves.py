"""The string leaves of JSON, each with its field path, in document order."""

from collections.abc import Iterator, Mapping
from typing import Any

MAX_DEPTH = 64  # deeper JSON than any request parser lets through; never recurse without end


def string_leaves(sources: Mapping[str, Any]) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """Return the ``(path, text)`` of every non-empty string value, and of every key, in ``sources``.

    Keys are leaves too (path ``a.b#``): content is free-form JSON, and a key can carry a
    secret or an address as well as a value can. They are kept apart so that values
    joined in document order are the values alone, as a key split in two reads.
    """
    values: list[tuple[str, str]] = []
    keys: list[tuple[str, str]] = []
    for name, value in sources.items():
        _walk(name, value, 0, values, keys)
    return values, keys


def _walk(
    path: str, value: Any, depth: int, values: list[tuple[str, str]], keys: list[tuple[str, str]]
) -> None:
    if isinstance(value, str):
        if value:
            values.append((path, value))
    elif depth >= MAX_DEPTH:
        return
    elif isinstance(value, Mapping):
        for key, item in value.items():
            if isinstance(key, str) and key:
                keys.append((f"{path}.{key}#", key))
            _walk(f"{path}.{key}", item, depth + 1, values, keys)
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            _walk(f"{path}[{index}]", item, depth + 1, values, keys)


def joined(leaves: list[tuple[str, str]], separator: str) -> tuple[str, list[tuple[int, int, str]]]:
    """Join the leaves' text; return it with each leaf's ``(start, end, path)`` in it."""
    bounds, at = [], 0
    for path, text in leaves:
        bounds.append((at, at + len(text), path))
        at += len(text) + len(separator)
    return separator.join(text for _, text in leaves), bounds


def iter_bounds(bounds: list[tuple[int, int, str]], start: int, end: int) -> Iterator[tuple[int, int, str]]:
    """The leaves a span of the joined text touches (an empty span touches the leaf it sits in)."""
    for low, high, path in bounds:
        if low < max(end, start + 1) and start < high:
            yield low, high, path
