"""Every format round-trips; tabular inputs (BEIR, CSV, JSONL, Parquet, dict, pandas) agree."""

from __future__ import annotations

import gzip
import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pytest

from rankscope.data import Qrels, Run, read_qrels, read_run, write_qrels, write_run
from rankscope.errors import FormatError, InputError

RUN_DICT = {
    "q2": {"d1": 1.0, "d3": 1.0, "d2": 0.5, "d10": 7.25},
    "q10": {"x": -1e-9, "y": 3.0},
    "q1": {"d9": 0.1},
}
QRELS_DICT = {"q2": {"d1": 2, "d2": 0, "d7": -1}, "q10": {"x": 1}, "q1": {"zz": 3}}

RunCheck = Callable[..., None]
QrelsCheck = Callable[[Qrels, Qrels], None]


@pytest.fixture
def run() -> Run:
    return Run.from_dict(RUN_DICT, name="bm25")


@pytest.fixture
def qrels() -> Qrels:
    return Qrels.from_dict(QRELS_DICT)


def test_run_order_follows_trec_eval(run: Run) -> None:
    assert run.query_ids == ("q1", "q10", "q2")
    # ties (d1, d3 at 1.0) broken by docno descending
    assert [d for d, _ in run.ranking("q2")] == ["d10", "d3", "d1", "d2"]


@pytest.mark.parametrize(
    "name", ["r.txt", "r.trec.gz", "r.jsonl", "r.parquet", "r.csv", "r.tsv", "r.ndjson.gz"]
)
def test_run_round_trip(tmp_path: Path, run: Run, name: str, same_run: RunCheck) -> None:
    path = write_run(run, tmp_path / name)
    same_run(read_run(path), run)


@pytest.mark.parametrize("name", ["q.txt", "q.gz", "q.jsonl", "q.parquet", "q.csv", "q.tsv"])
def test_qrels_round_trip(tmp_path: Path, qrels: Qrels, name: str, same_qrels: QrelsCheck) -> None:
    path = write_qrels(qrels, tmp_path / name)
    same_qrels(read_qrels(path), qrels)


def test_explicit_format_overrides_suffix(tmp_path: Path, run: Run, same_run: RunCheck) -> None:
    path = write_run(run, tmp_path / "r.out", format="jsonl")
    assert path.read_text().startswith("{")
    same_run(read_run(path), run)
    same_run(read_run(path, format="jsonl"), run)


def test_beir_qrels_tsv(tmp_path: Path, same_qrels: QrelsCheck) -> None:
    path = tmp_path / "test.tsv"
    path.write_text("query-id\tcorpus-id\tscore\nq2\td1\t2\nq2\td2\t0\nq1\tzz\t3\n")
    got = read_qrels(path)
    same_qrels(got, Qrels.from_dict({"q2": {"d1": 2, "d2": 0}, "q1": {"zz": 3}}))
    assert read_qrels(path, format="beir").to_dict() == got.to_dict()


def test_csv_with_other_column_names(tmp_path: Path) -> None:
    path = tmp_path / "judgments.csv"
    path.write_text('qid,docno,rel,notes\n1,"a,b",1,x\n1,c,0,y\n')
    assert read_qrels(path).to_dict() == {"1": {"a,b": 1, "c": 0}}
    run_path = tmp_path / "ranked.csv"
    run_path.write_text("QueryID,DocID,Rank\n1,a,1\n1,b,2\n1,c,3\n")
    run = read_run(run_path)  # no score: rank gives the order
    assert [d for d, _ in run.ranking("1")] == ["a", "b", "c"]
    assert run.name == "ranked"


