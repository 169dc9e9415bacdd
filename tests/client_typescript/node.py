"""The TypeScript client's toolchain, as its tests use it: npm packages from the lock file, a build.

``make test`` installs the packages first (``npm ci``); a test run on its own installs them when
``node_modules`` is missing or older than the lock file, by the same rule as the Makefile's.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

BASE_DIR = Path(__file__).resolve().parent.parent.parent
PACKAGE = BASE_DIR / "clients" / "typescript"
INSTALLED = PACKAGE / "node_modules" / ".installed"


def _stale() -> bool:
    if not INSTALLED.exists():
        return True
    stamp = INSTALLED.stat().st_mtime
    return any((PACKAGE / name).stat().st_mtime > stamp for name in ("package.json", "package-lock.json"))


def run(args: list[str], *, env: dict[str, str] | None = None, timeout: float = 600) -> str:
    """Run a command in the package folder; fail the test with its whole output when it fails."""
    done = subprocess.run(
        args, cwd=PACKAGE, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    if done.returncode != 0:
        pytest.fail(f"{' '.join(args)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    return done.stdout


def built_package() -> Path:
    """Install the locked npm packages when needed, compile ``src/`` into ``dist/``; return the folder."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.fail("the TypeScript client's tests need Node >= 20 and npm on PATH")
    if _stale():
        run(["npm", "ci", "--no-audit", "--no-fund"])
        INSTALLED.touch()
    run(["npm", "run", "--silent", "build"])
    return PACKAGE


def node_env(**extra: str) -> dict[str, str]:
    """The environment node runs in: this one without the test database's settings, plus ``extra``."""
    kept = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    return {**kept, **extra}
