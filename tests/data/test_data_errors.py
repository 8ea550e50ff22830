"""Bad input: every refusal names the file, the 1-based line, the value and the fix."""

from __future__ import annotations

import gzip
import math
from pathlib import Path

import pytest

from rankscope.data import read_qrels, read_run
from rankscope.errors import FormatError, InputError

RUN_OK = "301 Q0 D1 1 3.5 sys\n301 Q0 D2 2 2.5 sys\n"


def _write(tmp_path: Path, text: str | bytes, name: str = "results.txt") -> Path:
    path = tmp_path / name
    if isinstance(text, str):
        path.write_text(text)
    else:
        path.write_bytes(text)
    return path


def _pad(text: str, lines: int = 3000) -> str:
    """Make a file large enough for the fast path: well-formed lines ahead of ``text``."""
    good = "".join(f"9{i:05d} Q0 X{i} 1 1.0 sys\n" for i in range(lines))
    return good + text


def test_duplicate_document_message(tmp_path: Path) -> None:
    lines = [f"301 Q0 D{i} {i} {10 - i} sys" for i in range(1, 12)]
    lines.insert(11, "301 Q0 D3 99 0.1 sys")  # line 12 repeats D3 (line 3)
    path = _write(tmp_path, "\n".join(lines) + "\n")
    with pytest.raises(FormatError) as err:
        read_run(path)
    assert str(err.value) == (
        f"{path}:12: duplicate document 'D3' for query '301' (first seen on line 3). "
        "Each document may appear once per query; remove the repeat"
    )


@pytest.mark.parametrize("fast", [False, True])
def test_duplicate_document_line_numbers_on_both_paths(tmp_path: Path, fast: bool) -> None:
    body = "301 Q0 D1 1 3.5 sys\n301 Q0 D2 2 2.5 sys\n301 Q0 D1 3 1.5 sys\n"
    text = _pad(body) if fast else body
    first = 3001 if fast else 1
    path = _write(tmp_path, text)
    with pytest.raises(FormatError, match=rf":{first + 2}: .*first seen on line {first}\)"):
        read_run(path)
    with pytest.raises(FormatError, match=rf":{first + 2}: duplicate document 'D1'"):
        read_run(path, strict=False)  # trec_eval refuses duplicates too


def test_duplicate_in_interleaved_queries(tmp_path: Path) -> None:
    text = "1 Q0 a 1 3 s\n2 Q0 a 1 3 s\n1 Q0 b 2 2 s\n2 Q0 b 2 2 s\n1 Q0 a 3 1 s\n"
    path = _write(tmp_path, text)
    with pytest.raises(FormatError, match=r":5: duplicate document 'a' for query '1' .*line 1\)"):
        read_run(path)


@pytest.mark.parametrize("fast", [False, True])
@pytest.mark.parametrize("strict", [True, False])
def test_too_few_fields(tmp_path: Path, fast: bool, strict: bool) -> None:
    body = RUN_OK + "301 Q0 D3 3 1.5\n"
    path = _write(tmp_path, _pad(body) if fast else body)
    line = 3003 if fast else 3
    with pytest.raises(FormatError) as err:
        read_run(path, strict=strict)
    msg = str(err.value)
    assert msg.startswith(f"{path}:{line}: malformed line: expected at least 6 fields, found 5")
    assert "'301 Q0 D3 3 1.5'" in msg and "qid Q0 docno rank score runid" in msg


@pytest.mark.parametrize("fast", [False, True])
def test_non_numeric_score_strict(tmp_path: Path, fast: bool) -> None:
    body = RUN_OK + "301 Q0 D3 3 abc sys\n"
    path = _write(tmp_path, _pad(body) if fast else body)
    line = 3003 if fast else 3
    with pytest.raises(FormatError, match=rf":{line}: non-numeric score \(got 'abc'\)\. Scores"):
        read_run(path)


