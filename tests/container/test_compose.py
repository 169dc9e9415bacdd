"""compose.yaml says what bin/run-all starts, with the least-privilege roles; no engine needed."""

import shlex
import urllib.parse
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
SERVICES = yaml.safe_load((ROOT / "compose.yaml").read_text())["services"]
APP = ("migrate", "web", "executor", "beat")


def _role(service: str) -> str:
    return urllib.parse.urlsplit(SERVICES[service]["environment"]["DATABASE_URL"]).username or ""


def test_it_runs_the_stack_bin_run_all_runs_beside_its_own_database_and_redis():
    assert set(SERVICES) == {"postgres", "redis", *APP}
    assert len({SERVICES[name]["image"] for name in APP}) == 1
    assert all(SERVICES[name]["image"].startswith("${") for name in ("postgres", "redis", "web"))


def test_migrations_and_roles_run_once_as_the_owner_before_the_others_start():
    command = " ".join(SERVICES["migrate"]["command"])
    assert command.index("migrate --noinput") < command.index("setup_db_roles")
    assert SERVICES["migrate"]["restart"] == "no"
    assert _role("migrate") == "custodian"
    for name in ("web", "executor", "beat"):
        assert SERVICES[name]["depends_on"]["migrate"]["condition"] == "service_completed_successfully"


def test_each_process_connects_as_its_own_role():
    assert _role("web") == "custodian_web"
    assert _role("executor") == "custodian_executor"
    assert _role("beat") != "custodian"


def test_the_executor_consumes_the_queues_and_flags_bin_run_all_gives_it():
    run_all = (ROOT / "bin" / "run-all").read_text().replace("\\\n", " ")
    worker_line = next(line for line in run_all.splitlines() if "celery" in line and " worker " in line)
    command = SERVICES["executor"]["command"]
    for flag in ("-Q", "-n", "--without-gossip", "--without-mingle"):
        assert flag in shlex.split(worker_line.replace('"', "")) and flag in command
    queues = shlex.split(worker_line.replace('"', ""))
    expected = "executor,notifications,vectors"
    assert command[command.index("-Q") + 1] == queues[queues.index("-Q") + 1] == expected
    assert "beat" in SERVICES["beat"]["command"]


def test_the_web_healthcheck_asks_readyz_as_the_tls_proxy_would():
    check = " ".join(SERVICES["web"]["healthcheck"]["test"])
    assert "/readyz" in check and "X-Forwarded-Proto" in check
