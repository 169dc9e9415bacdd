"""``bin/run-all`` (what ``make run`` starts) on the embedded default: it serves, and it stops cleanly."""

import os
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


def _embedded_env(var_dir: Path, port: int) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    return {**env, "CUSTODIAN_VAR_DIR": str(var_dir), "PORT": str(port), "PYTHONUNBUFFERED": "1"}


@pytest.fixture(scope="module")
def migrated_var(tmp_path_factory) -> Path:
    """A var/ folder with a migrated SQLite database, copied for each run."""
    var_dir = tmp_path_factory.mktemp("var")
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"],
        cwd=BASE_DIR,
        env=_embedded_env(var_dir, 0),
        check=True,
        timeout=600,
    )
    return var_dir


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _answers(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/accounts/login/", timeout=5) as response:
            return response.status == 200
    except OSError:
        return False


@pytest.mark.parametrize("stop_signal", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "term"])
def test_run_all_serves_and_stops_cleanly(migrated_var, tmp_path, stop_signal):
    var_dir = tmp_path / "var"
    shutil.copytree(migrated_var, var_dir)
    port = _free_port()
    log = tmp_path / "run-all.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            ["bin/run-all"],
            cwd=BASE_DIR,
            env=_embedded_env(var_dir, port),
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group, as a terminal's foreground job
        )
        try:
            deadline = time.monotonic() + 180
            while not _answers(port):
                assert process.poll() is None, log.read_text()
                assert time.monotonic() < deadline, f"no answer on {port}:\n{log.read_text()}"
                time.sleep(0.5)
            time.sleep(3)  # let the worker and beat finish starting
            # Ctrl-C reaches the whole foreground group; TERM (systemd, docker stop) only the script.
            if stop_signal == signal.SIGINT:
                os.killpg(process.pid, signal.SIGINT)
            else:
                process.send_signal(signal.SIGTERM)
            returncode = process.wait(timeout=120)
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
    output = log.read_text()
    assert returncode == 0, output
    assert "Custodian stopped." in output
    assert "Segmentation fault" not in output
    assert output.count(" ready.") == 1, output  # one worker, never respawned while stopping
    assert output.count("Warm shutdown") <= 2, output
    assert "Traceback" not in output, output
    assert not (BASE_DIR / "control").exists()
