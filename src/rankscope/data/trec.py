"""TREC qrels and run files, read exactly as trec_eval 10 reads them.

Runs (``get_trec_results.c``): lines ``qid Q0 docno rank score runid [anything...]``. Fields are
separated by any mix of spaces and tabs (C ``isspace``: also ``\\r``, ``\\v``, ``\\f``); blank
lines are skipped; a line whose first non-blank character is ``#`` is a comment, while ``#``
inside a field (docnos such as ``msmarco_v2.1_doc_00_880019750#4_1633802806``) is ordinary text;
words after the runid are ignored; fewer than six words is a malformed line. The ``Q0`` and rank
columns are ignored (rows are ordered by score, ties by docno descending) and the run name is the
runid of the last line. The score is read with C ``atof``.

Qrels (``get_qrels.c``): lines ``qid iter docno rel``, exactly four words; the grade is read with
C ``atol``. trec_eval treats a line as a comment only when ``#`` is its very first byte, and after
a comment line it reads the next line as data whatever it holds; blank lines are malformed.

Both readers refuse empty files, NUL bytes, ids that are not UTF-8 and duplicate (query,
document) pairs; trec_eval only notices a duplicate when it evaluates that query, while these
readers refuse it on reading, whichever query it is in (``read_trec_run(keep_duplicates=True)``
leaves it to evaluation, as ``rankscope trec_eval`` does). ``strict=True`` also refuses what
trec_eval silently misreads: scores or grades that are not plain numbers, NaN and infinite
scores, qrels comment lines that trec_eval would read as judgments, and bytes that are not UTF-8
anywhere. With ``strict=False`` those are accepted as trec_eval reads them and reported through
``warn`` (bytes that are not UTF-8 silently, where trec_eval never looks: the ``Q0``/iteration
and rank columns, words after the runid; the runid keeps them as surrogate escapes).

NaN scores (lenient mode only) are ordered as trec_eval built with glibc orders them: NaN is
neither greater nor less than any score, and glibc's ``qsort`` is a merge sort over rows given in
ascending docno order, so :func:`rankscope.data._build.glibc_qsort_order` replays that merge.

Large well-formed files take a fast path (pyarrow's CSV parser, no Python object per line) when
every line uses the same single separator; anything else takes the exact line parser, and both
give identical results.
"""

from __future__ import annotations

import itertools
import math
import os
import re
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import IO, Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.csv as pcsv

from rankscope.data import compute as pc  # not pyarrow.compute: 50 ms to import
from rankscope.data._build import QueryBlocks
from rankscope.data._source import (
    Buffer,
    Loaded,
    Warner,
    Where,
    bom_length,
    check_text,
    load,
    note_bom,
    release_pages,
)
from rankscope.data.arrow import numpy_array, string_array, string_scalar, to_numpy
from rankscope.data.numbers import (
    GRADE_RANGE_HINT,
    MAX_GRADE,
    MIN_GRADE,
    c_atof,
    c_atol,
    is_plain_float,
    is_plain_int,
    is_special_float,
)
from rankscope.data.qrels import Qrels, build_qrels
from rankscope.data.run import Run, build_run
from rankscope.errors import InputError

#: a path, or an open file (text or binary; gzip is read by its magic bytes)
TrecSource = str | os.PathLike[str] | IO[Any]
_RUN_HINT = "Each line must be `qid Q0 docno rank score runid`"
_QRELS_HINT = "Each line must be `qid iter docno relevance`"


def _swapped(words: list[bytes], *, run: bool = False) -> str:
    """A note when a malformed line is well formed in the other format: files given in the
    wrong order (``rankscope eval RUN QRELS``) are the usual cause."""
    if run and len(words) == 4 and is_plain_int(words[3]):
        return (
            "; this line looks like qrels (`qid iter docno relevance`): were the qrels and the "
            "run given in the wrong order? The qrels come first"
        )
    if not run and len(words) >= 6 and is_plain_int(words[3]) and is_plain_float(words[4]):
        return (
            "; this line looks like a run (`qid Q0 docno rank score runid`): were the qrels and "
            "the run given in the wrong order? The qrels come first"
        )
    if len(words) == 1 and words[0].count(b",") >= 2:
        # comma-separated values without a header line: read as TREC whitespace columns
        columns = "query_id,doc_id,score" if run else "query_id,doc_id,relevance"
        return (
            f"; this line is comma-separated: a CSV file needs a header line naming its "
            f"columns, e.g. `{columns}`, and is then read as CSV"
        )
    if not run and len(words) == 3 and is_plain_int(words[2]):
        return (
            "; this line has 3: the second column (`iter`) is missing. trec_eval ignores it, "
            f"but it must be there: write 0, e.g. `{_shown_words(words, insert_zero=True)}`"
        )
    return ""


