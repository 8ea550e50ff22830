"""The rows of qrels and runs from tables: CSV/TSV with a header (BEIR qrels), JSONL, Parquet,
dicts, pandas (:func:`rankscope.data.qrels.qrels_from_table` and
:func:`rankscope.data.run.run_from_table` make the values).

Columns are found by name, case-insensitively, with ``-`` and spaces read as ``_``:

======== =====================================================================================
role      accepted names (first present wins)
======== =====================================================================================
query     ``query_id`` (BEIR ``query-id``), ``qid``, ``query``, ``topic``, ``topic_id``
document  ``doc_id``, ``docno``, ``docid``, ``corpus_id`` (BEIR ``corpus-id``), ``document_id``,
          ``pid``, ``passage_id``, ``did``
grade     ``relevance``, ``rel``, ``grade``, ``label``, ``judgment``, ``score`` (qrels only)
score     ``score``, ``sim``, ``similarity`` (runs only); without one, ``rank`` gives the order
          (score = -rank)
run name  ``run_id``, ``runid``, ``run``, ``system``, ``tag`` (runs only; the last row's value
          names the run, as trec_eval takes the runid of the last line)
======== =====================================================================================

Other columns (``iteration``, ``Q0``, ``rank`` when a score is present...) are ignored. Ids may be
strings or integers; grades must be integers (integral floats such as ``2.0`` are accepted) and
scores finite numbers. With ``strict=False`` a non-integral grade is truncated and an unreadable
score becomes what C ``atof`` makes of it, each reported as a warning.

A ``.json`` file may also hold one object ``{query_id: {doc_id: value}}`` (the pytrec_eval / ranx
shape), like a Python dict.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.csv as pcsv

from rankscope.data._nested import checked_rows
from rankscope.data._source import Buffer, Warner, Where
from rankscope.data.arrow import numpy_array, restore_table, string_array
from rankscope.data.numbers import GRADE_RANGE_HINT, MIN_GRADE, c_atof, is_plain_float
from rankscope.errors import FormatError, InputError

QUERY_NAMES = ("query_id", "qid", "query", "topic", "topic_id", "queryid")
DOC_NAMES = (
    "doc_id",
    "docno",
    "docid",
    "corpus_id",
    "document_id",
    "pid",
    "passage_id",
    "did",
)
GRADE_NAMES = ("relevance", "rel", "grade", "label", "judgment", "judgement", "score")
SCORE_NAMES = ("score", "sim", "similarity")
RANK_NAMES = ("rank",)
RUN_NAMES = ("run_id", "runid", "run", "system", "tag")


def norm(name: str) -> str:
    return name.strip().lower().replace("-", "_").replace(" ", "_")


def _pick(columns: list[str], wanted: tuple[str, ...]) -> str | None:
    by_norm: dict[str, str] = {}
    for c in columns:
        by_norm.setdefault(norm(c), c)
    for w in wanted:
        if w in by_norm:
            return by_norm[w]
    return None


def looks_like_header(fields: list[str]) -> bool:
    """True when a first line names columns: a query column and a document column."""
    normed = [norm(f) for f in fields]
    return any(f in QUERY_NAMES for f in normed) and any(f in DOC_NAMES for f in normed)


# --------------------------------------------------------------------------- columns -> values


class _Table:
    """Columns of one input with row locations for messages."""

    def __init__(self, table: pa.Table, where: Where, lines: npt.NDArray[np.int64] | None) -> None:
        self.table = table
        self.where = where
        self.row_lines = lines  # line of each row; ``None``: row i is reported as i + 1

    def lines(self) -> npt.NDArray[np.int64] | None:
        return self.row_lines

    def at(self, row: int) -> int:
        return row + 1 if self.row_lines is None else int(self.row_lines[row])

    def column(self, wanted: tuple[str, ...], role: str, required: bool = True) -> str | None:
        name = _pick(self.table.column_names, wanted)
        if name is None and required:
            raise self.where.error(
                f"no {role} column",
                value=self.table.column_names,
                hint=f"Name a column one of: {', '.join(wanted)}",
            )
        return name

    def ids(self, col: str, role: str) -> pa.Array:
        values = self.table.column(col).combine_chunks()
        if pa.types.is_dictionary(values.type):
            values = values.cast(values.type.value_type)
        if pa.types.is_floating(values.type):
            raise self.where.error(
                f"{role} column {col!r} holds floating-point numbers",
                hint="Store ids as strings or integers",
            )
        if not (pa.types.is_string(values.type) or pa.types.is_large_string(values.type)):
            try:
                values = values.cast(pa.string())
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
                raise self.where.error(
                    f"{role} column {col!r} cannot be read as text ({values.type})",
                    hint="Store ids as strings or integers",
                ) from exc
        return values.cast(pa.string())

    def id_columns(self, what: str) -> tuple[pa.Array, pa.Array]:
        """The query and document id columns; an empty table is refused."""
        qcol = self.column(QUERY_NAMES, "query id")
        dcol = self.column(DOC_NAMES, "document id")
        assert qcol is not None and dcol is not None
        if self.table.num_rows == 0:
            raise self.where.error(f"no {what} (the table is empty)", cls=InputError)
        return self.ids(qcol, "query id"), self.ids(dcol, "document id")

    def _missing(self, values: pa.Array, col: str) -> None:
        if values.null_count:
            row = int(np.flatnonzero(values.is_null().to_numpy(zero_copy_only=False))[0])
            raise self.where.error(
                f"missing value in column {col!r}", at=self.at(row), hint="Fill every row"
            )

    def _numbers(
        self, texts: list[str], strict: bool, warn: Warner, *, what: str, problem: str, hint: str
    ) -> npt.NDArray[np.float64]:
        """Numbers written as text: plain decimals, else (lenient) what C ``atof`` reads."""
        out = np.empty(len(texts), dtype=np.float64)
        for i, text in enumerate(texts):
            word = text.strip().encode("utf-8")
            if is_plain_float(word):
                out[i] = float(word)
            elif strict:
                raise self.where.error(problem, at=self.at(i), value=text, hint=hint)
            else:
                out[i] = c_atof(word)
                warn(f"{self.where.prefix(self.at(i))}{what} {text!r} read as {out[i]!r}")
        return out

    def scores(self, col: str, strict: bool, warn: Warner) -> npt.NDArray[np.float64]:
        values = self.table.column(col).combine_chunks()
        self._missing(values, col)
        if pa.types.is_string(values.type) or pa.types.is_large_string(values.type):
            out = self._numbers(
                values.to_pylist(),
                strict,
                warn,
                what="score",
                problem=f"non-numeric score in column {col!r}",
                hint="Scores must be finite numbers",
            )
        elif pa.types.is_integer(values.type) or pa.types.is_floating(values.type):
            out = values.cast(pa.float64()).to_numpy(zero_copy_only=False).astype(np.float64)
        else:
            raise self.where.error(
                f"score column {col!r} is not numeric ({values.type})",
                hint="Scores must be finite numbers",
            )
        bad = ~np.isfinite(out)
        if bad.any():
            rows = np.flatnonzero(bad)
            if strict:
                row = int(rows[0])
                raise self.where.error(
                    "NaN or infinite score",
                    at=self.at(row),
                    value=float(out[row]),
                    hint="Scores must be finite numbers",
                )
            for row in rows.tolist():
                warn(f"{self.where.prefix(self.at(row))}score is {out[row]!r}")
        return out

    def grades(self, col: str, strict: bool, warn: Warner) -> npt.NDArray[np.int64]:
        values = self.table.column(col).combine_chunks()
        self._missing(values, col)
        if pa.types.is_boolean(values.type) or pa.types.is_integer(values.type):
            ints: npt.NDArray[np.int64] = values.cast(pa.int64()).to_numpy(zero_copy_only=False)
            return ints.astype(np.int64)
        if pa.types.is_string(values.type) or pa.types.is_large_string(values.type):
            floats = self._numbers(
                values.to_pylist(),
                strict,
                warn,
                what="grade",
                problem=f"relevance grade in column {col!r} is not a number",
                hint="Grades must be integers such as 0, 1, 2",
            )
        elif pa.types.is_floating(values.type):
            floats = values.cast(pa.float64()).to_numpy(zero_copy_only=False)
        else:
            raise self.where.error(
                f"grade column {col!r} is not numeric ({values.type})",
                hint="Grades must be integers such as 0, 1, 2",
            )
        finite = np.isfinite(floats)
        whole = finite & (floats == np.trunc(np.where(finite, floats, 0.0)))
        if not whole.all():
            row = int(np.flatnonzero(~whole)[0])
            if strict or not finite[row]:
                raise self.where.error(
                    "relevance grade is not an integer",
                    at=self.at(row),
                    value=float(floats[row]),
                    hint="Grades must be integers such as 0, 1, 2",
                )
            for r in np.flatnonzero(~whole).tolist():
                warn(f"{self.where.prefix(self.at(r))}grade {floats[r]!r} truncated")
        outside = (floats < float(MIN_GRADE)) | (floats >= 2.0**63)  # past int64
        if outside.any():
            row = int(np.flatnonzero(outside)[0])
            raise self.where.error(
                "relevance grade out of range",
                at=self.at(row),
                value=float(floats[row]),
                hint=GRADE_RANGE_HINT,
            )
        return np.trunc(floats).astype(np.int64)


def in_memory_table(source: object, value_role: str) -> tuple[pa.Table, Where] | None:
    """The table of an in-memory source (a mapping ``{query_id: {doc_id: value}}``, a pyarrow
    Table or a pandas DataFrame) and where its rows come from; None for anything else."""
    if isinstance(source, Mapping):
        where = Where("<dict>", unit="row")
        return table_from_mapping(source, where, value_role), where
    if isinstance(source, pa.Table):
        return source, Where("<Table>", unit="row")
    if type(source).__name__ == "DataFrame" and hasattr(source, "columns"):
        try:
            table = pa.Table.from_pandas(source, preserve_index=False)
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
            raise InputError(
                f"cannot convert the DataFrame ({exc})",
                path="<DataFrame>",
                hint="Give each column one type: text ids, numeric scores or grades",
            ) from None
        return table, Where("<DataFrame>", unit="row")
    return None


class Rows(NamedTuple):
    """A table's checked columns in its row order, with the line of each row for messages: what
    :func:`rankscope.data.qrels.build_qrels` / :func:`rankscope.data.run.build_run` take."""

    query_ids: pa.Array
    doc_ids: pa.Array
    values: npt.NDArray[Any]  # grades (int64) or scores (float64)
    lines: npt.NDArray[np.int64] | None  # None: the row numbers
    #: the run name the table gives (its run-name column's last value), for runs
    name: str | None = None


def qrels_rows(
    table: pa.Table,
    where: Where,
    *,
    strict: bool,
    warn: Warner,
    lines: npt.NDArray[np.int64] | None = None,
) -> Rows:
    """The judgments of a table; ``lines`` gives each row's line (default: row number)."""
    t = _Table(table, where, lines)
    gcol = t.column(GRADE_NAMES, "relevance")
    assert gcol is not None
    qids, docs = t.id_columns("judgments")
    grades = t.grades(gcol, strict, warn)
    warn.finish(where)
    return Rows(qids, docs, grades, t.lines())


