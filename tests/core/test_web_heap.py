"""A web worker keeps what it loads at start-up out of the garbage collector's passes.

A full pass walks every tracked object; over Django, the apps and the lemma tables that is
about 175,000 of them, a pause of the order of 90 ms in whichever request triggers it. A search
frees nearly all it allocates by reference counting, so the young generation need not be walked
several times in each.
"""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
REPORT = "import gc, config.wsgi; print(gc.get_threshold()[0], gc.get_freeze_count(), len(gc.get_objects()))"


@pytest.fixture(scope="module")
def heap() -> tuple[int, int, int]:
    """A freshly imported web worker's young-generation threshold, frozen and tracked objects."""
    done = subprocess.run(
        [sys.executable, "-c", REPORT], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    young, frozen, tracked = (int(number) for number in done.stdout.split()[-3:])
    return young, frozen, tracked


def test_the_wsgi_application_freezes_what_it_loaded(heap):
    _, frozen, tracked = heap
    assert frozen > 50_000  # Django, the apps and the lemma tables
    assert tracked < frozen / 10  # a full pass now walks only what came after


def test_the_young_generation_is_walked_once_in_many_searches_not_several_times_in_each(heap):
    young, _, _ = heap
    assert young >= 10_000  # the default is 700
