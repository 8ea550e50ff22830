"""trec_eval's reading rules on small hand-made files, on both the fast and the exact path."""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from rankscope.data import Run
from rankscope.data._source import Loaded, Warner, Where, load
from rankscope.data.trec import _fast_columns, read_trec_qrels, read_trec_run
from rankscope.errors import FormatError


def _run(text: bytes, fast: bool) -> Run:
    loaded = Loaded(Where("r.txt"), text, None)
    return read_trec_run(loaded, name=None, strict=True, warn=Warner(None), fast=fast)


BODY = b"".join(b"%d Q0 d%d %d %d.5 tag\n" % (i % 7, i, i, i % 5) for i in range(60))


@pytest.mark.parametrize(
    "variant",
    [
        BODY.replace(b"\n", b"\r\n"),  # CRLF line ends
        b"# written by a tool\n\n   # indented comment\n" + BODY,  # header comments
        BODY.replace(b" Q0 ", b"\tQ0\t  "),  # padded, mixed separators
        BODY.rstrip(b"\n"),  # no final newline
        BODY + b"\n\n  \n",  # trailing blank lines
        BODY.replace(b"tag\n", b"tag extra words here\n"),  # ignored trailing words
        BODY.replace(b"tag\n", b"tag 1 more\n"),
    ],
)
def test_variants_read_like_the_plain_file(
    variant: bytes, same_run: Callable[[Run, Run], None]
) -> None:
    plain = _run(BODY, fast=False)
    same_run(_run(variant, fast=False), plain)
    same_run(_run(variant, fast=True), plain)


def test_fast_path_takes_header_comments_and_crlf() -> None:
    for text in (
        BODY.replace(b"\n", b"\r\n"),
        b"# header\n\n" + BODY,
        BODY.replace(b"tag\n", b"tag 1 more\n"),  # the same number of extra words on every line
    ):
        assert _fast_columns(Loaded(Where("r"), text, None), 6) is not None
    lone_cr = BODY.replace(b" Q0 ", b" Q0\r", 1)
    assert _fast_columns(Loaded(Where("r"), lone_cr, None), 6) is None


def test_lone_cr_is_whitespace(same_run: Callable[[Run, Run], None]) -> None:
    same_run(_run(BODY.replace(b" Q0 ", b"\rQ0\x0b", 3), fast=True), _run(BODY, fast=False))


def test_run_name_is_the_last_lines_runid() -> None:
    text = b"1 Q0 a 1 2 first\n1 Q0 b 2 1 second\n# trailing comment\n"
    assert _run(text, fast=False).name == "second"
    assert _run(text, fast=True).name == "second"


def test_hash_starts_a_comment_only_at_the_start_of_a_run_line() -> None:
    text = b"1 Q0 a#1 1 2 t\n  #1 Q0 b 2 1 t\n1 Q0 #c 3 0 t\n"
    for fast in (False, True):
        assert [d for d, _ in _run(text, fast).ranking("1")] == ["a#1", "#c"]


def test_error_lines_count_skipped_header_lines() -> None:
    text = b"# header\n\n" + BODY + b"3 Q0 d3 1 9 tag\n"
    for fast in (False, True):
        with pytest.raises(FormatError, match=r"r\.txt:63: duplicate document 'd3' .*line 6\)"):
            _run(text, fast)


def test_qrels_first_comment_skipped_on_fast_path() -> None:
    body = b"".join(b"%d 0 d%d %d\n" % (i % 3, i, i % 4) for i in range(30))
    for text in (b"# judged by\n" + body, body):
        loaded = Loaded(Where("q.txt"), text, None)
        assert _fast_columns(loaded, 4) is not None
        fast = read_trec_qrels(loaded, strict=True, warn=Warner(None), fast=True)
        exact = read_trec_qrels(loaded, strict=True, warn=Warner(None), fast=False)
        assert fast.to_dict() == exact.to_dict()
        assert len(fast) == 30


@pytest.mark.parametrize("size", [5, 7, 64])
def test_scan_in_small_pieces(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, size: int) -> None:
    import rankscope.data.trec as trec

    monkeypatch.setattr(trec, "_SCAN_PIECE", size)
    crlf = tmp_path / "crlf.txt"
    crlf.write_bytes(BODY.replace(b"\n", b"\r\n"))
    lone = tmp_path / "lone.txt"
    lone.write_bytes(BODY.replace(b" Q0 ", b" Q0\r", 1))
    tab = tmp_path / "tab.txt"
    tab.write_bytes(BODY + b"9 Q0\tx 1 1 tag\n")
    assert _fast_columns(Loaded(Where("c"), crlf.read_bytes(), crlf), 6) is not None
    assert _fast_columns(Loaded(Where("l"), lone.read_bytes(), lone), 6) is None
    assert _fast_columns(Loaded(Where("t"), tab.read_bytes(), tab), 6) is None