def _shown_words(words: list[bytes], *, insert_zero: bool) -> str:
    parts = [w.decode("utf-8", "replace")[:40] for w in words]
    if insert_zero:
        parts.insert(1, "0")
    return " ".join(parts)


_FAST_MIN_BYTES = 1 << 16  # below this the exact parser is as fast
_CSV_BLOCK = 1 << 22  # pyarrow's blocks: the chunks of the columns
_MAX_PARTS = 8


@dataclass(slots=True)
class _Columns:
    qids: pa.Array | pa.ChunkedArray | QueryBlocks
    docs: pa.Array | pa.ChunkedArray
    values: npt.NDArray[np.float64] | npt.NDArray[np.int64] | pa.ChunkedArray  # scores: chunks
    lines: npt.NDArray[np.int64] | None
    runid: str | None = None


def read_trec_run(
    source: Loaded | TrecSource,
    *,
    name: str | None,
    strict: bool,
    warn: Warner | Callable[[str], None] | None,
    fast: bool | None = None,
    keep_duplicates: bool = False,
) -> Run:
    """Parse a TREC run from a path or an open file; ``warn`` receives the oddities read in
    lenient mode; ``fast`` forces (True) or forbids (False) the pyarrow path;
    ``keep_duplicates`` keeps a document listed twice for a query (see
    :func:`~rankscope.data.run.build_run`). ``strict=False`` takes bytes that are not UTF-8
    where trec_eval never looks and in the runid (see the module docstring)."""
    loaded, warn = _opened(source, warn)
    cols = _read_columns(loaded, 6, strict=strict, warn=warn, fast=fast)
    run_name = name if name is not None else (cols.runid or "run")
    scores = cols.values
    if not isinstance(scores, pa.ChunkedArray):
        scores = np.asarray(scores, dtype=np.float64)
    return build_run(
        cols.qids,
        cols.docs,
        scores,
        name=run_name,
        where=loaded.where,
        lines=cols.lines,
        source=loaded.where.name,
        keep_duplicates=keep_duplicates,
    )


def read_trec_qrels(
    source: Loaded | TrecSource,
    *,
    strict: bool,
    warn: Warner | Callable[[str], None] | None,
    fast: bool | None = None,
    keep_first: bool = False,
) -> Qrels:
    """Parse TREC qrels from a path or an open file; ``keep_first`` keeps the first of two
    judgments of a document for one query instead of refusing them (see
    :func:`~rankscope.data.qrels.build_qrels`)."""
    loaded, warn = _opened(source, warn)
    cols = _read_columns(loaded, 4, strict=strict, warn=warn, fast=fast)
    return build_qrels(
        cols.qids,
        cols.docs,
        np.asarray(cols.values, dtype=np.int64),
        where=loaded.where,
        lines=cols.lines,
        source=loaded.where.name,
        keep_first=keep_first,
    )


def _opened(
    source: Loaded | TrecSource, warn: Warner | Callable[[str], None] | None
) -> tuple[Loaded, Warner]:
    loaded = source if isinstance(source, Loaded) else load(source)
    return loaded, warn if isinstance(warn, Warner) else Warner(warn)