def run_rows(
    table: pa.Table,
    where: Where,
    *,
    name: str | None,
    strict: bool,
    warn: Warner,
    lines: npt.NDArray[np.int64] | None = None,
) -> Rows:
    """The results of a table; ``lines`` gives each row's line (default: row number). The name
    is ``name``, else the table's run-name column's last value, else None."""
    t = _Table(table, where, lines)
    qids, docs = t.id_columns("results")
    scol = t.column(SCORE_NAMES, "score", required=False)
    if scol is not None:
        scores = t.scores(scol, strict, warn)
    else:
        rcol = t.column(RANK_NAMES, "score", required=False)
        if rcol is None:
            raise where.error(
                "no score or rank column",
                value=table.column_names,
                hint=f"Name a column one of: {', '.join(SCORE_NAMES + RANK_NAMES)}",
            )
        scores = -t.scores(rcol, strict, warn)
    run_name = name
    if run_name is None:
        ncol = _pick(table.column_names, RUN_NAMES)
        if ncol is not None:
            last = table.column(ncol)[table.num_rows - 1].as_py()
            run_name = None if last is None else str(last)
    warn.finish(where)
    return Rows(qids, docs, scores, t.lines(), run_name or None)


# --------------------------------------------------------------------------- readers


def read_delimited(
    data: Buffer, where: Where, delimiter: str
) -> tuple[pa.Table, npt.NDArray[np.int64]]:
    """A CSV/TSV file with a header row; returns the table and the line of each row."""
    raw = data if isinstance(data, bytes) else data[:]
    nl = raw.find(b"\n")
    header_text = raw[: nl if nl >= 0 else len(raw)].decode("utf-8", "replace").rstrip("\r")
    header = next(csv.reader([header_text], delimiter=delimiter))
    quote = '"' if delimiter == "," else False
    try:
        table = pcsv.read_csv(
            pa.BufferReader(pa.py_buffer(raw)),
            read_options=pcsv.ReadOptions(column_names=header, skip_rows=1),
            parse_options=pcsv.ParseOptions(
                delimiter=delimiter, quote_char=quote, ignore_empty_lines=False
            ),
            convert_options=pcsv.ConvertOptions(
                column_types=dict.fromkeys(header, pa.string()),
                strings_can_be_null=False,
            ),
        )
    except (pa.ArrowInvalid, UnicodeDecodeError) as exc:
        raise _locate_csv_error(raw, where, delimiter, len(header), exc) from None
    if delimiter == ",":  # undo what the spreadsheet-safe writer added: ids round-trip
        table = restore_table(table)
    # Rows follow the header one per line (blank lines are refused above).
    return table, np.arange(2, 2 + table.num_rows, dtype=np.int64)


