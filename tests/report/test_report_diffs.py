"""The report's "Queries that moved" in headless Chromium (Debian's ``chromium`` through
Playwright, system executable): from ``file://`` a click on a query opens both ranked lists side
by side and a second click closes them, nothing is requested beyond the file, every Δ equals
results.json's, and payloads in query texts, categories, document ids, titles and passages
(HTML, script, attribute breakers, control and bidi characters) stay text.

``RANKSCOPE_DOCS_SCREENSHOTS=docs/img`` also writes the README's screenshot (``diff.png``,
Cranfield's two Lucene runs) there.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any, ClassVar

import pytest
import yaml

from browser import copy_to_docs
from rankscope.bench import BenchmarkResult, run_benchmark
from rankscope.engines.base import Document, Engine, Hit, Query, QueryKind, register_engine
from rankscope.report.write import write_report
from rankscope.suite import load_suite
from rankscope.util.markup import one_line as line
from rankscope.util.markup import printable as plain

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "diff"))
from diff_data import CRANFIELD, HAVE_CRANFIELD, cranfield_bench

from prerequisites import shared_data

HOSTILE = shared_data() / "hostile" / "strings.jsonl"

#: document ids that are markup (TREC files take any id without whitespace)
DOC_IDS = [
    "<script>alert(1)</script>",
    '"><img/src=x/onerror=alert(2)>',
    "</details></section><iframe/src=//example.com>",
    "plain-doc",
    "&amp;&lt;b&gt;",
]


@register_engine("difftest-a")
class RankA(Engine):
    """Ranks the documents in corpus order for every query."""

    name = "difftest-a"
    supported_kinds: ClassVar[frozenset[QueryKind]] = frozenset({"query_string"})
    thread_safe = True

    def __init__(self, **options: object) -> None:
        self.ids: list[str] = []

    def index(self, docs: Iterable[Document]) -> None:
        self.ids = [d.id for d in docs]

    def order(self, query: Query) -> list[str]:
        return self.ids

    def _search(self, query: Query, k: int) -> list[Hit]:
        ids = self.order(query)[:k]
        return [Hit(d, float(len(ids) - i)) for i, d in enumerate(ids)]


@register_engine("difftest-b")
class RankB(RankA):
    """Rotates A's ranking by the query's number: the relevant document moves."""

    name = "difftest-b"

    def order(self, query: Query) -> list[str]:
        n = int(query.id.rsplit("-", 1)[1]) % len(self.ids)
        return self.ids[n:] + self.ids[:n]


def hostile_strings() -> dict[str, str]:
    if not HOSTILE.is_file():
        pytest.skip(f"no hostile strings in {HOSTILE}")
    rows = [json.loads(line) for line in HOSTILE.read_text(encoding="utf-8").splitlines()]
    return {r["name"]: r["text"] for r in rows}


def hostile_bench(folder: Path) -> Path:
    s = hostile_strings()
    texts = [s["html_script"], s["html_attr_break"], s["rtl_override"] + s["control_chars"]]
    texts += [s["crlf"] + s["emoji_zwj"], s["long_token_5000"]]
    corpus = [
        {"_id": d, "title": texts[i % len(texts)][:200], "text": texts[(i + 1) % len(texts)]}
        for i, d in enumerate(DOC_IDS)
    ]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "docs.jsonl").write_text(
        "".join(json.dumps(d) + "\n" for d in corpus), encoding="utf-8"
    )
    queries = [
        {
            "id": f'q"><b>-{i}',
            "text": texts[i % len(texts)] or "empty",
            "category": ["<i>cat</i>", '" onmouseover="alert(3)'][i % 2],
            "judgments": {DOC_IDS[0]: 2, DOC_IDS[1]: 1},
        }
        for i in range(6)
    ]
    suite = {
        "name": "<b>hostile</b>",
        "corpus": {"type": "jsonl", "path": "docs.jsonl"},
        "settings": {"k": [3], "max_k": 5, "warmup": 0, "repeats": 1},
        "queries": queries,
        "engines": [
            {"name": "a<i>", "engine": "difftest-a"},
            {"name": "b", "engine": "difftest-b"},
        ],
    }
    (folder / "suite.yaml").write_text(yaml.safe_dump(suite, allow_unicode=True), encoding="utf-8")
    out = folder / "out"
    run_benchmark(load_suite(folder / "suite.yaml"), out)
    return out


class Tab:
    """A page on ``html`` that records every request and dialog."""

    def __init__(self, browser: Any, html: Path) -> None:
        self.page = browser.new_page(viewport={"width": 1280, "height": 900})
        self.requests: list[str] = []
        self.dialogs: list[str] = []
        self.page.on("request", lambda request: self.requests.append(request.url))

        def on_dialog(dialog: Any) -> None:
            self.dialogs.append(dialog.message)
            dialog.dismiss()

        self.page.on("dialog", on_dialog)
        self.page.goto(html.as_uri())
        self.page.wait_for_load_state("load")

    def rows(self, selector: str) -> list[dict[str, str]]:
        found: list[dict[str, str]] = self.page.eval_on_selector_all(
            selector,
            """els => els.map(e => ({query: e.dataset.query, delta: e.dataset.delta,
                outcome: e.dataset.outcome, open: e.open}))""",
        )
        return found


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("diff-hostile")
    out = hostile_bench(folder)
    html = folder / "report.html"
    write_report(out, html=html)
    return out, html


@pytest.fixture(scope="module")
def cranfield(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    if not HAVE_CRANFIELD:
        pytest.skip(f"no Cranfield data in {CRANFIELD}")
    folder = tmp_path_factory.mktemp("diff-cranfield")
    out = cranfield_bench(folder)
    html = folder / "report.html"
    write_report(out, html=html)
    return out, html


def stored_deltas(out: Path) -> dict[str, dict[str, float]]:
    """Per configuration, its per-query Δ from the best, from results.json."""
    result = BenchmarkResult.read(out / "results.json")
    quality = result.statistics["answered"].quality
    assert quality is not None
    ids, values = result.per_query_values()
    base = values[quality.baseline]
    return {
        name: {q: float(v[i] - base[i]) for i, q in enumerate(ids)}
        for name, v in values.items()
        if name != quality.baseline
    }


def test_click_opens_and_closes_both_lists_from_file(
    browser: Any, cranfield: tuple[Path, Path], tmp_path: Path
) -> None:
    out, html = cranfield
    tab = Tab(browser, html)
    page = tab.page
    configs = page.locator("#query-diffs details.config")
    assert configs.count() == 1 and configs.first.get_attribute("open") is not None
    queries = page.locator("#query-diffs details.config details.qd")
    assert queries.count() == 225
    first = queries.first
    sides = first.locator("table.side")
    assert first.get_attribute("open") is None and not sides.first.is_visible()
    first.locator("summary").click()
    assert first.get_attribute("open") is not None
    assert sides.count() == 2 and sides.nth(0).is_visible() and sides.nth(1).is_visible()
    a_box, b_box = sides.nth(0).bounding_box(), sides.nth(1).bounding_box()
    assert a_box is not None and b_box is not None
    assert b_box["x"] > a_box["x"] + a_box["width"] - 1  # side by side, not stacked
    assert abs(a_box["y"] - b_box["y"]) < 2
    rows = sides.nth(0).locator("tbody tr")
    assert rows.count() == 10 and rows.first.is_visible()
    # the rows are the diff's: ranks, ids, grades, moves
    from rankscope.diff import diff_benchmark

    query = first.get_attribute("data-query")
    assert query is not None
    other = page.locator("#query-diffs details.config").first.get_attribute("data-config")
    best = "bm25" if other == "classic" else "classic"  # A, the list on the left
    expected = diff_benchmark(out, best, str(other)).query(query)
    cells = (
        sides.nth(0)
        .locator("tbody tr")
        .evaluate_all("rs => rs.map(r => [...r.cells].map(c => c.innerText))")
    )
    assert [c[0] for c in cells] == [str(r.rank) for r in expected.a.rows]
    assert [c[1].split(" ", 1)[0] for c in cells] == [r.doc_id for r in expected.a.rows]
    assert [c[2] for c in cells] == [
        "unjudged" if r.grade is None else str(r.grade) for r in expected.a.rows
    ]
    assert [c[3] for c in cells] == [r.moved for r in expected.a.rows]
    shot = tmp_path / "diff.png"
    _section_shot(page, shot)
    copy_to_docs(shot)
    first.locator("summary").click()
    assert first.get_attribute("open") is None and not sides.first.is_visible()
    assert tab.requests == [html.as_uri()] and tab.dialogs == []
    tab.page.close()


def _section_shot(page: Any, path: Path) -> None:
    """The section's top: its text, the first query opened and the next four rows."""
    box = (
        "e => { const r = e.getBoundingClientRect();"
        " return {x: r.x + scrollX, y: r.y + scrollY, w: r.width, h: r.height}; }"
    )
    section = page.eval_on_selector("#query-diffs", box)
    last = page.eval_on_selector("#query-diffs details.qd:nth-of-type(5)", box)
    clip = {
        "x": section["x"] - 8,
        "y": section["y"],
        "width": section["w"] + 16,
        "height": last["y"] + last["h"] - section["y"] + 6,
    }
    page.screenshot(path=str(path), full_page=True, clip=clip)
    assert path.stat().st_size > 20_000  # drawn


