"""The dashboard in headless Chromium (Debian's ``chromium``, driven by Playwright with the system
executable; no browser download) against a live ``rankscope serve`` on 127.0.0.1 with seeded
records, search events, arms, interleaving experiments and alerts: sign in, change filters, open
a query; every number the page shows equals the API's, no request leaves 127.0.0.1, and one
user's page never shows another's queries."""

from __future__ import annotations

import datetime as dt
import math
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from dashboard_seed import fire_alerts, seed

from browser import copy_to_docs
from serve_helpers import METRICS, bearer, free_port, make_keys, wait_ready

pytestmark = pytest.mark.slow


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
    from rankscope.service.store.keys import create_key

    engine = make_engine(db_url, pool_size=1)
    carol = create_key(engine, "carol")[0]  # a user with no records
    engine.dispose()
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {**os.environ, "RANKSCOPE_SERVE_LOG_LEVEL": "warning"}
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "rankscope.cli.app",
            "serve",
            "--database-url",
            db_url,
            "--port",
            str(port),
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_ready(url)
        seed(url, keys.service)
        fire_alerts(db_url, folder)
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

    def shot(self, name: str, *, docs: bool = False, selector: str | None = None) -> Path:
        """The viewport, or the element ``selector`` (scrolled into view) alone."""
        path = self.live.shots / f"{name}.png"
        if selector is None:
            self.page.screenshot(path=str(path))
        else:
            self.page.locator(selector).screenshot(path=str(path))
        assert path.stat().st_size > 5_000  # something was drawn
        if docs:
            copy_to_docs(path)
        return path


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
    # the design's timestamp is whole seconds since 1970; the page shows timestampIso's minute
    moment = dt.datetime.fromisoformat(record["timestampIso"])
    assert record["timestamp"] == math.floor(moment.timestamp())
    assert f"{moment:%Y-%m-%d %H:%M} UTC" in (tab.page.text_content("#dd-body dl.meta") or "")
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
    # the seeded feedback grades alice-doc-1 2, which this record retrieved at position 7: the
    # one relevant row, with its grade, and nothing listed as missed
    assert tab.attrs("#dd-body tr.relevant", "data-doc", "data-position") == [
        {"data-doc": "alice-doc-1", "data-position": "7"}
    ]
    assert tab.attrs("#dd-body tr.relevant td[data-grade]", "data-grade") == [{"data-grade": "2"}]
    assert tab.attrs("#dd-body ul.missed li", "data-doc") == []


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
        shown = {r["data-id"] for r in tab.attrs("#panel-worst tr[data-id]", "data-id")}
        assert shown and shown <= {q["id"] for q in mine}
        alerts = {r["data-id"] for r in tab.attrs("#panel-alerts tr[data-id]", "data-id")}
        assert alerts == {a["id"] for a in live.api(user, "/api/alerts")["alerts"]}
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


EVENTS = "/api/events"


def num(value: str | None) -> float | None:
    """A number from a data attribute ('' for null)."""
    return None if value in (None, "") else float(value)


def scroll_to(tab: Tab, selector: str) -> None:
    """Bring a panel to the top of the viewport, below the sticky filter bar."""
    tab.page.eval_on_selector(
        selector,
        "e => window.scrollTo(0, e.getBoundingClientRect().top + window.scrollY"
        " - document.getElementById('filters').offsetHeight - 12)",
    )


def relogin(tab: Tab, user: str) -> None:
    tab.page.click("#logout")
    tab.login(user)


def check_events(tab: Tab, api: dict[str, Any]) -> None:
    for metric in ("clickThroughRate", "queryClickRate", "zeroResultRate"):
        rate = api[metric]
        card = f'#panel-events [data-metric="{metric}"]'
        (shown,) = tab.attrs(
            card, "data-value", "data-low", "data-high", "data-numerator", "data-denominator"
        )
        assert rate["denominator"] > 0
        assert num(shown["data-value"]) == rate["value"]
        assert (num(shown["data-low"]), num(shown["data-high"])) == (rate["low"], rate["high"])
        assert int(shown["data-numerator"]) == rate["numerator"]
        assert int(shown["data-denominator"]) == rate["denominator"]
        assert tab.page.text_content(f"{card} .kpi-value") == f"{100 * rate['value']:.1f}%"
        sub = tab.page.text_content(f"{card} .kpi-sub") or ""
        assert f"[{100 * rate['low']:.1f}%, {100 * rate['high']:.1f}%]" in sub
        assert f"{rate['numerator']:,} of {rate['denominator']:,}" in sub
    (position,) = tab.attrs(
        '#panel-events [data-metric="meanClickPosition"]', "data-value", "data-n"
    )
    assert num(position["data-value"]) == api["meanClickPosition"]
    assert int(position["data-n"]) == api["clicksWithPosition"] > 0
    shown_position = tab.page.text_content(
        '#panel-events [data-metric="meanClickPosition"] .kpi-value'
    )
    assert shown_position == f"{api['meanClickPosition']:.2f}"
    (counts,) = tab.attrs(
        "#panel-events p.counts", "data-searches", "data-impressions", "data-clicks"
    )
    assert [int(v) for v in counts.values()] == [
        api["searches"],
        api["impressions"],
        api["clicks"],
    ]


