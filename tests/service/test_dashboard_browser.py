"""The dashboard in headless Chromium (Debian's ``chromium``, driven by Playwright with the system
executable; no browser download) against a live ``rankscope serve`` on 127.0.0.1 with seeded
records: sign in, change filters, open a query; every number the page shows equals the API's,
no request leaves 127.0.0.1, and one user's page never shows another's queries."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from dashboard_seed import seed

from serve_helpers import METRICS, bearer, free_port, make_keys, wait_ready

pytestmark = pytest.mark.slow

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
# RANKSCOPE_DOCS_SCREENSHOTS=docs/img writes the documentation's screenshots there too
DOCS_SHOTS = os.environ.get("RANKSCOPE_DOCS_SCREENSHOTS")


@dataclass
class Live:
    url: str
    keys: dict[str, str]
    shots: Path

    def api(self, user: str, path: str, **params: Any) -> Any:
        response = httpx.get(
            self.url + path, params=params, headers=bearer(self.keys[user]), timeout=30
        )
        response.raise_for_status()
        return response.json()["data"]


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    folder = tmp_path_factory.mktemp("dashboard")
    db_url = f"sqlite:///{folder / 'metrics.sqlite'}"
    keys = make_keys(db_url)
    from rankscope.service.store.db import make_engine
    from rankscope.service.store.repository import create_key

    engine = make_engine(db_url, pool_size=1)
    carol = create_key(engine, "carol")[0]  # a user with no records
    engine.dispose()
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {**os.environ, "RANKSCOPE_SERVE_LOG_LEVEL": "warning"}
    server = subprocess.Popen(
        [sys.executable, "-m", "rankscope.cli.app", "serve", "-d", db_url, "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_ready(url)
        seed(url, keys.service)
        shots = folder / "screenshots"
        shots.mkdir()
        yield Live(
            url,
            {"alice": keys.alice, "bob": keys.bob, "svc": keys.service, "carol": carol},
            shots,
        )
    finally:
        server.terminate()
        server.wait(timeout=30)


@dataclass
class Tab:
    page: Any
    live: Live
    requests: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def login(self, user: str) -> None:
        self.page.goto(self.live.url + "/dashboard")
        self.page.fill("#token", self.live.keys[user])
        self.page.click("#login-submit")
        self.wait_refresh(0)

    def refreshes(self) -> int:
        return int(self.page.evaluate("() => Number(document.body.dataset.refreshes || 0)"))

    def wait_refresh(self, before: int) -> None:
        self.page.wait_for_function(
            f"() => Number(document.body.dataset.refreshes || 0) > {before}"
            " && document.body.dataset.loading === 'false'",
            timeout=30_000,
        )

    def choose(self, name: str, value: str) -> None:
        before = self.refreshes()
        self.page.select_option(f'#filters [data-filter="{name}"]', value)
        self.wait_refresh(before)

    def fill_date(self, name: str, value: str) -> None:
        before = self.refreshes()
        self.page.fill(f'#filters [data-filter="{name}"]', value)
        self.wait_refresh(before)

    def attrs(self, selector: str, *names: str) -> list[dict[str, str]]:
        found: list[dict[str, str]] = self.page.eval_on_selector_all(
            selector,
            "(els, names) => els.map(e => Object.fromEntries("
            "names.map(n => [n, e.getAttribute(n)])))",
            list(names),
        )
        return found

    def shot(self, name: str, *, docs: bool = False) -> Path:
        path = self.live.shots / f"{name}.png"
        self.page.screenshot(path=str(path))
        assert path.stat().st_size > 10_000  # something was drawn
        if docs and DOCS_SHOTS:
            Path(DOCS_SHOTS).mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, Path(DOCS_SHOTS) / path.name)
        return path


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
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


@pytest.fixture
def tab(browser: Any, live: Live) -> Iterator[Tab]:
    """A fresh browser context (its own sessionStorage) on a 1280x860 page."""
    context = browser.new_context(viewport={"width": 1280, "height": 860})
    page = context.new_page()
    opened = Tab(page, live)
    page.on("request", lambda request: opened.requests.append(request.url))
    page.on("pageerror", lambda error: opened.errors.append(str(error)))
    try:
        yield opened
    finally:
        context.close()
    assert opened.errors == []  # no script error on any page
    local = re.compile(rf"^{re.escape(live.url)}/|^data:|^blob:")
    assert [u for u in opened.requests if not local.match(u)] == []


def test_login_overview_equals_the_api(tab: Tab) -> None:
    tab.page.goto(tab.live.url + "/dashboard")
    assert tab.page.is_visible("#login-form")
    tab.shot("login")
    tab.login("alice")
    assert tab.page.text_content("#identity") == "alice"
    assert tab.page.is_hidden("#user-pick")  # only the service role picks a user
    api = tab.live.api("alice", f"{METRICS}/summary")
    groups = api["byJudgmentSource"]
    for kind in ("judged", "heuristic"):
        (card,) = tab.attrs(f'#panel-overview .kpi[data-kind="{kind}"]', "data-value", "data-n")
        assert int(card["data-n"]) == groups[kind]["count"] > 0
        assert float(card["data-value"]) == groups[kind]["ndcg"]["mean"]
        shown = tab.page.text_content(f'#panel-overview .kpi[data-kind="{kind}"] .kpi-value')
        assert shown == f"{groups[kind]['ndcg']['mean']:.4f}"
        sub = tab.page.text_content(f'#panel-overview .kpi[data-kind="{kind}"] .kpi-sub') or ""
        low, high = groups[kind]["ndcg"]["low"], groups[kind]["ndcg"]["high"]
        assert f"[{low:.4f}, {high:.4f}]" in sub and f"n = {groups[kind]['count']}" in sub
    (zero,) = tab.attrs("#panel-overview .kpi-zero", "data-zero", "data-n")
    assert int(zero["data-zero"]) == sum(g["zeroResults"] for g in groups.values()) > 0
    assert int(zero["data-n"]) == sum(g["count"] for g in groups.values())
    tab.shot("dashboard", docs=True)


def test_timeseries_and_breakdown_equal_the_api(tab: Tab) -> None:
    tab.login("alice")
    points = tab.live.api("alice", f"{METRICS}/timeseries", bucket="day")["points"]
    rows = tab.attrs(
        "#panel-timeseries tr[data-start]",
        "data-start",
        "data-kind",
        "data-n",
        "data-value",
        "data-low",
        "data-high",
    )
    assert len(rows) == len(points) > 10  # both kinds, ten days
    judged_first = sorted(points, key=lambda p: p["judgmentSource"] != "judged")
    for row, point in zip(rows, judged_first, strict=True):
        assert row["data-kind"] == point["judgmentSource"]
        assert row["data-start"] == point["start"]
        ndcg = point["stats"]["ndcg"]
        assert int(row["data-n"]) == point["stats"]["count"]
        assert float(row["data-value"]) == ndcg["mean"]
        assert row["data-low"] == ("" if ndcg["low"] is None else repr_js(ndcg["low"]))
        assert row["data-high"] == ("" if ndcg["high"] is None else repr_js(ndcg["high"]))
    # one chart per kind, each a canvas drawn by uPlot
    assert tab.page.locator("#panel-timeseries figure.chart canvas").count() == 2
    for by in ("topic", "searchType"):
        groups = tab.live.api("alice", f"{METRICS}/breakdown", by=by)["groups"]
        cells = tab.attrs(f"#panel-breakdown-{by} td[data-value]", "data-kind", "data-value")
        counts = tab.attrs(f"#panel-breakdown-{by} td[data-n]", "data-kind", "data-n")
        keys = tab.attrs(f"#panel-breakdown-{by} tr[data-key]", "data-key")
        expected = {(g["key"] or "", g["judgmentSource"]): g["stats"] for g in groups}
        shown = {}
        n_cells = iter(counts)
        v_cells = iter(cells)
        for key in keys:
            for kind in ("judged", "heuristic"):
                n = next(n_cells)
                assert n["data-kind"] == kind
                if int(n["data-n"]) == 0:
                    continue
                value = next(v_cells)
                shown[(key["data-key"], kind)] = (int(n["data-n"]), float(value["data-value"]))
        assert shown == {k: (s["count"], s["ndcg"]["mean"]) for k, s in expected.items()}
    # the zero-result panel: empty lists over all rows, per day
    zero = tab.attrs("#panel-zero-results tr[data-start]", "data-start", "data-zero", "data-n")
    per_day: dict[str, list[int]] = {}
    for p in points:
        acc = per_day.setdefault(p["start"], [0, 0])
        acc[0] += p["stats"]["zeroResults"]
        acc[1] += p["stats"]["count"]
    assert {z["data-start"]: [int(z["data-zero"]), int(z["data-n"])] for z in zero} == per_day


def repr_js(value: float) -> str:
    """How JavaScript writes a number (shortest round trip, like Python's repr, no '.0')."""
    text = repr(value)
    return text[:-2] if text.endswith(".0") else text


def test_filters_drive_every_panel(tab: Tab) -> None:
    tab.login("alice")
    tab.choose("measure", "averagePrecision")
    tab.choose("topicId", "billing")
    tab.fill_date("startDate", "2024-05-03")
    tab.fill_date("endDate", "2024-05-08")
    assert "topicId=billing" in tab.page.url and "startDate=2024-05-03" in tab.page.url
    params = {"topicId": "billing", "startDate": "2024-05-03", "endDate": "2024-05-08"}
    groups = tab.live.api("alice", f"{METRICS}/summary", **params)["byJudgmentSource"]
    (card,) = tab.attrs('#panel-overview .kpi[data-kind="judged"]', "data-value", "data-n")
    assert float(card["data-value"]) == groups["judged"]["averagePrecision"]["mean"]
    assert int(card["data-n"]) == groups["judged"]["count"]
    points = tab.live.api("alice", f"{METRICS}/timeseries", **params)["points"]
    shown = tab.attrs("#panel-timeseries tr[data-start]", "data-start", "data-value")
    assert {r["data-start"] for r in shown} == {p["start"] for p in points}
    assert all("2024-05-03" <= p["start"][:10] <= "2024-05-08" for p in points)
    # only the topic chosen in the per-topic table
    topics = tab.attrs("#panel-breakdown-topic tr[data-key]", "data-key")
    assert [r["data-key"] for r in topics] == ["billing"]
    worst = tab.live.api(
        "alice", METRICS, **params, judgmentSource="judged", sort="averagePrecision", limit=25
    )["queries"]
    rows = tab.attrs("#worst-judged tr[data-id]", "data-id", "data-value")
    assert [r["data-id"] for r in rows] == [q["id"] for q in worst]
    assert [float(r["data-value"]) for r in rows] == [q["averagePrecision"] for q in worst]
    tab.shot("filtered")
    # heuristic only: one kind everywhere
    tab.choose("judgmentSource", "heuristic")
    assert tab.page.locator("#panel-timeseries figure.chart").count() == 1
    assert tab.attrs("#panel-timeseries figure.chart", "data-kind") == [{"data-kind": "heuristic"}]
    assert tab.page.locator("#worst-judged").count() == 0
    heuristic = tab.live.api(
        "alice", METRICS, **params, judgmentSource="heuristic", sort="averagePrecision", limit=25
    )["queries"]
    ids = [r["data-id"] for r in tab.attrs("#worst-heuristic tr[data-id]", "data-id")]
    assert ids == [q["id"] for q in heuristic]
    # a selection with nothing in it says so
    tab.fill_date("endDate", "2030-01-02")
    tab.fill_date("startDate", "2030-01-01")
    assert tab.page.get_attribute("#panel-overview", "data-state") == "empty"
    assert "widen the dates" in (tab.page.text_content("#panel-overview") or "")


def test_drilldown_shows_the_ranked_list(tab: Tab) -> None:
    tab.login("alice")
    tab.page.click('#panel-worst [role="tab"][data-kind="heuristic"]')
    first = tab.page.get_attribute("#worst-heuristic tr[data-id]", "data-id")
    tab.page.click(f'#worst-heuristic button[data-open="{first}"]')
    tab.page.wait_for_selector("#drilldown[data-state='ready']")
    record = tab.live.api("alice", f"{METRICS}/{first}")
    assert tab.page.text_content("#dd-body .dd-query") == record["query"]
    rows = tab.attrs(
        "#dd-body table.ranked tr[data-doc]", "data-doc", "data-position", "data-score"
    )
    assert [(r["data-doc"], int(r["data-position"]), float(r["data-score"])) for r in rows] == [
        (d["documentId"], d["position"], d["score"]) for d in record["rankedList"]
    ]
    for measure in ("ndcg", "averagePrecision", "meanReciprocalRank", "precision", "recall"):
        (cell,) = tab.attrs(f'#dd-body [data-measure="{measure}"]', "data-value")
        assert float(cell["data-value"]) == record[measure]
    assert "heuristic" in (tab.page.text_content("#dd-body dl.meta") or "")
    tab.shot("drilldown", docs=True)
    tab.page.click("#dd-close")
    assert not tab.page.evaluate("() => document.getElementById('drilldown').open")
    # the record given feedback shows its judgments and where they came from
    tab.choose("judgmentSource", "feedback")
    (row,) = tab.attrs("#worst-judged tr[data-id]", "data-id")
    tab.page.click(f'#worst-judged button[data-open="{row["data-id"]}"]')
    tab.page.wait_for_selector(f"#drilldown[data-id='{row['data-id']}'][data-state='ready']")
    text = tab.page.text_content("#dd-body") or ""
    assert "judgments replaced later" in text
    assert "alice-doc-1 · grade 2" in text or "alice-doc-1" in str(
        tab.attrs("#dd-body tr.relevant", "data-doc")
    )


def test_judging_a_query_sends_feedback(tab: Tab) -> None:
    """Grades set in the drill-down become the record's judgments (source feedback), its
    measures are recomputed by the service, and every panel shows the new numbers. (Bob's
    records: no other test counts his feedback.)"""
    tab.login("bob")
    before = tab.live.api("bob", f"{METRICS}/summary")["byJudgmentSource"]
    tab.page.click('#panel-worst [role="tab"][data-kind="heuristic"]')
    row = tab.attrs("#worst-heuristic tr[data-id]", "data-id")[0]["data-id"]
    record = tab.live.api("bob", f"{METRICS}/{row}")
    assert record["judgmentSource"] == "heuristic" and record["rankedList"]
    tab.page.click(f'#worst-heuristic button[data-open="{row}"]')
    tab.page.wait_for_selector("#drilldown[data-state='ready']")
    tab.page.click("#judge-open")
    tab.page.wait_for_selector("#drilldown[data-state='judging']")
    docs = list(dict.fromkeys(d["documentId"] for d in record["rankedList"]))
    # the heuristic's guesses are not offered as judgments: every grade starts at 0
    grades = tab.page.eval_on_selector_all("#judge-form select", "els => els.map(e => e.value)")
    assert grades == ["0"] * len(docs)
    tab.page.select_option(f'#judge-form select[data-doc="{docs[-1]}"]', "2")
    refreshes = tab.refreshes()
    tab.shot("judging")
    tab.page.click("#judge-save")
    tab.page.wait_for_selector("#drilldown[data-state='ready'][data-source='feedback']")
    tab.wait_refresh(refreshes)
    stored = tab.live.api("bob", f"{METRICS}/{row}")
    assert stored["judgmentSource"] == "feedback"
    assert stored["judgments"] == {d: (2 if d == docs[-1] else 0) for d in docs}
    assert stored["relevantRetrieved"] == 1 and stored["ndcg"] > 0
    (cell,) = tab.attrs('#dd-body [data-measure="ndcg"]', "data-value")
    assert float(cell["data-value"]) == stored["ndcg"]
    after = tab.live.api("bob", f"{METRICS}/summary")["byJudgmentSource"]
    assert after["judged"]["count"] == before["judged"]["count"] + 1
    assert after["heuristic"]["count"] == before["heuristic"]["count"] - 1
    tab.page.click("#dd-close")
    (card,) = tab.attrs('#panel-overview .kpi[data-kind="judged"]', "data-value", "data-n")
    assert int(card["data-n"]) == after["judged"]["count"]
    assert float(card["data-value"]) == after["judged"]["ndcg"]["mean"]


def test_users_never_see_each_other(browser: Any, live: Live) -> None:
    for user, other in (("alice", "bob"), ("bob", "alice")):
        context = browser.new_context(viewport={"width": 1280, "height": 860})
        page = context.new_page()
        answers: list[str] = []
        page.on(
            "response",
            lambda r, seen=answers: seen.append(r.text()) if "/api/" in r.url else None,
        )
        tab = Tab(page, live)
        tab.login(user)
        page.click('#panel-worst [role="tab"][data-kind="heuristic"]')
        page.click("#worst-heuristic button[data-open]")
        page.wait_for_selector("#drilldown[data-state='ready']")
        text = page.evaluate("() => document.body.innerText")
        assert f"{user} question" in text
        assert other not in text
        assert all(other not in body for body in answers)
        mine = live.api(user, METRICS, limit=1000)["queries"]
        shown = {r["data-id"] for r in tab.attrs("tr[data-id]", "data-id")}
        assert shown and shown <= {q["id"] for q in mine}
        context.close()


def test_service_role_picks_a_user(tab: Tab) -> None:
    tab.login("svc")
    assert tab.page.text_content("#identity") == "svc · service role"
    assert tab.page.is_visible("#user-pick")
    options = tab.page.eval_on_selector_all("#user-select option", "els => els.map(e => e.value)")
    assert options == ["", "alice", "bob"]
    every = tab.live.api("svc", f"{METRICS}/summary")["byJudgmentSource"]
    (card,) = tab.attrs('#panel-overview .kpi[data-kind="judged"]', "data-n")
    assert int(card["data-n"]) == every["judged"]["count"]
    before = tab.refreshes()
    tab.page.select_option("#user-select", "bob")
    tab.wait_refresh(before)
    bob = tab.live.api("svc", f"{METRICS}/summary", userId="bob")["byJudgmentSource"]
    (card,) = tab.attrs('#panel-overview .kpi[data-kind="judged"]', "data-n", "data-value")
    assert int(card["data-n"]) == bob["judged"]["count"]
    assert float(card["data-value"]) == bob["judged"]["ndcg"]["mean"]
    users = {r["data-user"] for r in tab.attrs("#panel-worst tr[data-id]", "data-user")}
    assert users == {"bob"}
    tab.shot("service-role")


LATER = ("/api/events/summary", "/api/metrics/retrieval/compare", "/api/alerts")


def _announce(tab: Tab, paths: tuple[str, ...]) -> None:
    """The server's OpenAPI document, as read by the page, with ``paths`` added."""

    def patched(route: Any) -> None:
        document = route.fetch().json()
        document["paths"].update({p: {"get": {}} for p in paths})
        route.fulfill(status=200, content_type="application/json", body=json.dumps(document))

    tab.page.route(f"{tab.live.url}/openapi.json", patched)


def test_panels_without_endpoints_hide(tab: Tab) -> None:
    """Events, A/B comparison and alerts wait for their endpoints: this server lacks them (its
    OpenAPI document does not list them), so they are hidden and never called."""
    tab.login("alice")
    for panel in ("events", "compare", "alerts"):
        assert tab.page.get_attribute(f"#panel-{panel}", "data-state") == "unavailable"
        assert tab.page.is_hidden(f"#panel-{panel}")
    assert not [u for u in tab.requests if any(p in u for p in LATER)]


def test_panels_hide_on_404(tab: Tab) -> None:
    """Listed but missing on the real server (404; 422 for .../compare, which the record route
    takes for an id): hidden too, no error shown."""
    _announce(tab, LATER)
    tab.login("alice")
    for panel, path in zip(("events", "compare", "alerts"), LATER, strict=True):
        assert any(path in u for u in tab.requests)
        assert tab.page.get_attribute(f"#panel-{panel}", "data-state") == "unavailable"
        assert tab.page.is_hidden(f"#panel-{panel}")


def test_panels_for_events_compare_alerts_render_their_contract(tab: Tab) -> None:
    """With the endpoints answering the documented shapes (docs/service.md), the panels show."""
    payloads = {
        "/api/events/summary": {
            "impressions": 1200,
            "clicks": 300,
            "ctr": 0.25,
            "meanClickPosition": 2.4,
        },
        "/api/metrics/retrieval/compare": {
            "arms": ["control", "reranker"],
            "judgmentSource": "judged",
            "measures": [
                {
                    "measure": "ndcg",
                    "n": 111,
                    "a": {"mean": 0.3, "low": 0.25, "high": 0.35, "count": 55},
                    "b": {"mean": 0.36, "low": 0.3, "high": 0.42, "count": 56},
                    "difference": {"mean": 0.06, "low": -0.02, "high": 0.14},
                    "test": "welch",
                    "pValue": 0.14,
                    "winner": None,
                    "reason": "interval includes 0",
                }
            ],
        },
        "/api/alerts": {
            "alerts": [
                {
                    "id": "al-1",
                    "createdAt": "2024-05-09T00:00:00Z",
                    "userId": "alice",
                    "topicId": "billing",
                    "searchType": None,
                    "measure": "ndcg",
                    "baseline": {"mean": 0.4, "count": 80},
                    "current": {"mean": 0.25, "count": 40},
                    "difference": {"mean": -0.15, "low": -0.24, "high": -0.06},
                    "status": "open",
                    "message": "nDCG fell",
                }
            ]
        },
    }

    def answer(route: Any) -> None:
        path = route.request.url.split("?")[0].removeprefix(tab.live.url)
        body = {"success": True, "data": payloads[path]}
        route.fulfill(status=200, content_type="application/json", body=json.dumps(body))

    for path in payloads:
        tab.page.route(f"{tab.live.url}{path}?*", answer)
        tab.page.route(f"{tab.live.url}{path}", answer)
    _announce(tab, LATER)
    tab.login("alice")
    (ctr,) = tab.attrs('#panel-events [data-metric="ctr"]', "data-value", "data-n")
    assert (float(ctr["data-value"]), int(ctr["data-n"])) == (0.25, 1200)
    (row,) = tab.attrs("#panel-compare tr[data-measure]", "data-measure", "data-value")
    assert (row["data-measure"], float(row["data-value"])) == ("ndcg", 0.06)
    assert tab.attrs("#panel-alerts tr[data-id]", "data-id") == [{"data-id": "al-1"}]
    for panel in ("events", "compare", "alerts"):
        assert tab.page.is_visible(f"#panel-{panel}")


def test_empty_account_and_bad_token_say_why(tab: Tab) -> None:
    tab.page.goto(tab.live.url + "/dashboard")
    tab.page.fill("#token", "rsk_nope_nope")
    tab.page.click("#login-submit")
    tab.page.wait_for_selector("#login-error:not([hidden])")
    assert "refused" in (tab.page.text_content("#login-error") or "")
    assert tab.page.evaluate("() => sessionStorage.length") == 0
    tab.login("carol")
    assert tab.page.get_attribute("#panel-overview", "data-state") == "empty"
    assert "Nothing collected yet" in (tab.page.text_content("#panel-overview") or "")
    tab.shot("empty")
    tab.page.click("#logout")
    assert tab.page.is_visible("#login-form")
    assert tab.page.evaluate("() => sessionStorage.length") == 0


def test_token_survives_a_reload_in_the_tab_only(tab: Tab) -> None:
    tab.login("alice")
    tab.page.reload()
    tab.wait_refresh(0)
    assert tab.page.text_content("#identity") == "alice"
    other = tab.page.context.new_page()
    other.goto(tab.live.url + "/dashboard")
    other.wait_for_selector("#login-form")
    assert other.is_visible("#login-form")  # a new tab asks again (sessionStorage)
    other.close()


def test_api_docs_work_offline(tab: Tab) -> None:
    tab.page.goto(tab.live.url + "/docs")
    tab.page.wait_for_selector(".opblock", timeout=30_000)
    assert tab.page.locator(".opblock").count() > 10
    paths = tab.page.eval_on_selector_all(
        ".opblock-summary-path", "els => els.map(e => e.getAttribute('data-path'))"
    )
    assert "/api/metrics/retrieval/collect" in paths
    tab.shot("api-docs")
