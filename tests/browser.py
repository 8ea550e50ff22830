"""Headless Chromium for the page tests: Debian's ``chromium`` driven by Playwright with the
system executable (a browser download fails here). The ``browser`` fixture (tests/conftest.py)
launches one per test module."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
#: RANKSCOPE_DOCS_SCREENSHOTS=docs/img writes the documentation's screenshots there too
DOCS_SHOTS = os.environ.get("RANKSCOPE_DOCS_SCREENSHOTS")


@contextmanager
def launch() -> Iterator[Any]:
    """A launched Chromium (a skip, which fails under CI=true, when it is not installed)."""
    executable = CHROMIUM if Path(CHROMIUM).exists() else shutil.which("chromium")
    if executable is None:
        pytest.skip("Debian's chromium is not installed (scripts/install-system-deps installs it)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright")
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, args=ARGS)
        try:
            yield launched
        finally:
            launched.close()


def copy_to_docs(shot: Path, name: str | None = None) -> None:
    """Copy a screenshot into RANKSCOPE_DOCS_SCREENSHOTS, when it is set."""
    if DOCS_SHOTS:
        Path(DOCS_SHOTS).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shot, Path(DOCS_SHOTS) / (name or shot.name))
