"""What a test needs from its surroundings, and what happens when it is missing.

A test whose prerequisite is missing (the shared reference data, an optional extra, a system
binary) is skipped in a partial checkout, with a message saying what to install or set; with
``CI=true``, where ``scripts/test`` has installed everything, it fails instead, so a reference
test never passes by silently not running. The only skips allowed there are tests marked
``external``: they need a service the tests cannot start (a real Elasticsearch or OpenSearch
cluster, RANKSCOPE_ES_URL / RANKSCOPE_OPENSEARCH_URL); tests/conftest.py turns any other skip
into a failure under ``CI=true``.

The reference data (trec_eval's test files, Cranfield, Sakai's table, the hostile strings) is
in the repository's ``data/`` (each folder with its provenance and license), or in
``$RANKSCOPE_SHARED_DATA`` when that is set: use :func:`shared_data`, never a path of your own.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import NoReturn

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]


def in_ci() -> bool:
    """``CI`` is set to something other than empty, 0, false or no."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def missing(reason: str) -> NoReturn:
    """Skip for a missing prerequisite; fail under ``CI=true``."""
    if in_ci():
        pytest.fail(f"{reason} (CI=true: every prerequisite must be present)", pytrace=False)
    pytest.skip(reason)


#: the reference data kept in the repository (data/README.md)
REPO_DATA = REPO_ROOT / "data"


def shared_data_root() -> Path:
    """``$RANKSCOPE_SHARED_DATA`` if set, else the repository's ``data/``."""
    env = os.environ.get("RANKSCOPE_SHARED_DATA")
    return Path(env) if env else REPO_DATA


def shared_data(*parts: str) -> Path:
    """``<shared data>/<parts>``, which must exist (else :func:`missing`)."""
    path = shared_data_root().joinpath(*parts)
    if not path.exists():
        missing(
            f"reference data not found: {path} (the repository's data/ holds it; "
            "RANKSCOPE_SHARED_DATA, when set, must point at a folder with the same layout)"
        )
    return path


def run_slow(what: str) -> None:
    """The slow quality tests run with ``RANKSCOPE_RUN_SLOW=1`` (``scripts/test`` sets it) and
    always under ``CI=true``; elsewhere they are skipped."""
    if os.environ.get("RANKSCOPE_RUN_SLOW") != "1" and not in_ci():
        pytest.skip(f"{what}; set RANKSCOPE_RUN_SLOW=1 to run")