def test_events_panel_equals_the_api(tab: Tab) -> None:
    """Click-through rate, searches with a click, mean click position and the zero-result rate
    of search events, each rate with the API's Wilson interval, for the filters chosen."""
    tab.login("alice")
    assert tab.page.get_attribute("#panel-events", "data-state") == "ready"
    api = tab.live.api("alice", f"{EVENTS}/summary")
    assert api["impressions"] > 1000 and api["zeroResultRate"]["numerator"] > 0
    check_events(tab, api)
    scroll_to(tab, "#panel-events")
    tab.shot("events", selector="#panel-events")
    tab.choose("topicId", "billing")
    tab.choose("searchType", "semantic")
    billing = tab.live.api("alice", f"{EVENTS}/summary", topicId="billing", searchType="semantic")
    assert 0 < billing["impressions"] < api["impressions"]
    check_events(tab, billing)
    # the judgment filter does not narrow events (they carry no judgments)
    tab.choose("judgmentSource", "heuristic")
    check_events(tab, billing)


def check_compare(tab: Tab, api: dict[str, Any]) -> None:
    (summary,) = tab.attrs(
        "#panel-compare .compare-summary", "data-arms", "data-source", "data-paired"
    )
    assert summary == {
        "data-arms": ",".join(api["arms"]),
        "data-source": api["judgmentSource"],
        "data-paired": str(api["paired"]).lower(),
    }
    names = (
        "data-measure",
        "data-value",
        "data-low",
        "data-high",
        "data-p",
        "data-p-adjusted",
        "data-verdict",
        "data-test",
    )
    rows = tab.attrs("#panel-compare tr[data-measure]", *names)
    assert [r["data-measure"] for r in rows] == [m["measure"] for m in api["measures"]]
    for row, m in zip(rows, api["measures"], strict=True):
        ci = m["ci"] or {"low": None, "high": None}
        assert num(row["data-value"]) == m["delta"]
        assert (num(row["data-low"]), num(row["data-high"])) == (ci["low"], ci["high"])
        assert (num(row["data-p"]), num(row["data-p-adjusted"])) == (m["pValue"], m["pAdjusted"])
        assert (row["data-verdict"], row["data-test"]) == (m["verdict"], m["test"])
        at = f'#panel-compare tr[data-measure="{m["measure"]}"]'
        assert [int(c["data-n"]) for c in tab.attrs(f"{at} td[data-n]", "data-n")] == [
            m["nA"],
            m["nB"],
        ]
        means = [num(c["data-mean"]) for c in tab.attrs(f"{at} td[data-mean]", "data-mean")]
        assert means == [m["meanA"], m["meanB"]]
        verdict = tab.page.text_content(f"{at} td.verdict") or ""
        if m["verdict"] in ("a", "b"):
            assert verdict == f"{m['winner']} better"
        elif m["verdict"] == "insufficient_data":
            assert verdict == "insufficient data"
        else:
            assert verdict.startswith("no difference")


