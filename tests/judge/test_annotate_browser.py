"""The annotation page in headless Chromium (Debian's ``chromium``, driven by Playwright with
the system executable; no browser download) against ``rankscope annotate`` on 127.0.0.1: the
keyboard flow, state kept across a reload, a closed tab and a server killed with SIGKILL, two
annotators and their agreement, exports equal to the keys pressed, LLM labels shown only after
an answer, hostile texts shown as text, and no request leaving 127.0.0.1."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from annotate_helpers import hostile_strings

from browser import copy_to_docs
from rankscope.judge.annotate.store import AnnotationStore
from rankscope.judge.pool import Pool, PoolEntry, entry_record

pytestmark = pytest.mark.slow

SRC = Path(__file__).resolve().parents[2] / "src"
TOKEN = "browser-token-0123456789abcdef"
SCRIPT = '<img src=x onerror="alert(1)"><script>alert(2)</script>'


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def plain_pool() -> Pool:
    texts = {
        "d1": ("Glioma treatment", "Treatment of brain tumors: surgery, then radiotherapy."),
        "d2": ("Garden", "How to plant tulips in the autumn."),
        "d3": ("Tumor markers", "Blood tests that follow a tumor over time."),
        "d4": ("Brain anatomy", "The brain has two hemispheres and a cerebellum."),
    }
    entries = [
        PoolEntry(q, f"{q}{d}", (("bm25", i),), query=query, title=title, text=text)
        for q, query in (("q1", "brain tumor treatment"), ("q2", "tumor blood test"))
        for i, (d, (title, text)) in enumerate(texts.items(), 1)
    ]
    return Pool(tuple(entries))


def hostile_pool() -> Pool:
    """The shared hostile strings as passages (their names as titles) of a query that is
    itself markup, plus pairs whose ids and titles are markup."""
    entries = [
        PoolEntry("h1", f"h-{name}", (), query=SCRIPT, title=name, text=text)
        for name, text in hostile_strings()
    ]
    entries.append(
        PoolEntry(
            "h2",
            "<b>bold</b>&amp;",
            (),
            query='" onmouseover="alert(3)',
            title=SCRIPT,
            text=SCRIPT + " tumor",
        )
    )
    return Pool(tuple(entries))


@dataclass
class Server:
    folder: Path
    pool: Path
    args: list[str]
    port: int = field(default_factory=free_port)
    proc: subprocess.Popen[str] | None = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def store_path(self) -> Path:
        return self.folder / "pool.annotations.sqlite"

    def start(self) -> None:
        env = {**os.environ, "PYTHONPATH": str(SRC), "RANKSCOPE_ANNOTATE_TOKEN": TOKEN}
        command = [
            sys.executable,
            "-m",
            "rankscope.cli.app",
            "annotate",
            str(self.pool),
            "--port",
            str(self.port),
            *self.args,
        ]
        self.proc = subprocess.Popen(
            command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.startswith("open "):
                assert line.strip() == f"open {self.base}/?token={TOKEN}"
                return
        raise AssertionError("the server did not start")

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.kill()  # SIGKILL: nothing is flushed or closed
        self.proc.communicate(timeout=30)
        assert self.proc.returncode == -9

    def stop(self) -> None:
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.terminate()
            self.proc.communicate(timeout=30)

    def store(self) -> AnnotationStore:
        return AnnotationStore(self.store_path)


def serve(tmp_path: Path, pool: Pool, *args: str) -> Server:
    path = tmp_path / "pool.jsonl"
    # JSON escapes, as a hostile file may hold them: a lone surrogate cannot be written as UTF-8
    path.write_text("".join(json.dumps(entry_record(e)) + "\n" for e in pool.entries))
    server = Server(tmp_path, path, list(args))
    server.start()
    return server


@pytest.fixture
def plain(tmp_path: Path) -> Iterator[Server]:
    llm = tmp_path / "judgments.jsonl"
    llm.write_text(
        "".join(
            json.dumps({"query_id": "q1", "doc_id": f"q1d{d}", "label": g}) + "\n"
            for d, g in ((1, 3), (2, 0), (3, 1))
        )
    )
    server = serve(
        tmp_path,
        plain_pool(),
        "--annotators",
        "alice,bob",
        "--overlap",
        "0.5",
        "--labels",
        str(llm),
        "--show-labels",
        "after",
    )
    try:
        yield server
    finally:
        server.stop()


@dataclass
class Tab:
    page: Any
    server: Server
    shots: Path
    requests: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)

    def open(self, annotator: str | None = None) -> None:
        url = f"{self.server.base}/?token={TOKEN}"
        self.page.goto(url + (f"&annotator={annotator}" if annotator else ""))
        self.wait_ready()

    def wait_ready(self) -> None:
        self.page.wait_for_function(
            "() => ['ready', 'done', 'picker', 'no-token'].includes(document.body.dataset.state)",
            timeout=30_000,
        )

    def pick(self, selector: str) -> None:
        """Click what picks an annotator, and wait until their queue is on the page."""
        self.page.click(selector)
        self.page.wait_for_function(
            "() => ['ready', 'done'].includes(document.body.dataset.state)"
            " && document.getElementById('who').textContent !== ''",
            timeout=30_000,
        )

    def actions(self) -> int:
        return int(self.page.evaluate("() => Number(document.body.dataset.actions || 0)"))

    def press(self, key: str) -> None:
        """Press a key and wait until the server confirmed what it did."""
        before = self.actions()
        self.page.keyboard.press(key)
        self.page.wait_for_function(
            f"() => Number(document.body.dataset.actions || 0) > {before}", timeout=30_000
        )
        self.wait_ready()

    def pair(self) -> tuple[str, str] | None:
        if self.page.get_attribute("body", "data-state") == "done":
            return None
        found = self.page.eval_on_selector("#pair", "el => [el.dataset.queryId, el.dataset.docId]")
        return (found[0], found[1])

    def progress(self) -> tuple[int, int, int]:
        values = self.page.eval_on_selector(
            "#progress-text", "el => [el.dataset.graded, el.dataset.assigned, el.dataset.skipped]"
        )
        return (int(values[0]), int(values[1]), int(values[2]))

    def shot(self, name: str, *, docs: bool = False) -> Path:
        path = self.shots / f"{name}.png"
        self.page.screenshot(path=str(path))
        assert path.stat().st_size > 5_000  # something was drawn
        if docs:
            copy_to_docs(path)
        return path

    def download(self, selector: str) -> str:
        with self.page.expect_download() as info:
            self.page.click(selector)
        self.wait_ready()
        return Path(info.value.path()).read_text(encoding="utf-8")


@pytest.fixture
def tabs(browser: Any, tmp_path: Path) -> Iterator[Any]:
    """Opens tabs, each in its own browser context (its own sessionStorage), 1280x860; every
    tab must end with no script error, no alert and no request beyond 127.0.0.1."""
    opened: list[tuple[Any, Tab]] = []
    shots = tmp_path / "screenshots"
    shots.mkdir()

    def make(server: Server) -> Tab:
        context = browser.new_context(
            viewport={"width": 1280, "height": 860}, accept_downloads=True
        )
        page = context.new_page()
        tab = Tab(page, server, shots)
        page.on("request", lambda request: tab.requests.append(request.url))
        page.on("pageerror", lambda error: tab.errors.append(str(error)))

        def dialog(d: Any) -> None:
            tab.dialogs.append(d.message)
            d.dismiss()

        page.on("dialog", dialog)
        opened.append((context, tab))
        return tab

    try:
        yield make
    finally:
        for context, _ in opened:
            context.close()
    for _, tab in opened:
        assert tab.errors == [] and tab.dialogs == []
        local = re.compile(rf"^{re.escape(tab.server.base)}/|^data:|^blob:")
        assert tab.requests and [u for u in tab.requests if not local.match(u)] == []


def qrels_of(grades: dict[tuple[str, str], int]) -> str:
    return "".join(f"{q} 0 {d} {g}\n" for (q, d), g in sorted(grades.items()))


def test_keyboard_flow_export_and_labels_after_answering(plain: Server, tabs: Any) -> None:
    tab = tabs(plain)
    tab.open("alice")
    assert "token" not in tab.page.url and "annotator" not in tab.page.url  # out of the history
    assert tab.page.text_content("#who") == "alice"
    queue = plain.store().queue("alice")
    assert tab.progress() == (0, len(queue), 0)
    # the scale in the prompt's words, one key each
    words = tab.page.eval_on_selector_all(
        "#scale button",
        "els => els.map(e => [e.dataset.grade, e.querySelector('.wording').textContent])",
    )
    assert [w[0] for w in words] == ["3", "2", "1", "0"]
    assert words[0][1] == "the passage is dedicated to the query and contains the exact answer"
    first = tab.pair()
    assert first == ("q1", "q1d1")
    marks = tab.page.eval_on_selector_all("#text mark", "els => els.map(e => e.textContent)")
    assert marks == ["Treatment", "brain", "tumors"]
    assert "LLM" not in (tab.page.text_content("#judge") or "")  # hidden before the answer
    pressed: dict[tuple[str, str], int] = {}
    tab.press("2")
    pressed[first] = 2
    last = tab.page.eval_on_selector("#last", "el => ({...el.dataset})")
    assert last["kind"] == "grade" and last["grade"] == "2" and last["refLlm"] == "3"
    assert "LLM label: 3" in (tab.page.text_content("#last") or "")
    tab.shot("annotate", docs=True)
    second = tab.pair()
    assert second is not None and second != first
    tab.press("s")  # skipped: comes back at the end
    third = tab.pair()
    assert tab.progress()[2] == 1
    tab.press("u")  # undo the skip: the second pair is back
    assert tab.pair() == second and tab.progress()[2] == 0
    tab.press("0")
    pressed[second] = 0
    assert tab.pair() == third
    tab.page.keyboard.press("n")
    assert tab.page.evaluate("() => document.activeElement.id") == "note"
    tab.page.keyboard.type("check the date")
    tab.press("Enter")
    assert tab.page.is_visible("#note-saved")
    tab.press("3")
    assert third is not None
    pressed[third] = 3
    at, before = tab.pair(), tab.actions()
    tab.page.keyboard.press("9")  # off the scale: nothing happens
    tab.page.keyboard.press("x")
    assert (tab.pair(), tab.actions()) == (at, before)
    # a note typed, then a grade clicked: the note is saved first; Esc saves one too
    fourth = tab.pair()
    assert fourth is not None
    tab.page.keyboard.press("n")
    tab.page.keyboard.type("clicked away")
    before = tab.actions()
    tab.page.click('#scale button[data-grade="2"]')
    tab.page.wait_for_function(f"() => Number(document.body.dataset.actions) > {before}")
    tab.wait_ready()
    pressed[fourth] = 2
    fifth = tab.pair()
    tab.page.keyboard.press("n")
    tab.page.keyboard.type("esc keeps it")
    tab.press("Escape")
    assert tab.page.evaluate("() => document.activeElement.id") != "note"
    tab.press("1")
    assert fifth is not None
    pressed[fifth] = 1
    rest = []
    while (current := tab.pair()) is not None:
        tab.press("1")
        pressed[current] = 1
        rest.append(current)
    assert tab.page.is_visible("#done") and tab.progress() == (len(queue), len(queue), 0)
    tab.press("u")  # the last grade of a finished queue can still be undone
    del pressed[rest[-1]]
    assert tab.pair() == rest[-1]
    # the export the page makes holds exactly the keys pressed
    tab.page.click("#view-export")
    mine = tab.download('#export button[data-format="qrels"][data-scope="mine"]')
    assert mine == qrels_of(pressed)
    csv_text = tab.download('#export button[data-format="csv"][data-scope="mine"]')
    assert "check the date" in csv_text and "esc keeps it" in csv_text
    assert csv_text.count("\n") == len(pressed) + 1
    with plain.store() as store:
        assert store.grades()["alice"] == pressed
        assert store.notes("alice") == {
            queue[2]: "check the date",
            queue[3]: "clicked away",
            queue[4]: "esc keeps it",
        }
        assert [a.kind for a in store.log()].count("undo") == 2


def test_state_survives_a_reload_a_closed_tab_and_a_killed_server(plain: Server, tabs: Any) -> None:
    tab = tabs(plain)
    tab.open("bob")
    pressed: dict[tuple[str, str], int] = {}
    for key in ("3", "2"):
        current = tab.pair()
        assert current is not None
        tab.press(key)
        pressed[current] = int(key)
    at, progress = tab.pair(), tab.progress()
    tab.page.reload()
    tab.wait_ready()
    assert (tab.page.text_content("#who"), tab.pair(), tab.progress()) == ("bob", at, progress)
    # a closed tab: the printed address again, a name from the list
    tab.page.close()
    again = tabs(plain)
    again.open()
    assert again.page.get_attribute("body", "data-state") == "picker"
    names = again.page.eval_on_selector_all(
        "#picker-names button", "els => els.map(e => e.textContent)"
    )
    assert names == ["alice", "bob"]
    again.pick('#picker-names button[data-annotator="bob"]')
    assert (again.pair(), again.progress()) == (at, progress)
    # the server dies by SIGKILL: the key fails visibly and is not counted
    plain.kill()
    before = again.actions()
    again.page.keyboard.press("1")
    again.page.wait_for_selector("#error:not([hidden])")
    assert "cannot be reached" in (again.page.text_content("#error") or "")
    assert again.actions() == before
    plain.start()  # same store, port and token
    again.press("1")
    assert at is not None
    pressed[at] = 1
    assert again.progress() == (3, progress[1], 0)
    again.page.reload()
    again.wait_ready()
    assert again.progress() == (3, progress[1], 0)
    again.page.click("#view-export")
    assert again.download('#export button[data-format="qrels"][data-scope="mine"]') == qrels_of(
        pressed
    )


def test_two_annotators_and_their_agreement(plain: Server, tabs: Any) -> None:
    with plain.store() as store:
        queues = {name: store.queue(name) for name in ("alice", "bob")}
    shared = sorted(set(queues["alice"]) & set(queues["bob"]))
    assert len(shared) == 4  # half of the 8 pairs
    grades = {"alice": {}, "bob": {}}  # type: dict[str, dict[tuple[str, str], int]]
    for name, rule in (("alice", lambda i: i % 4), ("bob", lambda i: (i + (i % 2)) % 4)):
        tab = tabs(plain)
        tab.open(name)
        i = 0
        while (current := tab.pair()) is not None:
            tab.press(str(rule(i)))
            grades[name][current] = rule(i)
            i += 1
        assert tab.progress() == (len(queues[name]), len(queues[name]), 0)
    # the agreement view of the last tab (bob's): kappa on the overlap, and what differs
    tab.page.click("#view-agreement")
    tab.page.wait_for_selector("#agreement tr[data-a='alice'][data-b='bob']")
    row = tab.page.eval_on_selector(
        "#agreement tr[data-a='alice'][data-b='bob']", "el => ({...el.dataset})"
    )
    both = [k for k in grades["alice"] if k in grades["bob"]]
    assert int(row["shared"]) == len(both) == 4
    same = sum(grades["alice"][k] == grades["bob"][k] for k in both)
    assert float(row["exact"]) == same / 4
    from rankscope.judge.annotate.agreement import agreement_report

    with plain.store() as store:
        report = agreement_report(store)
    expected = report.between_annotators[0].labels
    assert expected is not None
    assert float(row["kappaLinear"]) == expected.kappa_linear
    listed = tab.page.eval_on_selector_all(
        "#disagreements tr[data-pair-id]",
        "els => els.map(e => [e.dataset.queryId, e.dataset.docId])",
    )
    assert [tuple(x) for x in listed] == [
        k
        for k in sorted(both, key=lambda k: (k[0], int(k[1][-1])))
        if grades["alice"][k] != grades["bob"][k]
    ]
    assert len(listed) == 4 - same > 0
    tab.shot("annotate-agreement", docs=True)
    tab.page.click("#view-export")
    everyone = tab.download('#export button[data-format="qrels"][data-scope="all"]')
    combined = {**grades["alice"], **grades["bob"]}
    for k in both:
        if grades["alice"][k] != grades["bob"][k]:
            del combined[k]
    assert everyone == qrels_of(combined)
    assert f"{4 - same} pairs graded differently left out" in (
        tab.page.text_content("#export-result") or ""
    )


def test_hostile_texts_stay_text(tmp_path: Path, tabs: Any) -> None:
    server = serve(tmp_path, hostile_pool())
    try:
        tab = tabs(server)
        tab.open()
        tab.page.fill("#join-name", "tester")
        tab.pick("#join-submit")
        with server.store() as store:
            pairs = {(p.query_id, p.doc_id): p for p in store.pairs()}
        seen = 0
        while (current := tab.pair()) is not None:
            pair = pairs[current]
            assert tab.page.text_content("#query") == pair.query
            assert tab.page.text_content("#doc-id") == pair.doc_id
            assert tab.page.text_content("#text") == pair.text
            assert tab.page.text_content("#title") == pair.title
            # markup in the data made no element: only the page's own and <mark>
            made = tab.page.eval_on_selector_all(
                "#pair *", "els => [...new Set(els.map(e => e.tagName.toLowerCase()))].sort()"
            )
            assert set(made) <= {"div", "code", "p", "span", "h2", "mark"}, made
            tab.press(str(seen % 4))
            seen += 1
        assert seen == len(pairs) == len(hostile_strings()) + 1
        assert tab.page.evaluate("() => document.querySelectorAll('script').length") == 1
        tab.page.click("#view-export")
        log = tab.download('#export button[data-format="jsonl"][data-scope="all"]')
        assert len(log.splitlines()) == seen
    finally:
        server.stop()


def test_without_the_token_the_page_says_where_to_find_it(plain: Server, tabs: Any) -> None:
    tab = tabs(plain)
    tab.page.goto(plain.base + "/")
    tab.wait_ready()
    assert tab.page.get_attribute("body", "data-state") == "no-token"
    assert "printed" in (tab.page.text_content("#message") or "")
    tab.page.goto(plain.base + "/?token=" + "x" * 30)
    tab.wait_ready()
    assert "refused the token" in (tab.page.text_content("#message") or "")
    assert tab.page.evaluate("() => sessionStorage.length") == 0