def _locate_csv_error(
    raw: bytes, where: Where, delimiter: str, ncols: int, exc: Exception
) -> InputError:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as uexc:
        line = raw.count(b"\n", 0, uexc.start) + 1
        return where.error("text is not valid UTF-8", at=line, hint="Convert the file to UTF-8")
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    for row in reader:
        if len(row) != ncols:
            return where.error(
                f"expected {ncols} fields like the header, found {len(row)}",
                at=reader.line_num,
                value=delimiter.join(row),
                hint="Every row needs one value per header column; remove blank lines",
            )
    return where.error(f"cannot parse the file ({exc})", hint="Check the delimiter and quoting")


def read_jsonl(data: Buffer, where: Where) -> tuple[pa.Table, npt.NDArray[np.int64]]:
    """One JSON object per line; returns the table and the line of each row."""
    raw = data if isinstance(data, bytes) else data[:]
    rows: list[dict[str, Any]] = []
    lines: list[int] = []
    for no, line in enumerate(raw.split(b"\n"), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise where.error(
                f"invalid JSON ({exc})",
                at=no,
                value=line[:80].decode("utf-8", "replace"),
                hint="Each line must be one JSON object",
            ) from None
        if not isinstance(obj, dict):
            raise where.error(
                "a JSONL line must be an object",
                at=no,
                value=line[:80].decode("utf-8", "replace"),
                hint='Write objects such as {"query_id": "1", "doc_id": "d1", "score": 2.5}',
            )
        rows.append(obj)
        lines.append(no)
    if not rows:
        raise where.error("no JSON lines", hint="The file is empty", cls=InputError)
    names: list[str] = []
    for r in rows:
        for k in r:
            if k not in names:
                names.append(k)
    columns: dict[str, pa.Array] = {}
    for k in names:
        values = [r.get(k) for r in rows]
        columns[k] = _json_column(values, k, where, lines)
    return pa.table(columns), np.asarray(lines, dtype=np.int64)


def _json_column(values: list[Any], key: str, where: Where, lines: list[int]) -> pa.Array:
    for v, no in zip(values, lines, strict=True):
        if v is not None and not isinstance(v, str | int | float):
            raise where.error(
                f"unsupported value for {key!r}",
                at=no,
                value=v,
                hint="Use strings for ids and numbers for scores and grades",
            )
    kinds = {type(v) for v in values if v is not None}
    if kinds and kinds <= {int, bool}:
        return pa.array([None if v is None else int(v) for v in values], type=pa.int64())
    if kinds and kinds <= {int, float, bool}:
        return pa.array([None if v is None else float(v) for v in values], type=pa.float64())
    # text, or text mixed with numbers: keep as text; scores and grades are parsed later
    return pa.array([None if v is None else str(v) for v in values], type=pa.string())


def read_parquet(data: Buffer, where: Where) -> pa.Table:
    import pyarrow.parquet as pq  # 13 ms that reading TREC files does not need

    try:
        return pq.read_table(pa.BufferReader(pa.py_buffer(data)))
    except (pa.ArrowInvalid, OSError) as exc:
        raise where.error(
            f"cannot read Parquet ({exc})", hint="Check that the file is a complete Parquet file"
        ) from None


def table_from_mapping(data: Mapping[Any, Any], where: Where, value_role: str) -> pa.Table:
    """``{query_id: {doc_id: value}}`` as a table with ``query_id, doc_id, value`` columns."""
    qids: list[str] = []
    docs: list[str] = []
    values: list[Any] = []
    for q, rows in checked_rows(data, value_role, where):
        qids.extend([q] * len(rows))
        docs.extend(d for d, _ in rows)
        values.extend(v for _, v in rows)
    # scores are floats whatever they were given as (an integer past 2**53 stays readable)
    ints = value_role != "score" and all(isinstance(v, int | np.integer) for v in values)
    return pa.table(
        {
            "query_id": string_array(qids),
            "doc_id": string_array(docs),
            value_role: numpy_array(np.asarray(values, dtype=np.int64 if ints else np.float64)),
        }
    )


def load_json_document(data: Buffer) -> Any:
    """The value of a whole-file JSON document, or ``None`` if it is not one (e.g. JSONL)."""
    raw = data if isinstance(data, bytes) else data[:]
    try:
        return json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None


__all__ = [
    "FormatError",
    "Rows",
    "in_memory_table",
    "looks_like_header",
    "qrels_rows",
    "read_delimited",
    "read_jsonl",
    "read_parquet",
    "run_rows",
    "table_from_mapping",
]
