"""Exports of records whose document ids a TREC file cannot hold (empty or with whitespace):
the trec and suite exports leave those records out and say which, the others still evaluate to
their stored values; the jsonl export holds them all; what is exported reads back as stored."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from prerequisites import shared_data, shared_data_root
from rankscope.cli.app import main
from rankscope.data import read_qrels, read_run
from rankscope.errors import ConfigError
from serve_helpers import COLLECT, METRICS, Service, bearer, doc, record

pytestmark = pytest.mark.service
EXPORT = f"{METRICS}/export"
HOSTILE = shared_data_root() / "hostile" / "strings.jsonl"


def _post(service: Service, body: dict[str, Any]) -> str:
    r = service.client.post(COLLECT, json=body, headers=bearer(service.keys.alice))
    assert r.status_code == 201, r.text
    return str(r.json()["data"]["id"])


def _export(service: Service, **params: str) -> Any:
    r = service.client.get(EXPORT, params=params, headers=bearer(service.keys.alice))
    assert r.status_code == 200, r.text  # before: 400 for the whole export
    return r


def _unzip(response: Any, folder: Path) -> dict[str, str]:
    with zipfile.ZipFile(io.BytesIO(response.content)) as zf:
        zf.extractall(folder)
        return {name: zf.read(name).decode() for name in zf.namelist()}


def _eval(folder: Path, qrels: str, run: str, capsys: pytest.CaptureFixture[str]) -> Any:
    capsys.readouterr()
    args = ["eval", "-c", "-q", str(folder / qrels), str(folder / run), "--format", "json"]
    assert main([*args, "-m", "map", "-m", "ndcg", "-m", "set_P"]) == 0
    return json.loads(capsys.readouterr().out)["runs"][0]["per_query"]


def _stored(service: Service) -> dict[str, tuple[float, float, float]]:
    rows = service.client.get(METRICS, headers=bearer(service.keys.alice)).json()["data"]
    return {q["id"]: (q["averagePrecision"], q["ndcg"], q["precision"]) for q in rows["queries"]}


def test_trec_export_leaves_out_and_names_records_it_cannot_write(
    service: Service, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plain = _post(service, record("fine", [doc("a", 0.9), doc("b", 0.5)], judgments={"a": 1}))
    shown = _post(
        service,
        record("shown", [doc("my doc.pdf", 0.9), doc("b", 0.5)], judgments={"b": 2}, queryId="q2"),
    )
    judged = _post(service, record("judged", [doc("a", 0.9)], judgments={"a": 1, "x\ty": 1}))
    graded = _post(service, record("other", [doc("c", 0.7), doc("d", 0.2)], judgments={"d": 1}))
    stored = _stored(service)

    trec = _export(service, format="trec")
    assert trec.headers["X-Rankscope-Queries"] == "2"
    assert trec.headers["X-Rankscope-Skipped"] == "2"
    assert trec.headers["X-Rankscope-Skipped-Records"] == f"{shown},{judged}"
    files = _unzip(trec, tmp_path / "trec")
    assert sorted(files) == ["qrels.txt", "queries.jsonl", "run.trec", "skipped.jsonl"]
    reason = (
        "a document id is empty or contains whitespace, which a TREC file cannot hold; "
        "format=jsonl exports this record"
    )
    assert [json.loads(line) for line in files["skipped.jsonl"].splitlines()] == [
        {"id": shown, "query_id": "q2", "document_ids": ["my doc.pdf"], "reason": reason},
        {"id": judged, "query_id": None, "document_ids": ["x\ty"], "reason": reason},
    ]
    assert [json.loads(q)["id"] for q in files["queries.jsonl"].splitlines()] == [plain, graded]
    # what was written evaluates to the stored values
    per_query = _eval(tmp_path / "trec", "qrels.txt", "run.trec", capsys)
    assert set(per_query) == {plain, graded}
    for qid, values in per_query.items():
        assert (values["map"], values["ndcg"], values["set_P"]) == stored[qid]

    # one file: the same records, the same headers
    part = _export(service, format="trec", part="run")
    assert part.headers["X-Rankscope-Skipped"] == "2"
    assert {line.split()[0] for line in part.text.splitlines()} == {plain, graded}

    # the suite too, and rankscope reads it
    suite = _export(service, format="suite")
    assert suite.headers["X-Rankscope-Skipped"] == "2"
    files = _unzip(suite, tmp_path / "suite")
    assert "skipped.jsonl" in files and "my doc.pdf" not in files["corpus.jsonl"]
    from rankscope.suite import load_suite

    loaded = load_suite(tmp_path / "suite" / "suite.yaml")
    assert sorted(q.text for q in loaded.queries) == ["fine", "other"]

    # JSONL keeps every id, and every record evaluates to its stored values
    jsonl = _export(service, format="jsonl")
    assert jsonl.headers["X-Rankscope-Skipped"] == "0"
    assert "X-Rankscope-Skipped-Records" not in jsonl.headers
    files = _unzip(jsonl, tmp_path / "jsonl")
    assert "skipped.jsonl" not in files
    per_query = _eval(tmp_path / "jsonl", "qrels.jsonl", "run.jsonl", capsys)
    assert set(per_query) == {plain, shown, judged, graded}
    for qid, values in per_query.items():
        assert (values["map"], values["ndcg"], values["set_P"]) == stored[qid]


def test_an_export_without_such_ids_is_unchanged(service: Service, tmp_path: Path) -> None:
    _post(service, record("fine", [doc("a", 0.9)], judgments={"a": 1}))
    trec = _export(service, format="trec")
    assert trec.headers["X-Rankscope-Skipped"] == "0"
    assert "X-Rankscope-Skipped-Records" not in trec.headers
    assert sorted(_unzip(trec, tmp_path)) == ["qrels.txt", "queries.jsonl", "run.trec"]


def test_an_export_reads_only_its_columns_and_checks_no_judgment_again(
    service: Service, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stored judgments were checked when collected: the export builds its Qrels and Run
    as the write path does, without Qrels.from_dict checking each judgment again, and reads
    no column it does not write (such as a record's 10,000 document ids)."""
    from rankscope.data import Qrels, Run
    from rankscope.service.analysis.export import COLUMNS

    options = {"documentIds": ["x" * 200] * 3}
    judged = {"z": 2, "a": 1}
    rid = _post(
        service, record("q", [doc("b", 0.9), doc("a", 0.5)], judgments=judged, options=options)
    )
    store = service.client.app.state.service.store  # type: ignore[attr-defined]
    read: list[list[str]] = []
    rows = store.rows

    def reading(*args: Any) -> Any:
        for row in rows(*args):
            read.append(sorted(row))
            yield row

    def refused(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the stored judgments checked again")

    with monkeypatch.context() as patched:
        patched.setattr(store, "rows", reading)
        patched.setattr(Qrels, "from_dict", refused)
        patched.setattr(Run, "from_dict", refused)
        files = _unzip(_export(service, format="trec"), tmp_path)
    assert read == [sorted(COLUMNS)] and "document_ids" not in COLUMNS
    # the bytes as before: documents in byte order, grade 0 for a retrieved unjudged one
    assert files["qrels.txt"] == f"{rid} 0 a 1\n{rid} 0 b 0\n{rid} 0 z 2\n"
    assert files["run.trec"] == f"{rid} Q0 b 1 2 collected\n{rid} Q0 a 2 1 collected\n"


def test_hostile_document_ids_round_trip_or_are_named(service: Service, tmp_path: Path) -> None:
    shared_data("hostile", "strings.jsonl")  # skips, or fails under CI=true, when absent
    ids: dict[str, str] = {}  # record id -> its one document id
    texts = [json.loads(line)["text"] for line in HOSTILE.read_text().splitlines()]
    # a vertical tab splits a TREC line (C isspace) though Arrow's \s does not match it; a
    # no-break space does not split it
    for text in [*texts, "v\x0bid", "nb\xa0sp"]:
        body = json.dumps(record("q", [doc(text, 0.5)], judgments={text: 1})).encode()
        headers = {**bearer(service.keys.alice), "content-type": "application/json"}
        r = service.client.post(COLLECT, content=body, headers=headers)
        if r.status_code == 201:
            ids[r.json()["data"]["id"]] = text
    assert len(ids) == 29  # empty, NUL, lone surrogates and over 255 characters are refused
    files = _unzip(_export(service, format="trec"), tmp_path)
    skipped = {
        s["id"]: s["document_ids"] for s in map(json.loads, files["skipped.jsonl"].splitlines())
    }
    # the reader splits a line's bytes on ASCII whitespace, as trec_eval does
    unwritable = {rid: [d] for rid, d in ids.items() if d.encode().split() != [d.encode()]}
    assert skipped == unwritable and len(skipped) == 16
    qrels = read_qrels(tmp_path / "qrels.txt").to_dict()
    run = read_run(tmp_path / "run.trec").to_dict()
    written = {rid: d for rid, d in ids.items() if rid not in skipped}
    assert qrels == {rid: {d: 1} for rid, d in written.items()}
    assert {rid: list(docs) for rid, docs in run.items()} == {
        rid: [d] for rid, d in written.items()
    }


# -- memory: an export streams its records -----------------------------------------------------


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest, service: Service) -> Any:
    if request.param == "sqlite":
        yield service
        return
    from fastapi.testclient import TestClient

    from rankscope.service.app import create_app
    from serve_helpers import PgDatabase, make_keys

    pg: PgDatabase = request.getfixturevalue("pg_database")
    keys = make_keys(pg.admin_dsn)
    settings = pg.settings()
    with TestClient(create_app(settings), raise_server_exceptions=False) as client:
        yield Service(client, keys, settings)


