"""The TypeScript client against a live Custodian with a real executor worker.

The pytest side only starts the server, the worker and the people; ``node --test`` does the rest,
with nothing but a URL and tokens in its environment, as a user's program would have.
"""

import subprocess

import pytest

from tests.client_typescript.node import PACKAGE, node_env, run
from tests.live import make_reviewer

EXAMPLES = {
    "01_quickstart.mjs": [
        "remember: stored  memory=",
        "again: duplicate  memory=",
        "recall: Alice prefers weekly summaries",
        "denied: evidence_mismatch  proposal=",
    ],
    "02_vercel_ai_tools.mjs": [
        "remember: stored: memory ",
        "recall: Alice prefers charts over tables",
        "forget: expired: memory ",
    ],
}


def _live_env(live_server, agent) -> dict[str, str]:
    return node_env(
        CUSTODIAN_URL=live_server.url,
        CUSTODIAN_TOKEN=agent.token,
        CUSTODIAN_REVIEWER_TOKEN=make_reviewer("pm", agent.tenant).token,
    )


def test_every_example_is_covered():
    scripts = {path.name for path in (PACKAGE / "examples").glob("[0-9][0-9]_*.mjs")}
    assert scripts == set(EXAMPLES)


def test_offline_tests_pass(package):
    """Retries, backoff and Retry-After against small local servers the node tests start."""
    print(run(["node", "--test", "test/offline/"], env=node_env(), timeout=300))


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_node_tests_pass_against_a_live_custodian(package, live_server, agent, executor):
    env = _live_env(live_server, agent)
    print(run(["node", "--test", "--test-concurrency=1", "test/live/"], env=env, timeout=600))


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("script", sorted(EXAMPLES))
def test_example_runs_and_says_what_it_should(script, package, live_server, agent, executor):
    done = subprocess.run(
        ["node", f"examples/{script}"],
        cwd=PACKAGE,
        env=_live_env(live_server, agent),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    print(done.stdout)  # shown with -s, and on failure
    assert done.returncode == 0, done.stdout + done.stderr
    lines = iter(done.stdout.splitlines())
    for expected in EXAMPLES[script]:  # in this order
        assert any(expected in line for line in lines), f"{expected!r} missing from:\n{done.stdout}"
