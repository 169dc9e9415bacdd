"""The documentation cites only files that exist, and speaks to readers, not to a work tracker.

A cited path is an inline code span whose first word looks like a repository path: it has a
``/``, does not start with ``/`` (a URL path such as ``/api/v1/``), ``..`` or a scheme, holds no
placeholder (``<id>``, ``{id}``, ``…``), and either starts with a top-level directory of the
repository (``executor/applying.py``, ``tests/faults/``, ``.ci/run``) or ends in a file
extension the repository uses (so ``proposal/models.py``, a typo, is caught too). A trailing
``:`` (``proposals/models.py: Proposal``) and a ``::test`` suffix are dropped; a ``*`` is a glob
that must match something. Fenced code blocks are not read: they hold commands, not citations.
"""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").rglob("*.md"))
CITING = ["README.md", "bench/README.md", *PAGES]
# Read for wording only: the dated record keeps the paths that were true when it was written.
WORDING_ONLY = ["bench/HISTORY.md"]
EXTENSIONS = (".py", ".md", ".toml", ".yml", ".yaml", ".txt", ".json", ".jsonl", ".js", ".html", ".cfg")
# Made by running things, never committed: a fresh clone has none of them.
GENERATED = ("var/", "bench/results/logs/", "test-artifacts/", "staticfiles/")

FENCE = re.compile(r"^```.*?^```", re.M | re.S)
CODE_SPAN = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
ISSUE_WORDING = re.compile(
    r"\bissues? ?#?\d+"  # "issue 16", "issue #16"
    r"|(?<![\w&/#])#\d+\b"  # "#16" in prose (not an anchor, an entity or "#a..#b")
    r"|\b(?:this|last|next) (?:session|round)\b|\bhelper (?:session|branch)",
    re.I,
)


def _top_level_dirs(root: Path) -> set[str]:
    return {p.name for p in root.iterdir() if p.is_dir() and p.name not in {".git", ".venv"}}


def cited_paths(text: str, top_level: set[str]) -> list[str]:
    """Return the repository paths a markdown text cites in inline code, in order."""
    found = []
    for span in CODE_SPAN.findall(FENCE.sub("", text)):
        word = span.split()[0] if span.split() else ""
        word = word.split("::", 1)[0].rstrip(":,;.)")
        if "/" not in word or word.startswith(("/", "..")) or "://" in word:
            continue
        if any(mark in word for mark in "<>{}…|$="):
            continue
        first = word.split("/", 1)[0]
        if first in top_level or (not first.startswith(".") and word.endswith(EXTENSIONS)):
            found.append(word)
    return found


def missing_paths(text: str, root: Path) -> list[str]:
    """Return the cited paths that do not exist under ``root``."""
    missing = []
    for path in cited_paths(text, _top_level_dirs(root)):
        if path.startswith(GENERATED):
            continue
        exists = any(root.glob(path)) if "*" in path else (root / path).exists()
        if not exists:
            missing.append(path)
    return missing


def work_tracker_wording(text: str) -> list[str]:
    """Return each line that speaks of issue numbers or work sessions rather than of Custodian."""
    return [line.strip() for line in text.splitlines() if ISSUE_WORDING.search(line)]


def test_the_extractor_finds_paths_and_leaves_the_rest(tmp_path):
    for folder in ("executor", "tests/faults", "proposals"):
        (tmp_path / folder).mkdir(parents=True)
    (tmp_path / "executor" / "applying.py").write_text("")
    (tmp_path / "proposals" / "models.py").write_text("")
    text = (
        "Applying is `executor/applying.py`, faults in `tests/faults/`, the model "
        "`proposals/models.py: Proposal`, a test `executor/applying.py::test_x`.\n"
        "Not paths: `/api/v1/proposals/`, `core.canonical`, `GET /review/`, `{id}/x.py`, "
        "`http://a/b.py`, `.vscode/mcp.json`, `../shared/mgp/run`.\n"
        "Broken: `executor/records_gone.py`, `proposal/models.py`.\n"
        "```sh\npython executor/not_read.py\n```\n"
    )
    assert cited_paths(text, _top_level_dirs(tmp_path)) == [
        "executor/applying.py",
        "tests/faults/",
        "proposals/models.py",
        "executor/applying.py",
        "executor/records_gone.py",
        "proposal/models.py",
    ]
    assert missing_paths(text, tmp_path) == ["executor/records_gone.py", "proposal/models.py"]


def test_the_wording_check_catches_issue_numbers_and_sessions():
    lines = "As issue 16 says.\nSee #42.\nMeasured this session.\nRule #N, `docs/x.md#anchor`, #a..#b.\n"
    assert work_tracker_wording(lines) == ["As issue 16 says.", "See #42.", "Measured this session."]


@pytest.mark.parametrize("document", CITING)
def test_every_path_the_documentation_cites_exists(document):
    assert missing_paths((ROOT / document).read_text(), ROOT) == []


@pytest.mark.parametrize("document", CITING + WORDING_ONLY)
def test_the_documentation_names_no_issue_numbers_or_work_sessions(document):
    assert work_tracker_wording((ROOT / document).read_text()) == []


def test_the_readme_stays_a_front_page():
    assert len((ROOT / "README.md").read_text().splitlines()) <= 300