def test_compare_panel_equals_the_api(tab: Tab) -> None:
    """A/B: the arms from breakdown?by=arm, each measure's difference with its interval, p,
    Holm-adjusted p and verdict as the API gives them; the seeded better arm is named."""
    tab.login("alice")
    a = tab.page.input_value('#panel-compare select[data-arm="A"]')
    b = tab.page.input_value('#panel-compare select[data-arm="B"]')
    assert {a, b} == {"control", "reranker"}
    api = tab.live.api("alice", f"{METRICS}/compare", arms=f"{a},{b}")
    assert api["judgmentSource"] == "judged"
    check_compare(tab, api)
    ndcg = next(m for m in api["measures"] if m["measure"] == "ndcg")
    assert ndcg["winner"] == "reranker"  # the seed's reranker puts a grade-3 page first
    assert tab.attrs("#panel-compare tr.current", "data-measure") == [{"data-measure": "ndcg"}]
    scroll_to(tab, "#panel-compare")
    tab.shot("compare", selector="#panel-compare")
    tab.shot("dashboard-online", docs=True)
    # the other arm first: the difference changes sign, the verdict stays with the arm
    tab.page.select_option('#panel-compare select[data-arm="A"]', b)
    tab.page.wait_for_selector(f'#panel-compare .compare-summary[data-arms="{b},{a}"]')
    swapped = tab.live.api("alice", f"{METRICS}/compare", arms=f"{b},{a}")
    check_compare(tab, swapped)
    # heuristic rows, then paired over the queries both arms saw
    tab.page.select_option('#panel-compare select[data-control="judgments"]', "heuristic")
    tab.page.wait_for_selector('#panel-compare .compare-summary[data-source="heuristic"]')
    params = {"arms": f"{b},{a}", "judgments": "heuristic"}
    check_compare(tab, tab.live.api("alice", f"{METRICS}/compare", **params))
    tab.page.check('#panel-compare input[data-control="paired"]')
    tab.page.wait_for_selector('#panel-compare .compare-summary[data-paired="true"]')
    check_compare(tab, tab.live.api("alice", f"{METRICS}/compare", **params, paired="true"))


def test_compare_says_insufficient_data(tab: Tab) -> None:
    """Bob's arms hold fewer judged rows than the minimum sample: no winner, whatever p is."""
    tab.login("bob")
    a = tab.page.input_value('#panel-compare select[data-arm="A"]')
    b = tab.page.input_value('#panel-compare select[data-arm="B"]')
    api = tab.live.api("bob", f"{METRICS}/compare", arms=f"{a},{b}")
    assert {m["verdict"] for m in api["measures"]} == {"insufficient_data"}
    assert min(api["records"].values()) < api["minSample"]
    check_compare(tab, api)
    assert "better" not in (tab.page.text_content("#panel-compare tbody") or "")
    scroll_to(tab, "#panel-compare")
    tab.shot("compare-insufficient", selector="#panel-compare")


def test_interleaving_panel_equals_the_api(tab: Tab) -> None:
    tab.login("alice")
    experiments = tab.live.api("alice", f"{EVENTS}/summary")["experiments"]
    assert experiments == {"bm25-vs-dense": 60, "title-boost": 8}
    names = (
        "data-experiment",
        "data-impressions",
        "data-clicked",
        "data-wins",
        "data-ties",
        "data-losses",
        "data-value",
        "data-p",
        "data-verdict",
    )
    rows = tab.attrs("#panel-interleaving tr[data-experiment]", *names)
    assert [r["data-experiment"] for r in rows] == ["bm25-vs-dense", "title-boost"]
    verdicts = {}
    for row in rows:
        api = tab.live.api("alice", f"{EVENTS}/interleaving", experiment=row["data-experiment"])
        counts = ("impressions", "clicked", "wins", "ties", "losses")
        assert [int(row[f"data-{k}"]) for k in counts] == [api[k] for k in counts]
        assert num(row["data-value"]) == api["preference"]
        assert num(row["data-p"]) == api["pValue"]
        assert row["data-verdict"] == api["verdict"]
        verdicts[api["experiment"]] = (api["verdict"], api["winner"])
    # users were made to prefer dense's pages; eight impressions are too few for a winner
    assert verdicts == {"bm25-vs-dense": ("b", "dense"), "title-boost": ("insufficient_data", None)}
    text = tab.page.text_content("#panel-interleaving tbody") or ""
    assert "dense better" in text and "insufficient data" in text
    scroll_to(tab, "#panel-interleaving")
    tab.shot("interleaving", selector="#panel-interleaving")