def _read_columns(
    loaded: Loaded, ncols: int, *, strict: bool, warn: Warner, fast: bool | None
) -> _Columns:
    """The columns of a run (``ncols`` 6) or qrels (4) file: the pyarrow path when the file
    is large (or ``fast``) and regular, else the exact line parser."""
    where = loaded.where
    _refuse_empty(loaded.data, where, "run" if ncols == 6 else "qrels")
    bom = note_bom(loaded.data, where, warn)  # both paths start after it
    cols = None
    if fast is not False and (fast or len(loaded.data) >= _FAST_MIN_BYTES):
        cols = _fast_columns(loaded, ncols) or _fast_columns_normalised(loaded, ncols)
    if cols is None:
        check_text(loaded.data, where, utf8=strict)  # lenient: ids are checked one by one
        exact = _exact_run if ncols == 6 else _exact_qrels
        cols = exact(_as_bytes(loaded.data, bom), where, strict, warn)
    release_pages(loaded.data)
    if len(cols.values) == 0:
        if ncols == 6:
            problem, hint = "no result lines (only blank or comment lines)", _RUN_HINT
        else:
            problem, hint = "no judgment lines", _QRELS_HINT
        raise where.error(problem, hint=hint, cls=InputError)
    warn.finish(where)
    return cols


def _refuse_empty(data: Buffer, where: Where, what: str) -> None:
    if len(data) == 0:
        raise where.error(
            f"empty {what} file",
            hint="trec_eval refuses empty files too; check that the file was written completely",
            cls=InputError,
        )


def _as_bytes(data: Buffer, start: int = 0) -> bytes:
    return data if isinstance(data, bytes) and not start else data[start:]


# --------------------------------------------------------------------------- fast path


def _header_lines(data: Buffer, ncols: int) -> tuple[int, int]:
    """Leading lines that trec_eval skips, as (how many, byte offset after them).

    Runs: blank and comment lines. Qrels: one comment line starting in the first column (the
    line after it is data to trec_eval, whatever it holds).
    """
    head = bytes(data[: 1 << 16])
    count, pos = 0, bom_length(data)  # a byte-order mark is not part of the first line
    while count < 1000:
        nl = head.find(b"\n", pos)
        if nl < 0:
            break
        line = head[pos:nl]
        if ncols == 6:
            word = line.strip()
            if word and not word.startswith(b"#"):
                break
        elif count > 0 or not line.startswith(b"#"):
            break
        count += 1
        pos = nl + 1
    return count, pos


def _first_line_format(loaded: Loaded, ncols: int, start: int) -> tuple[bytes, bytes, int] | None:
    """``(separator, the other blank, number of fields)`` read from the first data line, or
    ``None`` when that line already needs the exact path. Runs may carry extra words after the
    runid."""
    data = loaded.data
    nl = data.find(b"\n", start)
    first = bytes(data[start : nl if nl >= 0 else len(data)]).rstrip(b"\r")
    sep, other = (b"\t", b" ") if b"\t" in first else (b" ", b"\t")
    fields = len(first.split(sep))
    if fields < ncols or (ncols == 4 and fields != 4):
        return None
    return sep, other, fields


_SCAN_PIECE = 1 << 18  # bytes per step of the byte scan: its masks stay small and are reused


def _is_ascii(data: Buffer, start: int) -> bool:
    return len(data) <= start or int(np.frombuffer(data, dtype=np.uint8)[start:].max()) < 0x80


def _plain_text(data: Buffer, start: int, sep: bytes, other: bytes) -> bool:
    """Whether the text from ``start`` holds nothing that pyarrow and trec_eval read differently,
    so that pyarrow's columns are exactly trec_eval's words:

    - no NUL, vertical tab, form feed or ``other`` blank, and no CR that does not end a line
      (a lone CR is whitespace to trec_eval but a line break to pyarrow);
    - no empty field: no two separators in a row and none at the start or end of a line
      (trec_eval reads a run of blanks as one), hence no blank line either;
    - no line that starts with ``#`` (a comment to trec_eval in a run; in qrels the exact
      parser decides).

    One pass over the bytes where they already are (the file's mapping), in pieces, with
    reused masks; numpy releases the GIL, so this runs beside pyarrow's parse.
    """
    if any(data.find(bad, start) >= 0 for bad in (b"\0", b"\x0b", b"\x0c", other)):
        return False
    raw = np.frombuffer(data, dtype=np.uint8)[start:]
    if raw.shape[0] == 0:
        return True
    has_cr = data.find(b"\r", start) >= 0
    has_hash = data.find(b"#", start) >= 0
    s, nl = ord(sep), ord("\n")
    if raw[0] in (s, nl, ord("\r"), ord("#")) or raw[-1] == s or raw[-1] == ord("\r"):
        return False
    piece = min(_SCAN_PIECE, raw.shape[0])
    edge = np.empty(piece + 1, dtype=np.bool_)  # separator or line end, per byte
    mask = np.empty(piece + 1, dtype=np.bool_)
    pair = np.empty(piece, dtype=np.bool_)
    for lo in range(0, raw.shape[0] - 1, piece):
        chunk = raw[lo : lo + piece + 1]  # one byte more: pairs across the pieces' border
        m = chunk.shape[0]
        e, k, p = edge[:m], mask[:m], pair[: m - 1]
        np.equal(chunk, s, out=e)
        np.equal(chunk, nl, out=k)
        e |= k
        if has_hash:  # "#" right after a line end
            np.equal(chunk[1:], ord("#"), out=p)
            p &= k[:-1]
            if p.any():
                return False
        if has_cr:
            np.equal(chunk, ord("\r"), out=k)
            np.logical_not(k[:-1], out=p)  # a CR must be followed by LF ...
            p |= chunk[1:] == nl
            if not p.all():
                return False
            e |= k  # ... and a CRLF is one line end: the pair (CR, LF) is not two edges
            np.logical_not(k[:-1], out=p)
            p &= e[:-1]
        else:
            np.copyto(p, e[:-1])
        p &= e[1:]
        if p.any():  # two edges in a row: an empty field or a blank line
            return False
    return True