def test_jsonl_keys_and_line_numbers(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    rows = [
        {"qid": 1, "docno": "a", "score": 2.0, "run": "mine"},
        {"qid": 1, "docno": "b", "score": 3},
        {"qid": 1, "docno": "a", "score": 1.0},
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows[:2]) + "\n\n" + json.dumps(rows[2]))
    with pytest.raises(FormatError, match=r"run\.jsonl:4: duplicate document 'a' .*line 1\)"):
        read_run(path)
    path.write_text("\n".join(json.dumps(r) for r in rows[:2]) + "\n")
    run = read_run(path)
    assert run.name == "run"  # the last row's run column is empty, so the file stem names it
    assert run.ranking("1") == [("b", 3.0), ("a", 2.0)]
    labels = tmp_path / "labels.jsonl"
    labels.write_text('{"qid": "1", "docno": "a", "label": true}\n{"qid": 1, "docno": "b"}\n')
    with pytest.raises(FormatError, match=r"labels\.jsonl:2: missing value in column 'label'"):
        read_qrels(labels)
    labels.write_text(
        '{"qid": "1", "docno": "a", "label": true}\n{"qid": 1, "docno": "b", "label": 0}'
    )
    assert read_qrels(labels).to_dict() == {"1": {"a": 1, "b": 0}}
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"query_id": "1", "doc_id": "a", "relevance": 1}\n{"query_id": 1,\n')
    with pytest.raises(FormatError, match=r"bad\.jsonl:2: invalid JSON"):
        read_qrels(bad)


def test_json_mapping_file(tmp_path: Path, same_run: RunCheck, run: Run) -> None:
    path = tmp_path / "run.json"
    path.write_text(json.dumps(RUN_DICT))
    same_run(read_run(path, name="bm25"), run)


def test_dicts(same_run: RunCheck, run: Run) -> None:
    same_run(read_run(RUN_DICT, name="bm25"), run)
    assert read_qrels(QRELS_DICT).to_dict() == Qrels.from_dict(QRELS_DICT).to_dict()
    with pytest.raises(InputError, match="not a number"):
        read_run({"q": {"d": "high"}})
    with pytest.raises(InputError, match="NaN or infinite"):
        read_run({"q": {"d": float("nan")}})


def test_pandas_round_trip(run: Run, qrels: Qrels, same_run: RunCheck) -> None:
    frame = run.to_pandas()
    assert list(frame.columns) == ["query_id", "doc_id", "rank", "score", "run_id"]
    same_run(Run.from_pandas(frame), run)
    same_run(read_run(frame), run)
    renamed = frame.rename(columns={"query_id": "qid", "doc_id": "docno"}).drop(columns="run_id")
    same_run(Run.from_pandas(renamed, name="bm25"), run)
    back = Qrels.from_pandas(qrels.to_pandas())
    assert back.to_dict() == qrels.to_dict()
    beir = pd.DataFrame({"query-id": ["1", "1"], "corpus-id": [5, 6], "score": [1.0, 0.0]})
    assert Qrels.from_pandas(beir).to_dict() == {"1": {"5": 1, "6": 0}}
    with pytest.raises(FormatError, match=r"<DataFrame>: row 2: relevance grade is not an integer"):
        Qrels.from_pandas(beir.assign(score=[1.0, 0.5]))


def test_from_pandas_takes_tables_only(tmp_path: Path) -> None:
    """``from_pandas`` reads in-memory tables (a file is for read_run / read_qrels)."""
    path = tmp_path / "r.run"
    path.write_text("1 Q0 d1 1 2.0 r\n")
    with pytest.raises(InputError, match="cannot read this kind of object as a run"):
        Run.from_pandas(str(path))
    with pytest.raises(InputError, match="cannot read this kind of object as qrels"):
        Qrels.from_pandas(path)
    assert Run.from_pandas({"1": {"d1": 2.0}}).to_dict() == {"1": {"d1": 2.0}}


def test_arrow_table_and_open_files(run: Run, same_run: RunCheck, tmp_path: Path) -> None:
    table = pa.table({"query_id": ["q1"], "doc_id": ["d9"], "score": [0.1]})
    assert read_run(table).ranking("q1") == [("d9", 0.1)]
    path = write_run(run, tmp_path / "r.txt")
    with path.open("rb") as fh:
        same_run(read_run(fh), run)
    with path.open("r") as fh:
        same_run(read_run(fh), run)
    same_run(read_run(io.BytesIO(path.read_bytes())), run)


def test_missing_columns(tmp_path: Path) -> None:
    path = tmp_path / "q.csv"
    path.write_text("qid,docno\n1,a\n")
    with pytest.raises(FormatError, match="no relevance column"):
        read_qrels(path)
    ragged = tmp_path / "r.csv"
    ragged.write_text("qid,docno,score\n1,a,1\n1,b\n")
    with pytest.raises(FormatError, match=r"r\.csv:3: expected 3 fields"):
        read_run(ragged)


def test_writer_refuses_what_trec_cannot_hold(tmp_path: Path) -> None:
    spaced = Run.from_dict({"q 1": {"d": 1.0}})
    with pytest.raises(InputError, match="whitespace"):
        write_run(spaced, tmp_path / "r.txt")
    same = read_run(write_run(spaced, tmp_path / "r.parquet"))
    assert same.query_ids == ("q 1",)
    with pytest.raises(InputError, match="run name"):
        write_run(Run.from_dict({"q": {"d": 1.0}}, name="two words"), tmp_path / "r2.txt")
    # every byte the readers split on, the vertical tab too; a no-break space is not one
    for space in " \t\n\v\f\r":
        with pytest.raises(InputError, match="whitespace"):
            write_run(Run.from_dict({"q": {f"a{space}b": 1.0}}), tmp_path / "r3.txt")
    nbsp = Run.from_dict({"q": {"a\xa0b": 1.0}})
    assert read_run(write_run(nbsp, tmp_path / "r4.txt")).doc_ids.to_pylist() == ["a\xa0b"]


def test_csv_ids_a_spreadsheet_would_run_round_trip(tmp_path: Path) -> None:
    """The CSV writer neutralises text cells that start a formula; the reader undoes it."""
    ids = ["=cmd|x!A0", "'=q", "-1", "+x", "@a", "plain", "''@b"]
    run = Run.from_dict({q: {f"{q}d": 1.5, "-0.5": -0.5} for q in ids}, name="=r")
    path = tmp_path / "run.csv"
    write_run(run, path)
    text = path.read_text(encoding="utf-8")
    assert '\n"\'=cmd|x!A0","\'=cmd|x!A0d",1,1.5,"\'=r"\n' in text
    assert "\n\"''=q\"," in text and '\n"-1","\'-1d",' in text and '\n"\'+x",' in text
    assert '\n"\'\'\'@b","-0.5",2,-0.5,' in text
    back = read_run(path)
    assert back.to_dict() == run.to_dict()
    qrels = Qrels.from_dict({q: {"=d": 1, "-d": 2} for q in ids})
    write_qrels(qrels, tmp_path / "qrels.csv")
    assert "'=d" in (tmp_path / "qrels.csv").read_text(encoding="utf-8")
    assert read_qrels(tmp_path / "qrels.csv").to_dict() == qrels.to_dict()


BOM = b"\xef\xbb\xbf"


@pytest.mark.parametrize(
    ("name", "text", "reader"),
    [
        ("q.txt", "1 0 a 1\n1 0 b 2\n2 0 a 0\n", read_qrels),
        ("q-fast.txt", "".join(f"{i // 7} 0 d{i} {i % 3}\n" for i in range(6000)), read_qrels),
        ("q-comment.txt", "# judged by hand\n1 0 a 1\n1 0 b 2\n", read_qrels),
        ("q.tsv", "query-id\tcorpus-id\tscore\n1\ta\t1\n1\tb\t2\n", read_qrels),
        ("q.csv", "qid,docno,rel\n1,a,1\n1,b,2\n", read_qrels),
        ("q.jsonl", '{"query_id": "1", "doc_id": "a", "relevance": 1}\n', read_qrels),
        ("q.json", '{"1": {"a": 1, "b": 0}}', read_qrels),
        ("r.txt", "1 Q0 a 1 2.5 s\n1 Q0 b 2 1.5 s\n2 Q0 a 1 1 s\n", read_run),
        ("r-fast.txt", "".join(f"{i // 9} Q0 d{i} 1 {i}.5 s\n" for i in range(5000)), read_run),
        ("r-mixed.txt", "# run\n1 Q0\ta 1 2.5 s\n\n1 Q0 b 2 1.5 s\n", read_run),
    ],
)
def test_a_leading_byte_order_mark_is_skipped_and_noted_once(
    tmp_path: Path, name: str, text: str, reader: Any
) -> None:
    plain, marked = tmp_path / ("plain-" + name), tmp_path / name
    plain.write_text(text, encoding="utf-8")
    marked.write_bytes(BOM + text.encode())
    seen: list[str] = []
    got = reader(marked, on_warning=seen.append)
    want = reader(plain)
    assert got.to_dict() == want.to_dict()
    assert seen == [f"{marked}: starts with a UTF-8 byte-order mark; ignored"]
    for mode in (True, False):  # lenient reading says so too
        seen.clear()
        assert reader(marked, strict=mode, on_warning=seen.append).to_dict() == want.to_dict()
        assert len(seen) == 1


def test_a_byte_order_mark_keeps_line_numbers(tmp_path: Path) -> None:
    path = tmp_path / "q.txt"
    path.write_bytes(BOM + b"1 0 a 1\n1 0 b x y\n")
    with pytest.raises(FormatError, match=r"q\.txt:2: malformed line"):
        read_qrels(path, on_warning=lambda _: None)


# ids JSON escapes (quote, backslash, C0 controls) and ids it writes as they are (non-ASCII,
# DEL, U+2028, astral); scores whose json text is not Arrow's (123.0, 1e+16, 1e-05, -0.0)
ODD_IDS = ['a"b', "c\\d", "t\tn\n", "\x01\x1f", "é😀", "\x7f\u2028", "plain"]
ODD_SCORES = [123.0, 1e16, 1e-05, -0.0, 0.1, 5e-324, 1.5e300, -2.5]


def _json_lines(table: pa.Table) -> bytes:
    """What the JSONL writer wrote before: json.dumps of each row (the format's definition)."""
    rows = table.to_pylist()
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows).encode()


