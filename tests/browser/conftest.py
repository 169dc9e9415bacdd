"""Playwright on the Chromium that Debian's ``chromium`` package installs (never ``playwright install``).

Run these tests in their own pytest process with DJANGO_ALLOW_ASYNC_UNSAFE=true
(``make test`` does): the sync Playwright API keeps an event loop in the
main thread, and Django would otherwise refuse ORM calls from the test.
"""

import os
import shutil
from pathlib import Path

import pytest

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    chromium = shutil.which("chromium")
    if chromium is None:
        if os.environ.get("CUSTODIAN_REQUIRE_SERVICES") == "1":
            pytest.fail("chromium is not installed (apt-get install chromium)")
        pytest.skip("chromium is not installed")
    return {**browser_type_launch_args, "executable_path": chromium, "args": CHROMIUM_ARGS}


@pytest.fixture
def artifacts() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


@pytest.fixture
def watched_page(browser):
    """Open pages, each in its own browser context (its own sign-in); fail the test on any console error.

    A console error covers what a person would never see but the issue asks for:
    a CSP refusal, a 404 (the favicon), an uncaught exception in keys.js or htmx.
    """
    errors: list[str] = []
    contexts = []

    def open_page(**options):
        context = browser.new_context(viewport={"width": 1366, "height": 900}, **options)
        contexts.append(context)
        page = context.new_page()
        page.on("console", lambda message: message.type == "error" and errors.append(message.text))
        page.on("pageerror", lambda error: errors.append(f"uncaught: {error}"))
        return page

    yield open_page
    for context in contexts:
        context.close()
    assert errors == [], f"browser console errors: {errors}"