@pytest.mark.parametrize("word", ["nan", "NaN", "inf", "-Infinity"])
def test_nan_and_infinite_scores_strict(tmp_path: Path, word: str) -> None:
    path = _write(tmp_path, RUN_OK + f"301 Q0 D3 3 {word} sys\n")
    with pytest.raises(FormatError, match=rf":3: NaN or infinite score \(got '{word}'\)"):
        read_run(path)


def test_overflowing_score(tmp_path: Path) -> None:
    path = _write(tmp_path, RUN_OK + "301 Q0 D3 3 -1e999 sys\n")
    with pytest.raises(FormatError, match=r":3: score out of range .*got '-1e999'"):
        read_run(path)
    seen: list[str] = []
    run = read_run(path, strict=False, on_warning=seen.append)
    assert run.ranking("301")[-1] == ("D3", -math.inf)
    assert len(seen) == 1 and "overflows" in seen[0]


def test_empty_and_missing_files(tmp_path: Path) -> None:
    empty = _write(tmp_path, "")
    with pytest.raises(InputError, match=r"results\.txt: empty run file"):
        read_run(empty)
    with pytest.raises(InputError, match=r"empty run file"):
        read_run(empty, strict=False)
    with pytest.raises(InputError, match=r"empty qrels file"):
        read_qrels(empty)
    with pytest.raises(InputError, match=r"nope\.txt: file not found"):
        read_run(tmp_path / "nope.txt")
    comments = _write(tmp_path, "# only a comment\n\n", "c.txt")
    with pytest.raises(InputError, match=r"c\.txt: no result lines"):
        read_run(comments)


def test_binary_garbage(tmp_path: Path) -> None:
    nul = _write(tmp_path, RUN_OK.encode() + b"301 Q0 D\x003 3 1.0 sys\n")
    with pytest.raises(FormatError, match=r":3: binary data \(NUL byte\)"):
        read_run(nul)
    with pytest.raises(FormatError, match=r":3: binary data"):
        read_run(nul, strict=False)
    latin = _write(tmp_path, RUN_OK.encode() + b"301 Q0 caf\xe9 3 1.0 sys\n", "l.txt")
    with pytest.raises(FormatError, match=r"l\.txt:3: text is not valid UTF-8.*iconv"):
        read_run(latin)
    big = _write(tmp_path, _pad(RUN_OK).encode() + b"301 Q0 caf\xe9 3 1.0 sys\n", "b.txt")
    with pytest.raises(FormatError, match=r"b\.txt:3003: text is not valid UTF-8"):
        read_run(big)


def test_gzip_detected_by_magic(tmp_path: Path) -> None:
    path = tmp_path / "run.trec"  # no .gz suffix
    path.write_bytes(gzip.compress(RUN_OK.encode()))
    assert read_run(path).ranking("301") == [("D1", 3.5), ("D2", 2.5)]
    bad = tmp_path / "bad.gz"
    bad.write_bytes(gzip.compress(RUN_OK.encode())[:-6])
    with pytest.raises(FormatError, match="corrupt gzip"):
        read_run(bad)
    dup = tmp_path / "dup.gz"
    dup.write_bytes(gzip.compress((RUN_OK + "301 Q0 D1 3 1 sys\n").encode()))
    with pytest.raises(FormatError, match=r"dup\.gz:3: duplicate document 'D1'"):
        read_run(dup)


# --------------------------------------------------------------------------- qrels


def test_qrels_malformed_lines(tmp_path: Path) -> None:
    few = _write(tmp_path, "1 0 a 1\n1 0 b\n", "q.txt")
    with pytest.raises(FormatError, match=r"q\.txt:2: malformed line: expected 4 fields, found 3"):
        read_qrels(few)
    many = _write(tmp_path, "1 0 a 1\n1 0 b 1 extra\n", "q2.txt")
    with pytest.raises(FormatError, match=r":2: malformed line: expected 4 fields, found 5"):
        read_qrels(many, strict=False)
    blank = _write(tmp_path, "1 0 a 1\n\n1 0 b 1\n", "q3.txt")
    with pytest.raises(FormatError, match=r"q3\.txt:2: malformed line: blank line"):
        read_qrels(blank, strict=False)


