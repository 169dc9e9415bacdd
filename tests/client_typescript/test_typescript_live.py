"""The TypeScript client against a live Custodian with a real executor worker.

The pytest side only starts the server, the worker and the people; ``node --test`` does the rest,
with nothing but a URL and tokens in its environment, as a user's program would have.
"""

import subprocess

import pytest

from tests.client_typescript.node import PACKAGE, node_env, run

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
    "03_langgraph_store.mjs": [
        'recalled: ["Weekly summaries, please."]',
        'stored: {"text":"Weekly summaries, please.","cadence":"weekly"}',
        "waiting for review: ",
        "deleted: null",
    ],
}


def test_every_example_is_covered():
    scripts = {path.name for path in (PACKAGE / "examples").glob("[0-9][0-9]_*.mjs")}
    assert scripts == set(EXAMPLES)


def test_offline_tests_pass(package):
    """Retries, backoff and Retry-After against small local servers the node tests start."""
    print(run(["node", "--test", "test/offline/"], env=node_env(), timeout=300))


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_node_tests_pass_against_a_live_custodian(package, live_env, executor):
    print(run(["node", "--test", "--test-concurrency=1", "test/live/"], env=live_env, timeout=600))


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("script", sorted(EXAMPLES))
def test_example_runs_and_says_what_it_should(script, package, live_env, executor):
    done = subprocess.run(
        ["node", f"examples/{script}"],
        cwd=PACKAGE,
        env=live_env,
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