def test_alerts_panel_equals_the_api(tab: Tab) -> None:
    """The alerts the check fired on Alice's regressed last day, newest first; the service
    role sees whose they are."""
    tab.login("alice")
    alerts = tab.live.api("alice", "/api/alerts", limit=100)["alerts"]
    assert {a["rule"] for a in alerts} == {"ndcg-drop", "ap-drop"}
    names = ("data-id", "data-value", "data-low", "data-high", "data-current", "data-baseline")
    rows = tab.attrs("#panel-alerts tr[data-id]", *names, "data-status")
    assert [r["data-id"] for r in rows] == [a["id"] for a in alerts]
    for row, a in zip(rows, alerts, strict=True):
        assert num(row["data-value"]) == a["delta"] < 0
        assert (num(row["data-low"]), num(row["data-high"])) == (a["ciLow"], a["ciHigh"])
        assert num(row["data-current"]) == a["currentMean"]
        assert num(row["data-baseline"]) == a["baselineMean"]
        assert row["data-status"] == a["deliveryStatus"] == "none"
        text = tab.page.text_content(f'#panel-alerts tr[data-id="{a["id"]}"]') or ""
        assert f"{a['delta']:+.4f}" in text and f"[{a['ciLow']:.4f}, {a['ciHigh']:.4f}]" in text
        assert f"n = {a['nCurrent']}" in text and f"n = {a['nBaseline']}" in text
        assert a["rule"] in text and "Welch's t" in text
    assert tab.page.locator("#panel-alerts td[data-user]").count() == 0
    scroll_to(tab, "#panel-alerts")
    tab.shot("alerts", selector="#panel-alerts")
    relogin(tab, "svc")
    users = [r["data-user"] for r in tab.attrs("#panel-alerts td[data-user]", "data-user")]
    assert users == [a["userId"] for a in tab.live.api("svc", "/api/alerts")["alerts"]]
    assert users == ["alice", "alice"]


ONLINE = ("events", "interleaving", "alerts")


def test_online_panels_hide_without_data(tab: Tab) -> None:
    """Bob sent no events and fired no alert: those panels are hidden for him (his A/B panel
    shows); Carol has nothing at all; filters that leave Alice none say so instead."""
    tab.login("bob")
    assert tab.live.api("bob", f"{EVENTS}/summary")["searches"] == 0
    assert tab.live.api("bob", "/api/alerts")["alerts"] == []
    for panel in ONLINE:
        assert tab.page.get_attribute(f"#panel-{panel}", "data-state") == "unavailable"
        assert tab.page.is_hidden(f"#panel-{panel}")
    assert tab.page.is_visible("#panel-compare")
    relogin(tab, "carol")
    for panel in (*ONLINE, "compare"):
        assert tab.page.get_attribute(f"#panel-{panel}", "data-state") == "unavailable"
        assert tab.page.is_hidden(f"#panel-{panel}")
    relogin(tab, "alice")
    tab.fill_date("endDate", "2030-01-02")
    tab.fill_date("startDate", "2030-01-01")
    for panel in (*ONLINE, "compare"):
        assert tab.page.get_attribute(f"#panel-{panel}", "data-state") == "empty"
        assert tab.page.is_visible(f"#panel-{panel}")
    assert "No events match this selection" in (tab.page.text_content("#panel-events") or "")
    assert "No alert fired in these dates" in (tab.page.text_content("#panel-alerts") or "")


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
    console: list[str] = []
    tab.page.on("console", lambda message: console.append(message.text))
    tab.page.goto(tab.live.url + "/docs")
    tab.page.wait_for_selector(".opblock", timeout=30_000)
    assert tab.page.locator(".opblock").count() > 10
    # under its Content-Security-Policy: an operation opens, "Try it out" and the token dialog
    # work, and the browser refuses nothing
    tab.page.locator(".opblock-summary").first.click()
    tab.page.locator(".try-out__btn").first.click()
    tab.page.locator(".authorize").first.click()
    tab.page.wait_for_selector(".auth-container", timeout=10_000)
    assert [m for m in console if "Content Security Policy" in m] == []
    paths = tab.page.eval_on_selector_all(
        ".opblock-summary-path", "els => els.map(e => e.getAttribute('data-path'))"
    )
    assert "/api/metrics/retrieval/collect" in paths
    tab.shot("api-docs")


def test_one_day_of_data_spans_one_day_of_axis(tab: Tab) -> None:
    # uPlot widens a single point's time scale to 1000 days; the charts set their own range
    tab.login("alice")
    spans = tab.page.evaluate(
        """async () => {
          const { bandChart, barChart, bucketGrid } = await import("/static/dashboard/js/chart.js");
          const target = document.createElement("div");
          document.body.append(target);
          const out = {};
          for (const bucket of ["hour", "day", "week"]) {
            const xs = bucketGrid(["2027-05-10T00:00:00Z"], bucket);
            const band = bandChart(target, { xs, mean: [0.5], low: [0.4], high: [0.6], bucket });
            const bars = barChart(target, { xs, values: [3], bucket });
            await new Promise((done) => requestAnimationFrame(done));
            out[bucket] = [band, bars].map((p) => [p.scales.x.min - xs[0], p.scales.x.max - xs[0]]);
            band.destroy();
            bars.destroy();
          }
          target.remove();
          return out;
        }"""
    )
    for bucket, step in (("hour", 3600), ("day", 86400), ("week", 7 * 86400)):
        assert spans[bucket] == [[-step / 2, step / 2]] * 2
