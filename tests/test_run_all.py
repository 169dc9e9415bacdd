"""What ``make run`` starts (``bin/run-all``), on the embedded default a new user meets first.

It serves the demo, the README's curl walkthrough reaches a receipt through it,
every receipt chain verifies, and Ctrl-C or TERM stops it cleanly.
"""

import contextlib
import http.client
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

BASE_DIR = Path(__file__).resolve().parent.parent
# Every process here runs on the embedded default in a var/ folder of its own.
pytestmark = pytest.mark.mode_independent


def _embedded_env(var_dir: Path, **extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    return {**env, "CUSTODIAN_VAR_DIR": str(var_dir), "PYTHONUNBUFFERED": "1", **extra}


def _manage(var_dir: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=BASE_DIR,
        env=_embedded_env(var_dir),
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.fixture(scope="module")
def demo_var(tmp_path_factory) -> tuple[Path, str]:
    """A var/ folder with the migrated demo (as ``make run`` leaves it), and the demo agent's token."""
    var_dir = tmp_path_factory.mktemp("var")
    assert _manage(var_dir, "migrate", "--noinput", "-v", "0").returncode == 0
    seeded = _manage(var_dir, "seed_demo")
    assert seeded.returncode == 0, seeded.stderr
    assert "No hostname" not in seeded.stderr
    return var_dir, re.search(r"agent token \(research-agent\): (\S+)", seeded.stdout).group(1)


@contextlib.contextmanager
def _running(var_dir: Path, log: Path):
    """Start bin/run-all in its own process group (a terminal's foreground job); yield it and its port."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with log.open("wb") as out:
        process = subprocess.Popen(
            ["bin/run-all"],
            cwd=BASE_DIR,
            env=_embedded_env(var_dir, PORT=str(port)),
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            deadline = time.monotonic() + 180
            while not _answers(port):
                assert process.poll() is None, log.read_text()
                assert time.monotonic() < deadline, f"no answer on {port}:\n{log.read_text()}"
                time.sleep(0.5)
            yield process, port
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)


def _answers(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/accounts/login/", timeout=5) as response:
            return response.status == 200
    except OSError:
        return False


def _walkthrough() -> str:
    readme = (BASE_DIR / "README.md").read_text()
    section = readme.split("### From token to receipt, with curl", 1)[1]
    return section.split("```sh\n", 1)[1].split("```", 1)[0]


def test_the_readme_walkthrough_reaches_a_receipt_and_every_chain_verifies(demo_var, tmp_path):
    var_dir = tmp_path / "var"
    shutil.copytree(demo_var[0], var_dir)
    with _running(var_dir, tmp_path / "run-all.log") as (_, port):
        script = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", _walkthrough()],
            env={**os.environ, "BASE": f"http://127.0.0.1:{port}", "TOKEN": demo_var[1]},
            capture_output=True,
            text=True,
            timeout=300,
        )
    assert script.returncode == 0, script.stdout + script.stderr
    assert script.stdout.split()[:2] == ["auto_apply", "applied"], script.stdout
    assert "Alice prefers summaries as bullet points" in script.stdout
    verified = _manage(var_dir, "verify_receipts")
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "BROKEN" not in verified.stdout


def test_it_serves_with_the_benchmarks_gunicorn_and_the_pages_static_files(demo_var, tmp_path):
    """make run serves as the benchmark measures (config/gunicorn.py), the demo's CSS included."""
    var_dir = tmp_path / "var"
    shutil.copytree(demo_var[0], var_dir)
    with _running(var_dir, tmp_path / "run-all.log") as (_, port):
        for path in ("/accounts/login/", "/static/admin/css/base.css", "/api/v1/proposals/"):
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            connection.request("GET", path, headers={"Authorization": f"Bearer {demo_var[1]}"})
            response = connection.getresponse()
            response.read()
            connection.close()
            assert response.status == 200, (path, response.status)
            assert response.getheader("Server", "").startswith("gunicorn"), path


@pytest.mark.parametrize("stop_signal", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "term"])
def test_run_all_stops_cleanly(demo_var, tmp_path, stop_signal):
    var_dir = tmp_path / "var"
    shutil.copytree(demo_var[0], var_dir)
    log = tmp_path / "run-all.log"
    with _running(var_dir, log) as (process, _):
        time.sleep(3)  # let the worker and beat finish starting
        # Ctrl-C reaches the whole foreground group; TERM (systemd, docker stop) only the script.
        if stop_signal == signal.SIGINT:
            os.killpg(process.pid, signal.SIGINT)
        else:
            process.send_signal(signal.SIGTERM)
        returncode = process.wait(timeout=120)
    output = log.read_text()
    assert returncode == 0, output
    assert "Custodian stopped." in output
    assert "Segmentation fault" not in output and "Traceback" not in output, output
    assert output.count(" ready.") == 1, output  # one worker, never respawned while stopping
    assert output.count("Warm shutdown") <= 2, output
    assert not (BASE_DIR / "control").exists()
