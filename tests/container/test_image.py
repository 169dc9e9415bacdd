"""The container image, built and run for real: migrate, least-privilege roles, web and executor.

Building costs minutes, so this runs only when asked (``CUSTODIAN_CONTAINER_TESTS=1``, as
``make container-test`` sets it) and then fails, never skips, without a container engine. The
image is tagged with a hash of everything the build reads, so a second run reuses it. The app
containers share the host's network and reach the local PostgreSQL and Redis named by
``DATABASE_URL`` / ``REDIS_URL``, on a database of their own.
"""

import contextlib
import hashlib
import os
import re
import secrets
import shutil
import socket
import subprocess
import time
import urllib.parse
from pathlib import Path

import httpx
import psycopg
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
ENGINE = os.environ.get("CONTAINER_ENGINE") or shutil.which("podman") or shutil.which("docker") or ""
BASE_IMAGE = os.environ.get("BASE_IMAGE") or "docker.io/library/debian:bookworm-slim"
# Top-level entries .containerignore leaves out of the build context: they cannot change the image.
UNUSED_BY_BUILD = {"tests", "bench", "docs", "examples", "clients", "var", "staticfiles", "mkdocs.yml"}
PROXY = {"X-Forwarded-Proto": "https"}  # what the TLS proxy in front adds (production settings)
COMPOSE = yaml.safe_load((ROOT / "compose.yaml").read_text())["services"]

pytestmark = [
    pytest.mark.container,
    pytest.mark.services,
    pytest.mark.skipif(
        os.environ.get("CUSTODIAN_CONTAINER_TESTS") != "1", reason="CUSTODIAN_CONTAINER_TESTS=1 runs it"
    ),
]