@pytest.mark.parametrize("block", [64, 1 << 22])
def test_fast_path_reads_a_file_after_its_header_in_many_blocks(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    block: int,
    same_run: Callable[[Run, Run], None],
) -> None:
    import rankscope.data.trec as trec

    monkeypatch.setattr(trec, "_CSV_BLOCK", block)
    path = tmp_path / "run.txt"
    path.write_bytes(b"# header\n\n" + BODY)
    loaded = Loaded(Where("run.txt"), path.read_bytes(), path)
    cols = _fast_columns(loaded, 6)
    assert cols is not None
    assert cols.lines is not None and cols.lines[0] == 3
    fast = read_trec_run(loaded, name=None, strict=True, warn=Warner(None), fast=True)
    same_run(fast, _run(BODY, fast=False))


def test_fast_path_leaves_a_missing_score_to_the_exact_parser() -> None:
    text = BODY + b"9 Q0 d9 1  tag\n"  # two blanks: trec_eval reads five words
    assert _fast_columns(Loaded(Where("r"), text, None), 6) is None
    for fast in (False, True):
        with pytest.raises(FormatError, match=r"r\.txt:61"):
            _run(text, fast)


BIG = b"".join(b"%d Q0 d%d %d %d.5 tag\n" % (i // 40, i, i, 40 - i % 40) for i in range(2000))


@pytest.mark.parametrize(
    "variant",
    [
        BIG.replace(b"tag\n", b"tag \n", 1),  # a blank at a line's end: an empty runid
        BIG + b" 99 Q0 x 1 1 tag\n",  # a blank at a line's start
        BIG.replace(b" Q0 ", b" Q0  ", 1),  # two blanks: an empty rank
        BIG.replace(b"\n", b"\r\n").replace(b"tag\r\n", b"tag \r\n", 1),  # a blank before CRLF
        BIG + b"# a comment in the middle\n" + BIG.replace(b" d", b" e"),
        BIG + b"\n" + BIG.replace(b" d", b" e"),  # a blank line
    ],
)
def test_fast_path_leaves_blanks_in_the_unread_columns_to_the_exact_parser(
    variant: bytes, same_run: Callable[[Run, Run], None]
) -> None:
    # The Q0, rank and runid columns are not converted: the byte scan alone sees their blanks.
    loaded = Loaded(Where("r.txt"), variant, None)
    assert _fast_columns(loaded, 6) is None
    try:
        exact = _run(variant, fast=False)
    except FormatError as error:
        with pytest.raises(FormatError, match=re.escape(str(error))):
            _run(variant, fast=True)
    else:
        same_run(_run(variant, fast=True), exact)


def test_fast_path_parses_in_parts_cut_at_line_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, same_run: Callable[[Run, Run], None]
) -> None:
    import rankscope.data.trec as trec

    monkeypatch.setattr(trec, "_PART_BYTES", 1000)
    monkeypatch.setattr(trec, "_usable_cpus", lambda: 4)
    text = b"# header\n" + BIG
    parts = trec._parts(text, len(b"# header\n"))
    assert len(parts) == 4
    assert parts[0][0] == 9 and parts[-1][1] == len(text)
    assert all(text[hi - 1 : hi] == b"\n" for _, hi in parts)
    assert all(a[1] == b[0] for a, b in itertools.pairwise(parts))
    path = tmp_path / "run.txt"
    path.write_bytes(text)
    loaded = load(path)  # the file's mapping, as the readers use it
    cols = _fast_columns(loaded, 6)
    assert cols is not None and cols.lines is not None and cols.lines[0] == 2
    fast = read_trec_run(loaded, name=None, strict=True, warn=Warner(None), fast=True)
    same_run(fast, _run(text, fast=False))


def test_fast_path_converts_three_columns_of_ascii_text_and_all_of_other_text(
    monkeypatch: pytest.MonkeyPatch, same_run: Callable[[Run, Run], None]
) -> None:
    import pyarrow.csv as pcsv

    converted: list[list[str]] = []
    real = pcsv.read_csv

    def spy(*args: object, **kwargs: object) -> object:
        converted.append(list(args[3].include_columns))  # type: ignore[attr-defined]
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(pcsv, "read_csv", spy)  # the module rankscope.data.trec reads with
    same_run(_run(BIG, fast=True), _run(BIG, fast=False))
    assert converted == [["f0", "f2", "f4"]]
    accented = BIG.replace(b" d1 ", " dé ".encode())
    same_run(_run(accented, fast=True), _run(accented, fast=False))
    assert converted[1] == ["f0", "f1", "f2", "f3", "f4", "f5"]


@pytest.mark.parametrize("where", [b" Q0 ", b" tag\n"])
def test_bytes_that_are_not_utf8_in_unread_columns(where: bytes) -> None:
    text = BIG.replace(where, where[:-1] + b"\xff" + where[-1:], 1)
    for fast in (False, True):
        with pytest.raises(FormatError, match=r"r\.txt:1: text is not valid UTF-8"):
            _run(text, fast)
        loaded = Loaded(Where("r.txt"), text, None)
        lenient = read_trec_run(loaded, name=None, strict=False, warn=Warner(None), fast=fast)
        assert len(lenient) == 2000 and lenient.name == "tag"
