from pathlib import Path

import pytest

from tests.client_typescript.node import built_package
from tests.live import executor  # noqa: F401


@pytest.fixture(scope="session")
def package() -> Path:
    """The TypeScript client, its npm packages installed from the lock file and ``dist/`` built."""
    return built_package()