def test_jsonl_bytes_are_json_dumps_of_each_row(tmp_path: Path) -> None:
    from rankscope.data.qrels import qrels_table
    from rankscope.data.run import run_table

    run = Run.from_dict(
        {q: dict(zip(ODD_IDS, ODD_SCORES, strict=False)) for q in ODD_IDS}, name='r"1'
    )
    qrels = Qrels.from_dict({q: {d: 2**62 - i for i, d in enumerate(ODD_IDS)} for q in ODD_IDS})
    for value, table, write in (
        (run, run_table(run), write_run),
        (qrels, qrels_table(qrels), write_qrels),
    ):
        for name in ("x.jsonl", "x.jsonl.gz"):
            path = write(value, tmp_path / name)  # type: ignore[operator, arg-type]
            data = path.read_bytes()
            if name.endswith(".gz"):
                data = gzip.decompress(data)
            assert data == _json_lines(table)
    first = write_run(run, tmp_path / "r.jsonl").read_bytes().decode().splitlines()[:3]
    assert first == [
        '{"query_id": "\\u0001\\u001f", "doc_id": "plain", "rank": 1, '
        '"score": 1.5e+300, "run_id": "r\\"1"}',
        '{"query_id": "\\u0001\\u001f", "doc_id": "c\\\\d", "rank": 2, '
        '"score": 1e+16, "run_id": "r\\"1"}',
        '{"query_id": "\\u0001\\u001f", "doc_id": "a\\"b", "rank": 3, '
        '"score": 123.0, "run_id": "r\\"1"}',
    ]
    assert '"doc_id": "\x7f\u2028"' in write_run(run, tmp_path / "r.jsonl").read_text()


def test_jsonl_writer_calls_json_dumps_only_for_ids_it_must_escape(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The lines are built a column at a time: json.dumps per row cost ~3 µs a line (7 s of
    a 500,000-line export)."""

    calls: list[object] = []
    real = json.dumps

    def counting(value: object, **kwargs: Any) -> str:
        calls.append(value)
        return real(value, **kwargs)

    monkeypatch.setattr(json, "dumps", counting)  # the module writers calls
    qrels = Qrels.from_dict({f"q{i}": {f"d{j}": j % 3 for j in range(100)} for i in range(20)})
    write_qrels(Qrels.from_dict({**QRELS_DICT, 'q"': {"x": 1}}), tmp_path / "odd.jsonl")
    assert [c for c in calls if c not in ("query_id", "doc_id", "relevance")] == ['q"']
    calls.clear()
    write_qrels(qrels, tmp_path / "q.jsonl")
    assert calls == ["query_id", "doc_id", "relevance"]  # the keys, once per file