JUDGMENTS = 20_000


def _export_peak(service: Service, records: int, start: int) -> tuple[float, int]:
    """Store ``records`` more records of JUDGMENTS judgments each; the traced peak of the
    Python heap (MB) while a trec export of them all is made, and its size."""
    import tracemalloc

    for i in range(start, start + records):
        judged = {f"doc-{i}-{j}": 1 + j % 3 for j in range(JUDGMENTS)}
        body = record(query=f"q{i}", docs=[doc(f"doc-{i}-0", 1.0)], judgments=judged)
        _post(service, body)
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        response = _export(service, format="trec")
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    assert response.headers["X-Rankscope-Queries"] == str(start + records)
    return (peak - len(response.content)) / 1e6, len(response.content)


def test_an_export_takes_memory_flat_in_its_records(backend: Service) -> None:
    # before: every record's judgments were held at once (dictionaries, lists, then the zip in
    # memory): 40 records of 100,000 judgments took +1.56 GB. Now records stream from the
    # database into files, a chunk at a time, and the zip is written to disk.
    small, _ = _export_peak(backend, 6, 0)
    large, size = _export_peak(backend, 12, 6)  # 18 records, 360,000 qrels lines
    print(f"export peak: {small:.1f} MB for 6 records, {large:.1f} MB for 18 ({size} bytes)")
    assert large < small * 1.25  # 12 more records (a dozen MB as objects) change little
    assert large < 60


