"""A web worker keeps what it loads at start-up out of the garbage collector's full passes.

A full pass walks every tracked object; over Django, the apps and the lemma tables that is
about 175,000 of them, a pause of the order of 90 ms in whichever request triggers it.
"""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
REPORT = "import gc, config.wsgi; print(gc.get_freeze_count(), len(gc.get_objects()))"


def test_the_wsgi_application_freezes_what_it_loaded():
    done = subprocess.run(
        [sys.executable, "-c", REPORT], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    frozen, tracked = (int(number) for number in done.stdout.split()[-2:])
    assert frozen > 50_000, done.stdout  # Django, the apps and the lemma tables
    assert tracked < frozen / 10, done.stdout  # a full pass now walks only what came after
