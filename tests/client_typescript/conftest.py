from pathlib import Path

import pytest

from tests.client_typescript.node import built_package, node_env
from tests.factories import make_agent
from tests.live import executor, make_reviewer  # noqa: F401


@pytest.fixture(scope="session")
def package() -> Path:
    """The TypeScript client, its npm packages installed from the lock file and ``dist/`` built."""
    return built_package()


@pytest.fixture
def live_env(live_server, agent) -> dict[str, str]:
    """What node runs with: the live server's URL, the agent's token, a reviewer's, a grantless agent's."""
    return node_env(
        CUSTODIAN_URL=live_server.url,
        CUSTODIAN_TOKEN=agent.token,
        CUSTODIAN_REVIEWER_TOKEN=make_reviewer("pm", agent.tenant).token,
        CUSTODIAN_STRANGER_TOKEN=make_agent(agent.tenant.name, "stranger-agent", acts_for=()).token,
    )