def test_deltas_equal_results_json(browser: Any, cranfield: tuple[Path, Path]) -> None:
    out, html = cranfield
    tab = Tab(browser, html)
    expected = stored_deltas(out)
    for name, deltas in expected.items():
        rows = tab.rows(f'#query-diffs details.config[data-config="{name}"] details.qd')
        assert {r["query"]: float(r["delta"]) for r in rows} == deltas
        shown = [abs(float(r["delta"])) for r in rows if r["outcome"] != "tie"]
        assert shown == sorted(shown, reverse=True)  # biggest changes first
        assert all(r["outcome"] == "tie" for r in rows[len(shown) :])  # ties last
    tab.page.close()


def test_payloads_stay_text(browser: Any, hostile: tuple[Path, Path]) -> None:
    out, html = hostile
    text = html.read_text(encoding="utf-8")
    for banned in ("<script", "<img", "<iframe", "<link", 'src="', '="alert'):
        assert banned not in text, banned  # as text only: &lt;img, =&quot;alert
    tab = Tab(browser, html)
    page = tab.page
    assert page.locator("#query-diffs details.config").count() == 1  # b against the best
    for item in page.locator("#query-diffs details.qd").all():
        item.locator("summary").click()  # open every query: a payload would run now
        assert item.get_attribute("open") is not None
    counts = page.evaluate(
        """() => ({script: document.querySelectorAll('script').length,
            img: document.querySelectorAll('img').length,
            iframe: document.querySelectorAll('iframe').length,
            handlers: document.querySelectorAll('[onerror],[onmouseover],[onload]').length,
            bold: document.querySelectorAll('#query-diffs b').length,
            italic: document.querySelectorAll('#query-diffs i').length})"""
    )
    # the only <b> is the configuration's name in its summary; no <i> at all
    assert counts == {"script": 0, "img": 0, "iframe": 0, "handlers": 0, "bold": 1, "italic": 0}
    assert tab.dialogs == [] and tab.requests == [html.as_uri()]
    # what the page shows is the text itself (characters that are not printable escaped)
    result = BenchmarkResult.read(out / "results.json")
    ids = page.eval_on_selector_all(
        "#query-diffs details.config:first-of-type details.qd", "qs => qs.map(q => q.dataset.query)"
    )
    assert sorted(ids) == sorted(q for q in result.query_ids)
    doc_cells = page.eval_on_selector_all(
        "#query-diffs td.doc .id", "cs => [...new Set(cs.map(c => c.textContent))]"
    )
    assert set(doc_cells) == {plain(d) for d in DOC_IDS}
    suite = yaml.safe_load((out.parent / "suite.yaml").read_text(encoding="utf-8"))
    shown = page.eval_on_selector_all(
        "#query-diffs details.config:first-of-type p.qtext", "ps => ps.map(p => p.textContent)"
    )
    assert set(shown) == {line(q["text"]) for q in suite["queries"]}  # one line, escaped
    categories = page.eval_on_selector_all(
        "#query-diffs details.config:first-of-type .cat", "cs => cs.map(c => c.textContent)"
    )
    assert set(categories) == {"<i>cat</i>", '" onmouseover="alert(3)'}
    tab.page.close()


def test_a_folder_without_its_run_files_gets_a_note(tmp_path: Path) -> None:
    from report_suites import run_report_bench

    _, out = run_report_bench(tmp_path / "bench", queries=10)
    for run in (out / "runs").iterdir():
        run.unlink()
    html = tmp_path / "report.html"
    write_report(out, html=html)  # the rest of the report is still written
    text = html.read_text(encoding="utf-8")
    assert (
        "Queries that moved: not shown" in text and "a file results.json names is missing" in text
    )
    assert "Per-query differences" in text
    # from the value alone (no folder, no run files): no section at all
    write_report(BenchmarkResult.read(out / "results.json"), html=tmp_path / "value.html")
    assert 'id="query-diffs"' not in (tmp_path / "value.html").read_text(encoding="utf-8")