def test_qrels_duplicate(tmp_path: Path) -> None:
    path = _write(tmp_path, "1 0 a 1\n1 0 b 0\n2 0 a 1\n1 0 a 2\n", "q.txt")
    with pytest.raises(FormatError) as err:
        read_qrels(path)
    assert str(err.value).startswith(
        f"{path}:4: duplicate judgment for document 'a' in query '1' (first seen on line 1)"
    )


def test_qrels_grade_must_be_integer_when_strict(tmp_path: Path) -> None:
    path = _write(tmp_path, "1 0 a 1\n1 0 b 1.5\n", "q.txt")
    with pytest.raises(FormatError, match=r":2: relevance grade is not an integer \(got '1\.5'\)"):
        read_qrels(path)
    seen: list[str] = []
    qrels = read_qrels(path, strict=False, on_warning=seen.append)
    assert qrels.query("1") == {"a": 1, "b": 1}  # atol("1.5") == 1
    assert len(seen) == 1 and "q.txt:2: grade '1.5' read as 1" in seen[0]


@pytest.mark.parametrize("padded", [False, True], ids=["exact", "fast"])
@pytest.mark.parametrize("grade", ["9223372036854775808", "-9223372036854775809"])
def test_qrels_grade_past_a_c_long_is_refused_naming_the_line(
    tmp_path: Path, grade: str, padded: bool
) -> None:
    pad = "".join(f"9{i:05d} 0 X{i} 1\n" for i in range(5000)) if padded else ""
    path = _write(tmp_path, f"{pad}1 0 a 1\n1 0 b {grade}\n", "q.txt")
    line = 5002 if padded else 2
    with pytest.raises(FormatError) as err:
        read_qrels(path)
    assert str(err.value).startswith(
        f"{path}:{line}: relevance grade out of range (got '{grade}'). Grades are integers "
        "from -9223372036854775808 to 9223372036854775807 (a C long"
    )
    seen: list[str] = []
    qrels = read_qrels(path, strict=False, on_warning=seen.append)  # atol saturates
    assert qrels.query("1")["b"] == (2**63 - 1 if grade[0] != "-" else -(2**63))
    assert seen == [f"{path}:{line}: grade '{grade}' read as {qrels.query('1')['b']} (C atol)"]


def test_qrels_grades_at_the_bounds_are_read(tmp_path: Path) -> None:
    path = _write(tmp_path, "1 0 a 9223372036854775807\n1 0 b -9223372036854775808\n", "q.txt")
    assert read_qrels(path).query("1") == {"a": 2**63 - 1, "b": -(2**63)}


def test_csv_grade_past_int64_is_refused_naming_the_line(tmp_path: Path) -> None:
    path = _write(tmp_path, "qid,docno,rel\n1,a,1\n1,b,1e30\n", "q.csv")
    with pytest.raises(FormatError, match=r"q\.csv:3: relevance grade out of range \(got 1e\+30\)"):
        read_qrels(path, strict=False)


def test_qrels_consecutive_comments(tmp_path: Path) -> None:
    # trec_eval skips one `#` line, then reads the next line as data whatever it holds.
    path = _write(tmp_path, "# a\n# b c d\n1 0 a 1\n", "q.txt")
    with pytest.raises(FormatError, match=r"q\.txt:2: comment line directly after another"):
        read_qrels(path)
    seen: list[str] = []
    qrels = read_qrels(path, strict=False, on_warning=seen.append)
    assert qrels.to_dict() == {"#": {"c": 0}, "1": {"a": 1}}
    assert "q.txt:2:" in seen[0]
    indented = _write(tmp_path, "1 0 a 1\n  # x y z\n", "q2.txt")
    with pytest.raises(FormatError, match=r":2: comment not at the start of the line"):
        read_qrels(indented)