def _engine(*args: str, timeout: float = 600, check: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run([ENGINE, *args], capture_output=True, text=True, timeout=timeout)
    if check:
        assert result.returncode == 0, f"{ENGINE} {' '.join(args)}:\n{result.stdout}\n{result.stderr}"
    return result


def _context_hash() -> str:
    """A hash of the files the build copies (git's view of the tree, committed or not)."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    digest = hashlib.sha256(BASE_IMAGE.encode())
    for name in sorted(listed):
        path = ROOT / name
        if name.split("/", 1)[0] in UNUSED_BY_BUILD or not path.is_file():
            continue
        digest.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    for wheel in sorted((ROOT / "container" / "wheels").glob("*.whl")):
        digest.update(wheel.name.encode())
    return digest.hexdigest()[:16]


@pytest.fixture(scope="module")
def image() -> str:
    """The image for this tree: reused when already built, else built (minutes, cold)."""
    assert ENGINE and shutil.which(ENGINE), "CUSTODIAN_CONTAINER_TESTS=1 needs podman or docker"
    tag = f"localhost/custodian:test-{_context_hash()}"
    if _engine("image", "inspect", tag, check=False).returncode != 0:
        wheels = (
            ["--build-arg", "PIP_INSTALL_ARGS=--no-index"]
            if os.environ.get("CUSTODIAN_CONTAINER_WHEELS")
            else []
        )
        _engine(
            "build",
            "--build-arg",
            f"BASE_IMAGE={BASE_IMAGE}",
            *wheels,
            "-t",
            tag,
            "-f",
            "Containerfile",
            str(ROOT),
            timeout=3600,
        )
    return tag


@pytest.fixture(scope="module")
def database() -> str:
    """A fresh database on the PostgreSQL of DATABASE_URL; its owner's URL."""
    url = os.environ.get("DATABASE_URL", "")
    assert url.startswith("postgres"), "the container test needs DATABASE_URL=postgres://..."
    name = "custodian_container_image"
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        connection.execute(f"CREATE DATABASE {name}")
    return urllib.parse.urlsplit(url)._replace(path=f"/{name}").geturl()


def _compose(service: str) -> tuple[list[str], str]:
    """A compose service's command (defaults filled in) and the database role it connects as."""
    spec = COMPOSE[service]
    command = [re.sub(r"\$\{\w+:-([^}]*)\}", r"\1", part) for part in spec.get("command", [])]
    role = urllib.parse.urlsplit(spec["environment"]["DATABASE_URL"]).username or ""
    return command, role


def _as_role(url: str, role: str) -> str:
    parts = urllib.parse.urlsplit(url)
    return parts._replace(netloc=f"{role}@{parts.netloc.rpartition('@')[2]}").geturl()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Stack:
    """The app's containers on the host network, all started from one image with one environment."""

    def __init__(self, image: str, database: str) -> None:
        self.image, self.database, self.port = image, database, _free_port()
        redis = os.environ.get("REDIS_URL", "")
        assert redis.startswith("redis"), "the container test needs REDIS_URL=redis://..."
        self.env = {
            "DJANGO_SECRET_KEY": secrets.token_urlsafe(50),
            "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
            "REDIS_URL": redis,
            "PORT": str(self.port),
        }
        self.names: list[str] = []
        self.token = ""

    def _env_args(self, database: str) -> list[str]:
        env = {**self.env, "DATABASE_URL": database}
        return [arg for key, value in env.items() for arg in ("--env", f"{key}={value}")]

    def run(self, *command: str, role: str | None = None) -> str:
        """One-shot, as the migrate service does; its output."""
        database = _as_role(self.database, role) if role else self.database
        result = _engine("run", "--rm", "--network", "host", *self._env_args(database), self.image, *command)
        return result.stdout

    def start(self, name: str, role: str, *command: str) -> None:
        database = _as_role(self.database, role)
        self.names.append(name)
        _engine(
            "run",
            "--detach",
            "--name",
            name,
            "--network",
            "host",
            *self._env_args(database),
            self.image,
            *command,
        )

    def logs(self) -> str:
        return "\n".join(
            f"--- {n}\n" + _engine("logs", n, check=False).stdout + _engine("logs", n, check=False).stderr
            for n in self.names
        )

    def stop(self) -> None:
        for name in self.names:
            _engine("rm", "--force", "--time", "10", name, check=False)


@pytest.fixture(scope="module")
def stack(image, database):
    """migrate + setup_db_roles, an agent that may act for Alice, then web and executor running."""
    stack = Stack(image, database)
    stack.run(*_compose("migrate")[0])
    stack.run("python", "manage.py", "create_tenant", "container")
    stack.token = stack.run(
        "python", "manage.py", "create_agent_token", "--tenant", "container", "--agent", "research-agent"
    ).strip()
    stack.run(
        "python",
        "manage.py",
        "grant_delegation",
        "--tenant",
        "container",
        "--agent",
        "research-agent",
        "--subject",
        "user:pm-alice",
    )
    suffix = secrets.token_hex(4)
    try:
        for service in ("web", "executor"):  # as compose.yaml runs them, on the host's services
            command, role = _compose(service)
            stack.start(f"custodian-{service}-{suffix}", role, *command)
        _wait_ready(stack)
        yield stack
    finally:
        stack.stop()


def _wait_ready(stack: Stack) -> None:
    deadline = time.monotonic() + 300
    status = None
    while time.monotonic() < deadline:
        with contextlib.suppress(httpx.HTTPError):
            status = httpx.get(f"http://127.0.0.1:{stack.port}/readyz", headers=PROXY, timeout=10).status_code
            if status == 200:
                return
        time.sleep(1)
    pytest.fail(f"/readyz never answered 200 (last {status}):\n{stack.logs()}")


def test_the_walkthrough_reaches_a_receipt_through_the_containerised_executor(stack):
    headers = {**PROXY, "Authorization": f"Bearer {stack.token}"}
    with httpx.Client(base_url=f"http://127.0.0.1:{stack.port}", headers=headers, timeout=30) as api:
        evidence = api.post(
            "/api/v1/evidence/",
            json={
                "kind": "conversation",
                "external_ref": "chat/alice/42",
                "content": {"text": "Bullet points, please."},
            },
        ).json()
        proposal = api.post(
            "/api/v1/proposals/",
            headers={"Idempotency-Key": f"container-{evidence['evidence_id']}"},
            json={
                "action": "create",
                "memory": {
                    "subject": {"kind": "user", "id": "pm-alice"},
                    "scope": "user",
                    "type": "preference",
                    "content": {
                        "statement": "Alice prefers summaries as bullet points",
                        "preference_key": "summary_format",
                        "preference_value": "bullet_points",
                    },
                },
                "evidence": [
                    {
                        "evidence_id": evidence["evidence_id"],
                        "revision": 1,
                        "content_hash": evidence["content_hash"],
                    }
                ],
                "policy_context": {
                    "acting_for_subject": {"kind": "user", "id": "pm-alice"},
                    "consent_basis": "explicit",
                    "risk_level": "low",
                },
            },
        ).json()
        assert proposal["classification"] == "auto_apply", proposal
        receipts = _receipts(api, proposal["id"])
        assert receipts and receipts[0]["outcome"] == "applied", stack.logs()
        recalled = api.post(
            "/api/v1/recall/search",
            json={
                "query": "bullet points",
                "policy_context": {"acting_for_subject": {"kind": "user", "id": "pm-alice"}},
            },
        ).json()
    assert (
        recalled["results"][0]["memory"]["content"]["statement"] == "Alice prefers summaries as bullet points"
    )
    assert "BROKEN" not in stack.run("python", "manage.py", "verify_receipts")


def _receipts(api: httpx.Client, proposal_id: str) -> list:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        results = api.get("/api/v1/receipts/", params={"proposal": proposal_id}).json()["results"]
        if results:
            return results
        time.sleep(1)
    return []


def test_every_service_process_runs_as_the_unprivileged_user(stack):
    for name in stack.names:
        status = _engine("exec", name, "cat", "/proc/1/status").stdout
        uids = next(line for line in status.splitlines() if line.startswith("Uid:")).split()[1:]
        assert uids and all(uid == "10001" for uid in uids), (name, uids)
    assert _engine("exec", stack.names[0], "python", "--version").stdout.startswith("Python 3.11.")


def test_the_compose_healthcheck_passes_inside_the_web_container(stack):
    kind, check = COMPOSE["web"]["healthcheck"]["test"]
    assert kind == "CMD-SHELL"  # podman-compose 1.0 mangles the CMD list form's quoting
    _engine("exec", stack.names[0], "sh", "-c", check)