def _last_field(data: Buffer, sep: bytes, index: int) -> str:
    """Word ``index`` of the last line (the text passed :func:`_plain_text`)."""
    end = len(data)
    if data[end - 1 : end] == b"\n":
        end -= 1
    if data[end - 1 : end] == b"\r":
        end -= 1
    begin = data.rfind(b"\n", 0, end) + 1
    return bytes(data[begin:end]).split(sep)[index].decode("utf-8")


_PART_BYTES = 1 << 24  # the least text worth a reader of its own


def _usable_cpus() -> int:
    """The cores this process may run on (a container or ``taskset`` may allow fewer than the
    machine has)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


def _parts(data: Buffer, start: int) -> list[tuple[int, int]]:
    """Byte ranges from ``start`` to the end, cut after a line end, one per core at most."""
    n = len(data)
    count = max(1, min(_usable_cpus(), _MAX_PARTS, (n - start) // _PART_BYTES))
    bounds = [start]
    for k in range(1, count):
        cut = data.find(b"\n", start + (n - start) * k // count) + 1
        if bounds[-1] < cut < n:
            bounds.append(cut)
    bounds.append(n)
    return list(itertools.pairwise(bounds))


def _fast_columns(loaded: Loaded, ncols: int) -> _Columns | None:
    """Columns via pyarrow when the file is plainly regular; ``None`` means "use the exact path".

    The fast path is exact because it only accepts files where pyarrow's reading and
    trec_eval's coincide: one separator (space or tab) used once between fields, no other
    whitespace, no blank or comment lines, every field non-empty, numbers in plain notation.

    pyarrow parses the bytes where they are (a file is mapped, not read into a copy), in parts
    (:func:`_parts`), beside the byte scan that checks the text (:func:`_plain_text`). It
    converts only the query, document and value columns when the text is ASCII, and every
    column (checking that each is UTF-8, as strict reading requires) when it is not.
    """
    data = loaded.data
    skipped, start = _header_lines(data, ncols)
    found = _first_line_format(loaded, ncols, start)
    if found is None:
        return None
    sep, other, fields = found
    names = [f"f{i}" for i in range(fields)]  # every line must have as many (pyarrow checks)
    value_col = "f4" if ncols == 6 else "f3"
    ascii_only = _is_ascii(data, start)
    used = ["f0", "f2", value_col] if ascii_only else names
    types: dict[str, pa.DataType] = dict.fromkeys(used, pa.string())
    types[value_col] = pa.float64() if ncols == 6 else pa.int64()
    whole = pa.py_buffer(data)
    read_options = pcsv.ReadOptions(column_names=names, block_size=_CSV_BLOCK, use_threads=False)
    parse_options = pcsv.ParseOptions(
        delimiter=sep.decode(),
        quote_char=False,
        double_quote=False,
        escape_char=False,
        newlines_in_values=False,
        ignore_empty_lines=False,
    )
    convert_options = pcsv.ConvertOptions(
        column_types=types,
        include_columns=used,
        strings_can_be_null=False,
        quoted_strings_can_be_null=False,
        check_utf8=not ascii_only,  # ASCII is UTF-8: no need to check it string by string
    )

    def parse(lo: int, hi: int) -> pa.Table:
        stream = pa.BufferReader(whole.slice(lo, hi - lo))
        try:
            return pcsv.read_csv(stream, read_options, parse_options, convert_options)
        finally:
            stream.close()

    # The text is cut at line ends into one part per core, each parsed by one pyarrow reader
    # on its own thread (no GIL), beside the byte scan (numpy, which releases the GIL too).
    # pyarrow's own threads would parse as fast but read ahead, holding the parsed form of
    # many blocks at once: twice the fresh memory. The table is dropped when the scan finds
    # the text irregular.
    parts = _parts(data, start)
    with ThreadPoolExecutor(max_workers=len(parts) + 1) as pool:
        plain = pool.submit(_plain_text, data, start, sep, other)
        pending = [pool.submit(parse, lo, hi) for lo, hi in parts]
        try:
            table = pa.concat_tables([p.result() for p in pending])
        except (pa.ArrowInvalid, pa.ArrowTypeError, UnicodeDecodeError):
            return None  # the pool waits for the scan and the other parts
        if not plain.result():
            return None
    value = table.column(value_col)
    if table.num_rows == 0 or value.null_count:
        return None
    runid = None
    if ncols == 6:
        runid = _last_field(data, sep, 5) if ascii_only else table.column("f5")[-1].as_py()
    blocks = QueryBlocks.of(table.column("f0"))  # a few names per chunk, not one per row
    docs = table.column("f2")  # chunks kept: the builders copy the rows into one array once
    n = table.num_rows
    del table  # the other columns go now
    if ncols == 6:
        if not all(_all_finite(to_numpy(c)) for c in value.chunks):
            return None
        vals: pa.ChunkedArray | npt.NDArray[np.int64] = value
    else:
        vals = np.asarray(to_numpy(value), dtype=np.int64)
    lines = None  # row i is line i + 1 ...
    if skipped:  # ... unless header lines were skipped
        lines = np.arange(skipped + 1, skipped + 1 + n, dtype=np.int64)
    return _Columns(blocks, docs, vals, lines=lines, runid=runid)


def _all_finite(values: npt.NDArray[np.float64]) -> bool:
    """Whether no value is NaN or infinite; the sum says so without a mask per row (a NaN or
    an infinity makes it non-finite), and only an overflowing sum needs the mask."""
    with np.errstate(over="ignore", invalid="ignore"):
        if math.isfinite(float(np.sum(values))):
            return True
    return bool(np.all(np.isfinite(values)))


_RUNS_OF_BLANKS = re.compile(rb"[ \t\r\x0b\x0c]+")
_EDGE_BLANK = re.compile(rb"(?m)^ | $")


def _fast_columns_normalised(loaded: Loaded, ncols: int) -> _Columns | None:
    """The fast path after rewriting every run of blanks as one space, line for line.

    Old TREC files often pad columns (``301\tQ0\tdoc\t1\t  2.13\tSTANDARD``); trec_eval
    reads any run of blanks as one separator, so collapsing them changes nothing it sees, and
    lines stay where they were, so line numbers in messages stay right.
    """
    raw = loaded.data
    mixed = raw.find(b"\t") >= 0 and raw.find(b" ") >= 0
    if not mixed and all(raw.find(c) < 0 for c in (b"\r", b"\x0b", b"\x0c")):
        return None  # the fast path failed for another reason than whitespace
    data = _as_bytes(raw)
    if data.find(b"\0") >= 0:
        return None
    text = _EDGE_BLANK.sub(b"", _RUNS_OF_BLANKS.sub(b" ", data))
    if text == data:
        return None
    return _fast_columns(Loaded(loaded.where, text, None), ncols)


# --------------------------------------------------------------------------- exact path


def _decode(word: bytes, where: Where, line: int, what: str) -> str:
    try:
        return word.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise where.error(
            f"{what} is not valid UTF-8",
            at=line,
            value=word[max(0, exc.start - 4) : exc.start + 4],
            hint="Convert the file to UTF-8 (for example with iconv)",
        ) from None


def _exact_run(data: bytes, where: Where, strict: bool, warn: Warner) -> _Columns:
    qids: list[str] = []
    docs: list[str] = []
    scores: list[float] = []
    lines: list[int] = []
    runid: bytes | None = None
    qcache: dict[bytes, str] = {}
    for no, raw in enumerate(data.split(b"\n"), 1):
        words = raw.split()
        if not words or words[0][:1] == b"#":
            continue
        if len(words) < 6:
            raise where.error(
                f"malformed line: expected at least 6 fields, found {len(words)}",
                at=no,
                value=raw.decode("utf-8", "replace").strip(),
                hint=_RUN_HINT + _swapped(words, run=True),
            )
        word = words[4]
        if is_plain_float(word):
            score = float(word)
            if not math.isfinite(score):  # such as 1e999
                if strict:
                    raise where.error(
                        "score out of range (it overflows to infinity)",
                        at=no,
                        value=word.decode("utf-8", "replace"),
                        hint="Scores must be finite numbers of at most about 1.8e308",
                    )
                warn(f"{where.prefix(no)}score {word.decode()!r} overflows to {score!r}")
        elif strict:
            kind = "NaN or infinite" if is_special_float(word) else "non-numeric"
            raise where.error(
                f"{kind} score",
                at=no,
                value=word.decode("utf-8", "replace"),
                hint="Scores must be finite decimal numbers such as 12.5 or -3e-2",
            )
        else:
            score = c_atof(word)
            warn(
                f"{where.prefix(no)}score {word.decode('utf-8', 'replace')!r} read as "
                f"{score!r} (trec_eval reads scores with C atof)"
            )
        q = qcache.get(words[0])
        if q is None:
            q = qcache.setdefault(words[0], _decode(words[0], where, no, "query id"))
        qids.append(q)
        docs.append(_decode(words[2], where, no, "document id"))
        scores.append(score)
        lines.append(no)
        runid = words[5]
    return _Columns(
        string_array(qids),
        string_array(docs),
        np.asarray(scores, dtype=np.float64),
        np.asarray(lines, dtype=np.int64),
        # the run name: trec_eval prints its bytes as they are (-m runid)
        runid=None if runid is None else runid.decode("utf-8", "surrogateescape"),
    )


def _exact_qrels(data: bytes, where: Where, strict: bool, warn: Warner) -> _Columns:
    qids: list[str] = []
    docs: list[str] = []
    grades: list[int] = []
    lines: list[int] = []
    raw_lines = data.split(b"\n")
    if raw_lines and raw_lines[-1] == b"":
        raw_lines.pop()  # the text after the final newline
    after_comment = False
    for no, raw in enumerate(raw_lines, 1):
        if raw[:1] == b"#" and not after_comment:
            after_comment = True
            continue
        words = raw.split()
        if after_comment and words and words[0][:1] == b"#":
            msg = "comment line directly after another comment line"
            if strict or len(words) != 4:
                raise where.error(
                    msg + ": trec_eval reads it as a judgment",
                    at=no,
                    value=raw.decode("utf-8", "replace").strip(),
                    hint="Put the comments on lines of their own, separated by judgments, "
                    "or remove them",
                )
            warn(f"{where.prefix(no)}{msg}, read as a judgment as trec_eval does")
        elif words and words[0][:1] == b"#":
            if strict:
                raise where.error(
                    "comment not at the start of the line: trec_eval reads it as a judgment",
                    at=no,
                    value=raw.decode("utf-8", "replace").strip(),
                    hint="Start comment lines with `#` in the first column",
                )
            if len(words) == 4:
                warn(f"{where.prefix(no)}indented `#` line read as a judgment as trec_eval does")
        after_comment = False
        if len(words) != 4:
            what = "blank line" if not words else f"expected 4 fields, found {len(words)}"
            raise where.error(
                f"malformed line: {what}",
                at=no,
                value=raw.decode("utf-8", "replace").strip() if words else None,
                hint=_QRELS_HINT + ("; remove blank lines" if not words else _swapped(words)),
            )
        word = words[3]
        if is_plain_int(word):
            grade = int(word)
            if not MIN_GRADE <= grade <= MAX_GRADE:  # past a C long: atol saturates
                if strict:
                    raise where.error(
                        "relevance grade out of range",
                        at=no,
                        value=word.decode("utf-8", "replace"),
                        hint=GRADE_RANGE_HINT,
                    )
                grade = c_atol(word)
                warn(f"{where.prefix(no)}grade {word.decode()!r} read as {grade} (C atol)")
        elif strict:
            raise where.error(
                "relevance grade is not an integer",
                at=no,
                value=word.decode("utf-8", "replace"),
                hint="Grades must be integers such as 0, 1, 2 (negative means judged, "
                "not relevant)",
            )
        else:
            grade = c_atol(word)
            warn(
                f"{where.prefix(no)}grade {word.decode('utf-8', 'replace')!r} read as "
                f"{grade} (trec_eval reads grades with C atol)"
            )
        qids.append(_decode(words[0], where, no, "query id"))
        docs.append(_decode(words[2], where, no, "document id"))
        grades.append(grade)
        lines.append(no)
    return _Columns(
        string_array(qids),
        string_array(docs),
        np.asarray(grades, dtype=np.int64),
        np.asarray(lines, dtype=np.int64),
    )


# --------------------------------------------------------------------------- writers


# what the readers split fields on: C isspace (RE2's \s leaves out the vertical tab)
_SPLITS = r"[ \t\n\v\f\r]|^$"


def _check_words(values: pa.Array, what: str) -> None:
    if len(values) and pc.any(pc.match_substring_regex(values, _SPLITS)).as_py():
        bad = values.filter(pc.match_substring_regex(values, _SPLITS))[0].as_py()
        raise InputError(
            f"cannot write a TREC file: {what} is empty or contains whitespace",
            value=bad,
            hint="TREC files separate fields by whitespace; rename the ids or write JSONL/Parquet",
        )


def trec_run_lines(run: Run) -> pa.Array:
    """One ``qid Q0 docno rank score runid`` string per row, in run order."""
    if not run.name or any(c.isspace() for c in run.name):
        raise InputError(
            "cannot write a TREC run: the run name is empty or contains whitespace",
            value=run.name,
            hint="Give the run a single-word name",
        )
    qids = string_array(run.query_ids)
    _check_words(qids, "a query id")
    _check_words(run.doc_ids, "a document id")
    n = len(run)
    lengths = np.diff(run.offsets)
    row_q = np.repeat(np.arange(len(run.query_ids)), lengths)
    ranks = np.arange(n, dtype=np.int64) - np.repeat(run.offsets[:-1], lengths) + 1
    return pc.binary_join_element_wise(
        qids.take(numpy_array(row_q)),
        string_scalar("Q0"),
        run.doc_ids,
        numpy_array(ranks).cast(pa.string()),
        _format_floats(run.scores),
        string_scalar(run.name),
        string_scalar(" "),
    )


def trec_qrels_lines(qrels: Qrels) -> pa.Array:
    qids = string_array(qrels.query_ids)
    _check_words(qids, "a query id")
    _check_words(qrels.doc_ids, "a document id")
    row_q = np.repeat(np.arange(len(qrels.query_ids)), np.diff(qrels.offsets))
    return pc.binary_join_element_wise(
        qids.take(numpy_array(row_q)),
        string_scalar("0"),
        qrels.doc_ids,
        numpy_array(qrels.grades).cast(pa.string()),
        string_scalar(" "),
    )


def _format_floats(values: npt.NDArray[np.float64]) -> pa.Array:
    """Shortest text that reads back to the same double (Arrow formats floats that way)."""
    return numpy_array(np.asarray(values, dtype=np.float64)).cast(pa.string())


def write_lines(lines: pa.Array, out: object) -> None:
    """Write strings, one per line, to a binary file object: Arrow's bytes as they are (a
    Python string per line cost more than making the lines)."""
    step = 1 << 18
    for lo in range(0, len(lines), step):
        chunk = pc.binary_join_element_wise(
            lines.slice(lo, step), string_scalar("\n"), string_scalar("")
        )
        if chunk.null_count:
            raise ValueError("cannot write a null line")
        width = 8 if pa.types.is_large_string(chunk.type) else 4
        offsets = np.frombuffer(chunk.buffers()[1], dtype=f"<i{width}", count=len(chunk) + 1)
        data = chunk.buffers()[2]
        if data is not None:
            out.write(memoryview(data)[offsets[0] : offsets[-1]])  # type: ignore[attr-defined]