def test_run_scores_read_like_atof_in_compat_mode(tmp_path: Path) -> None:
    text = "1 Q0 a 1 abc s\n1 Q0 b 2 1.5xyz s\n1 Q0 c 3 0x10 s\n1 Q0 d 4 -inf s\n1 Q0 e 5 2 s\n"
    seen: list[str] = []
    run = read_run(_write(tmp_path, text), strict=False, on_warning=seen.append)
    assert dict(run.ranking("1")) == {"a": 0.0, "b": 1.5, "c": 16.0, "d": -math.inf, "e": 2.0}
    assert [d for d, _ in run.ranking("1")] == ["c", "e", "b", "a", "d"]
    assert len(seen) == 4
    assert "results.txt:1: score 'abc' read as 0.0" in seen[0]


def test_nan_scores_ordered_like_trec_eval(tmp_path: Path) -> None:
    # trec_eval's comparator finds NaN neither greater nor less than any score and falls back
    # to the docno. glibc's merge sort over the docno-ascending rows a b c d e, worked by hand:
    # [a b] -> [b a]; [c d e] -> [c] + [e d] -> [c e d]; merge -> c b e d a.
    text = "1 Q0 a 1 nan s\n1 Q0 b 2 2 s\n1 Q0 c 3 3 s\n1 Q0 d 4 nan s\n1 Q0 e 5 1 s\n"
    seen: list[str] = []
    run = read_run(_write(tmp_path, text), strict=False, on_warning=seen.append)
    assert [d for d, _ in run.ranking("1")] == ["c", "b", "e", "d", "a"]
    assert len(seen) == 2


def test_unknown_format_and_object(tmp_path: Path) -> None:
    path = _write(tmp_path, RUN_OK)
    with pytest.raises(InputError, match="unknown format"):
        read_run(path, format="xml")
    with pytest.raises(InputError, match="cannot read this kind of object"):
        read_run(42)


def test_warnings_default_to_data_warning(tmp_path: Path) -> None:
    from rankscope.data import DataWarning

    path = _write(tmp_path, "1 Q0 a 1 abc s\n")
    with pytest.warns(DataWarning, match=r"results\.txt:1: score 'abc' read as 0\.0"):
        read_run(path, strict=False)


def test_many_warnings_are_summarised(tmp_path: Path) -> None:
    path = _write(tmp_path, "".join(f"1 Q0 d{i} 1 x{i} s\n" for i in range(50)))
    seen: list[str] = []
    read_run(path, strict=False, on_warning=seen.append)
    assert len(seen) == 21
    assert seen[-1].endswith("30 more warning(s) like the above were not shown")


def test_a_headerless_csv_says_a_header_line_makes_it_work(tmp_path: Path) -> None:
    with pytest.raises(FormatError) as info:
        read_run(_write(tmp_path, "q1,d1,1.5\nq1,d2,1.0\n", "run.csv"))
    assert str(info.value).endswith(
        "; this line is comma-separated: a CSV file needs a header line naming its columns, "
        "e.g. `query_id,doc_id,score`, and is then read as CSV"
    )
    fixed = read_run(_write(tmp_path, "query_id,doc_id,score\nq1,d1,1.5\nq1,d2,1.0\n", "run.csv"))
    assert fixed.to_dict() == {"q1": {"d1": 1.5, "d2": 1.0}}
    with pytest.raises(FormatError, match=r"e\.g\. `query_id,doc_id,relevance`"):
        read_qrels(_write(tmp_path, "q1,d1,1\n", "qrels.csv"))


def test_three_column_qrels_say_what_the_four_columns_are(tmp_path: Path) -> None:
    with pytest.raises(FormatError) as info:
        read_qrels(_write(tmp_path, "q1 d1 1\nq1 d2 0\n", "qrels.txt"))
    assert str(info.value) == (
        f"{tmp_path / 'qrels.txt'}:1: malformed line: expected 4 fields, found 3 (got 'q1 d1 "
        "1'). Each line must be `qid iter docno relevance`; this line has 3: the second column "
        "(`iter`) is missing. trec_eval ignores it, but it must be there: write 0, e.g. "
        "`q1 0 d1 1`"
    )
