from pathlib import Path

import pytest

from tenancy.services import grant_delegation
from tests.client_typescript.node import built_package, node_env
from tests.factories import make_agent
from tests.live import executor, make_reviewer  # noqa: F401


@pytest.fixture(scope="session")
def package() -> Path:
    """The TypeScript client, its npm packages installed from the lock file and ``dist/`` built."""
    return built_package()


# A person only the erasure test remembers things about (an erasure takes all of them, and
# revokes the grants to act for them), and one whose memories rest on a source to retract.
ERASED_SUBJECT = {"kind": "user", "id": "ts-erased-person"}
RETRACTION_SUBJECT = {"kind": "user", "id": "ts-retraction-person"}


@pytest.fixture
def live_env(live_server, agent) -> dict[str, str]:
    """What node runs with: the live server's URL, the agent's token, two reviewers', a grantless agent's."""
    grant_delegation(agent=agent.agent, subject=ERASED_SUBJECT)
    grant_delegation(agent=agent.agent, subject=RETRACTION_SUBJECT)
    return node_env(
        CUSTODIAN_URL=live_server.url,
        CUSTODIAN_TOKEN=agent.token,
        CUSTODIAN_REVIEWER_TOKEN=make_reviewer("pm", agent.tenant).token,
        CUSTODIAN_SECOND_REVIEWER_TOKEN=make_reviewer("pm-second", agent.tenant).token,
        CUSTODIAN_STRANGER_TOKEN=make_agent(agent.tenant.name, "stranger-agent", acts_for=()).token,
    )
