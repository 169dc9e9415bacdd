"""Read operator files for management commands strictly, and refuse them in one clear line.

A command that reads JSON (a registration document, an export, a checkpoint
file) goes through here, so a hostile file (deep nesting, NUL, a lone
surrogate, ``NaN``, ``10**400``, a float jsonb would change) is one line on
stderr and exit 1, with nothing written, never a traceback.
"""

import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from django.core.management.base import CommandError

from core import strict_json
from core.strict_json import FILE_MAX_DEPTH


def read_json_file(path: str, *, what: str) -> Any:
    """Return the strict JSON value in the file at ``path`` ('-' reads stdin); else raise ``CommandError``."""
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_bytes()
    except OSError as exc:
        raise CommandError(f"cannot read {what}: {path}: {exc.strerror}") from None
    try:
        return strict_json.loads(text, max_depth=FILE_MAX_DEPTH)
    except strict_json.JSONRefused as exc:
        raise CommandError(f"cannot read {what}: {exc}") from None


def check_text_options(**options: str | None) -> None:
    """Refuse a name given on the command line that is not Unicode (a stray byte, decoded as a surrogate)."""
    for name, value in options.items():
        if value is None:
            continue
        try:
            strict_json.check_text(value)
        except strict_json.JSONRefused as exc:
            raise CommandError(f"--{name.replace('_', '-')}: {exc}") from None


def json_lines(lines: Iterable[str]) -> Iterator[str]:
    """Pass JSON Lines through one by one; refuse a line that is not strict (``JSONRefused``)."""
    return strict_json.checked_lines(lines, max_depth=FILE_MAX_DEPTH)
