"""The command line of an executor worker process, for the tests, the fault tests and the benchmark.

Plain Python, no Django: ``bench.stack`` builds it before settings are configured.
"""

import sys
from pathlib import Path


def worker_command(
    *, name: str, concurrency: int, beat_schedule: Path | None = None, queues: tuple[str, ...] = ("executor",)
) -> list[str]:
    """Return ``celery worker`` on ``queues`` as ``name``; with embedded beat if ``beat_schedule``."""
    command = [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "config",
        "worker",
        "-Q",
        ",".join(queues),
        "-c",
        str(concurrency),
        "--without-gossip",
        "--without-mingle",
        "--without-heartbeat",
        "-n",
        name,
        "-l",
        "INFO",
    ]
    if beat_schedule is not None:
        command += ["-B", "-s", str(beat_schedule)]
    return command