# -- parts: an export holds at most max_export_lines qrels and run lines -------------------------


@contextmanager
def _budget(service: Service, max_lines: int) -> Iterator[Service]:
    """The same database served with ``max_export_lines = max_lines``."""
    from fastapi.testclient import TestClient

    from rankscope.service.app import create_app

    settings = service.settings.model_copy(update={"max_export_lines": max_lines})
    with TestClient(create_app(settings), raise_server_exceptions=False) as client:
        yield Service(client, service.keys, settings)


def _store_for_parts(service: Service) -> list[str]:
    """Five records a second apart (the export's order), as qrels + run lines: 4, a heuristic
    one (read over: 2 documents + 2 heuristic grades), 22, 4, 4."""

    def at(second: int, body: dict[str, Any]) -> str:
        return _post(service, {**body, "timestamp": f"2026-01-01T00:00:0{second}Z"})

    small = [doc("a", 0.9), doc("b", 0.5)]
    big = {f"j{k:02d}": 1 + k % 3 for k in range(20)}
    return [
        at(1, record("r0", small, judgments={"a": 1})),
        at(2, record("r1", small)),
        at(3, record("r2", [doc("a", 0.9)], judgments=big)),
        at(4, record("r3", small, judgments={"b": 2})),
        at(5, record("r4", small, judgments={"a": 1, "b": 1})),
    ]


