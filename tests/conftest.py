"""Session-wide fixtures: one throwaway PostgreSQL cluster for the whole test session, and the
rule that nothing skips under ``CI=true``.

``postgres_dsn`` starts a cluster (initdb into a temporary folder, unix socket only, fsync off)
the first time a test asks for it and deletes it at the end of the session. Set
``RANKSCOPE_TEST_PG_DSN`` to use an existing server instead. Without PostgreSQL binaries the
tests that need it are skipped with a message saying how to install them.

With ``CI=true`` a skip is a failure (``scripts/test`` installs every prerequisite, so a skip
there means a reference test did not run), except in tests marked ``external``, which need a
service the tests cannot start (tests/prerequisites.py). The end of the run says so.

No process outlives the run: every process it starts carries a mark in its environment, and a
run that ends with a marked process (or a child of pytest) still running fails, naming it
(tests/processes.py).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import settings

import browser as browsers
import processes
from prerequisites import in_ci, shared_data_root
from rankscope.testing.pgcluster import INSTALL_HINT, PgCluster, PgClusterError, find_bindir

#: how long processes still running at the end of the session get to exit before they fail it
LEFTOVER_GRACE_S = 5.0

# Generated examples are the same on every run (a seed per test), so the suite passes or fails
# the same way in CI; RANKSCOPE_HYPOTHESIS=explore draws new examples on each run.
settings.register_profile("repeatable", derandomize=True, database=None)
settings.register_profile("explore")
settings.load_profile(os.environ.get("RANKSCOPE_HYPOTHESIS", "repeatable"))

PG_DSN_ENV = "RANKSCOPE_TEST_PG_DSN"
PGVECTOR_HINT = (
    "pgvector is not installed for this PostgreSQL server; run scripts/install-system-deps as "
    "root (it builds Debian's pgvector source package) or install postgresql-<version>-pgvector"
)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Headless Chromium for a test module's pages (tests/browser.py)."""
    with browsers.launch() as launched:
        yield launched


@pytest.fixture(scope="session")
def postgres_dsn() -> Iterator[str]:
    """DSN of a PostgreSQL database that tests may fill freely (tables are theirs to name)."""
    existing = os.environ.get(PG_DSN_ENV)
    if existing:
        yield existing
        return
    if find_bindir() is None:
        pytest.skip(f"PostgreSQL server binaries not found: {INSTALL_HINT}")
    try:
        cluster = PgCluster.start()
    except PgClusterError as exc:
        pytest.skip(f"cannot start a throwaway PostgreSQL cluster: {exc}")
    try:
        yield cluster.create_database("rankscope_test")
    finally:
        cluster.stop()


@pytest.fixture(scope="session")
def pgvector_dsn(postgres_dsn: str) -> str:
    """The same database with the pgvector extension created; skips when it is not installed."""
    psycopg = pytest.importorskip("psycopg", reason="psycopg missing: pip install 'rankscope[pg]'")
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        row = conn.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'")
        if row.fetchone() is None:
            pytest.skip(PGVECTOR_HINT)
        try:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        except psycopg.Error as exc:  # e.g. RANKSCOPE_TEST_PG_DSN without superuser rights
            pytest.skip(f"cannot create the pgvector extension: {exc}")
    return postgres_dsn


# ----------------------------------------------------------------- no skip under CI=true

_CI_NOTE = "skipped under CI=true, where every prerequisite is installed"


def _skip_reason(report: pytest.TestReport | pytest.CollectReport) -> str:
    longrepr = report.longrepr
    return str(longrepr[2]) if isinstance(longrepr, tuple) else str(longrepr)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report: pytest.TestReport = outcome.get_result()  # type: ignore[attr-defined]
    longrepr = report.longrepr
    if report.skipped and isinstance(longrepr, tuple) and longrepr[0].endswith("prerequisites.py"):
        # a skip raised by a helper of tests/prerequisites.py is reported at the test
        path, line = item.reportinfo()[:2]
        report.longrepr = (os.fspath(path), (line or 0) + 1, longrepr[2])
    if (
        in_ci()
        and report.skipped
        and not hasattr(report, "wasxfail")
        and item.get_closest_marker("external") is None
    ):
        report.outcome = "failed"
        report.longrepr = f"{_CI_NOTE}: {_skip_reason(report)}"


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Iterator[None]:
    outcome = yield
    report: pytest.CollectReport = outcome.get_result()  # type: ignore[attr-defined]
    if in_ci() and report.skipped:  # a module-level skip (importorskip, skip(allow_module_level))
        report.outcome = "failed"
        report.longrepr = f"{_CI_NOTE}: {_skip_reason(report)}"


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    skipped = len(terminalreporter.stats.get("skipped", []))
    deselected = len(terminalreporter.stats.get("deselected", []))
    where = (
        "CI=true: only tests marked external (a real Elasticsearch/OpenSearch cluster, "
        "RANKSCOPE_ES_URL / RANKSCOPE_OPENSEARCH_URL) may skip"
        if in_ci()
        else f"not CI: a missing prerequisite skips (shared data: {shared_data_root()})"
    )
    terminalreporter.write_sep("-", "skips")
    terminalreporter.write_line(
        f"{skipped} skipped, {deselected} deselected (engine capabilities and -k/-m); {where}"
    )


# ----------------------------------------------------------------- no process left behind


def pytest_configure(config: pytest.Config) -> None:
    # every process the run starts inherits the mark (tests/processes.py), orphans too
    os.environ.setdefault(processes.MARK, f"{os.getpid()}-{time.time_ns()}")


@pytest.hookimpl(trylast=True)  # after the session fixtures (the PostgreSQL cluster) stopped
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    mark = os.environ.get(processes.MARK, "")
    left = processes.wait_for_no_leftovers(mark, parent=os.getpid(), timeout_s=LEFTOVER_GRACE_S)
    if not left:
        return
    processes.stop(left)
    lines = [f"{len(left)} process(es) started by the tests still ran at the end (now stopped):"]
    lines += [f"  {p}" for p in left]
    lines.append("every test that starts a process must stop it, also when it fails")
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_sep("=", "processes left running", red=True)
        for line in lines:
            reporter.write_line(line)
    else:  # pragma: no cover - run without the terminal reporter
        print("\n".join(lines))
    session.exitstatus = pytest.ExitCode.TESTS_FAILED