def test_an_export_past_its_line_budget_comes_in_parts_that_add_up_to_the_whole(
    backend: Service, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # before: one export held every record of the selection, whatever their number (40
    # records of 100,000 judgments: 8-9 s of CPU in one request)
    r0, _, r2, r3, r4 = _store_for_parts(backend)
    whole = _export(backend, format="trec")  # the default budget holds them all
    assert whole.headers["X-Rankscope-Truncated"] == "false"
    assert whole.headers["X-Rankscope-Next-Offset"] == "5"
    assert whole.headers["X-Rankscope-Queries"] == "4"
    files = _unzip(whole, tmp_path / "whole")
    expected = _eval(tmp_path / "whole", "qrels.txt", "run.trec", capsys)

    with _budget(backend, 10) as small:
        parts: list[tuple[str, str, str, list[str]]] = []
        offset = "0"
        while True:
            r = _export(small, format="trec", offset=offset)
            ids = [
                json.loads(q)["id"]
                for q in _unzip(r, tmp_path / offset)["queries.jsonl"].splitlines()
            ]
            parts.append(
                (
                    offset,
                    r.headers["X-Rankscope-Truncated"],
                    r.headers["X-Rankscope-Next-Offset"],
                    ids,
                )
            )
            if r.headers["X-Rankscope-Truncated"] == "false":
                break
            offset = r.headers["X-Rankscope-Next-Offset"]
        # r0 (4 lines) and the heuristic record read over (4) fit in 10, r2 (22) does not;
        # r2, past the budget alone, still comes whole in a part of its own
        assert parts == [
            ("0", "true", "2", [r0]),
            ("2", "true", "3", [r2]),
            ("3", "false", "5", [r3, r4]),
        ]
        per_query: dict[str, Any] = {}
        qrels: dict[str, dict[str, int]] = {}
        queries = ""
        for offset, *_ in parts:
            folder = tmp_path / offset
            per_query.update(_eval(folder, "qrels.txt", "run.trec", capsys))
            qrels.update(read_qrels(folder / "qrels.txt").to_dict())
            queries += (folder / "queries.jsonl").read_text()
        # evaluating the parts one after the other gives what the whole export gives
        assert per_query == expected
        assert qrels == read_qrels(tmp_path / "whole" / "qrels.txt").to_dict()
        assert len(qrels[r2]) == 21 and queries == files["queries.jsonl"]

        # one file of a part, and the jsonl format, cut at the same records
        run = _export(small, format="trec", part="run", offset="2")
        assert run.headers["X-Rankscope-Next-Offset"] == "3"
        assert run.text == f"{r2} Q0 a 1 1 collected\n"
        jsonl = _export(small, format="jsonl")
        assert (jsonl.headers["X-Rankscope-Truncated"], jsonl.headers["X-Rankscope-Queries"]) == (
            "true",
            "1",
        )
        # past the end: an empty export, not truncated
        end = _export(small, format="trec", offset="99")
        assert end.headers["X-Rankscope-Queries"] == "0"
        assert (end.headers["X-Rankscope-Truncated"], end.headers["X-Rankscope-Next-Offset"]) == (
            "false",
            "99",
        )


def test_a_bad_export_offset_is_a_typed_422(service: Service) -> None:
    for value in ("-1", "1000000001", "ten", "1.5", ""):
        r = service.client.get(EXPORT, params={"offset": value}, headers=bearer(service.keys.alice))
        assert r.status_code == 422, (value, r.text)
        error = r.json()["error"]
        assert error["code"] == "validation_error"
        assert [d["path"] for d in error["details"]] == ["query.offset"], value


def test_the_export_budget_is_a_setting() -> None:
    from rankscope.service.settings import load_settings

    assert load_settings().max_export_lines == 500_000
    assert load_settings(max_export_lines=10).max_export_lines == 10
    with pytest.raises(ConfigError, match="max_export_lines"):
        load_settings(max_export_lines=0)


def test_records_read_over_count_against_the_budget(tmp_path: Path) -> None:
    """A record without click grades is read, not exported: it still counts its documents and
    judgments, so a selection of such records cannot make one part read without bound."""
    import datetime as dt

    from rankscope.service.analysis.export import ExportWriter, collect_click_rows

    def row(n: int, query: str, docs: list[str]) -> dict[str, Any]:
        return {
            "id": f"r{n}",
            "query": query,
            "query_id": None,
            "user_id": "alice",
            "timestamp": dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
            "judgment_source": "heuristic",
            "threshold": 0.7,
            "topic_id": None,
            "search_type": None,
            "arm": None,
            "cutoff": None,
            "ranked_list": [{"document_id": d} for d in docs],
            "judgments": dict.fromkeys(docs, 0),
        }

    rows = [row(0, "other", ["a", "b"]), row(1, "Graded", ["a", "b"]), row(2, "graded", ["a"])]
    parts = []
    for offset in (0, 1, 2):
        (tmp_path / str(offset)).mkdir()
        out = ExportWriter(tmp_path / str(offset), "trec", max_lines=3)
        collect_click_rows(iter(rows[offset:]), {"graded": {"a": 2}}, "clicks:dbn", out)
        out.close()
        parts.append((out.rows, out.queries, out.truncated, out.lines))
    # r0 read over (2 documents + 2 grades = 4 lines: past 3, but the first of its part);
    # r1: 1 qrels + 2 run lines; r2: 1 + 1
    assert parts == [(1, 0, True, 4), (1, 1, True, 3), (1, 1, False, 2)]
    # a part may fill its budget exactly: r1 (3 lines) and r2 (2) in a budget of 5
    (tmp_path / "exact").mkdir()
    out = ExportWriter(tmp_path / "exact", "trec", max_lines=5)
    collect_click_rows(iter(rows[1:]), {"graded": {"a": 2}}, "clicks:dbn", out)
    out.close()
    assert (out.rows, out.queries, out.truncated, out.lines) == (2, 2, False, 5)
