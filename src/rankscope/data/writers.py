"""``write_qrels`` / ``write_run``: TREC (default), JSONL, CSV, TSV with a header, Parquet.

The format follows the file name unless given: ``.parquet``/``.pq`` Parquet, ``.jsonl``/``.ndjson``
JSONL, ``.csv`` CSV, ``.tsv`` TSV with a header (BEIR's ``query-id corpus-id score`` for qrels),
anything else TREC. A further ``.gz`` suffix gzip-compresses text formats. Everything written reads
back to an equal value with :func:`rankscope.data.read_qrels` / :func:`rankscope.data.read_run`;
scores are written in the shortest form that reads back to the same double.
"""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import IO

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv

from rankscope.data.arrow import (
    neutralise_table,
    numpy_array,
    string_array,
    string_scalar,
    to_numpy,
)
from rankscope.data.qrels import Qrels, qrels_table
from rankscope.data.run import Run, run_table
from rankscope.data.trec import trec_qrels_lines, trec_run_lines, write_lines
from rankscope.errors import InputError

WRITE_FORMATS = ("trec", "jsonl", "csv", "tsv", "parquet")
RUN_NAME_KEY = b"rankscope.run_name"


def _format_for(path: Path, fmt: str | None) -> tuple[str, bool]:
    suffixes = [s.lower() for s in path.suffixes]
    gz = bool(suffixes) and suffixes[-1] in (".gz", ".gzip")
    if gz:
        suffixes = suffixes[:-1]
    if fmt is None:
        last = suffixes[-1] if suffixes else ""
        fmt = {
            ".parquet": "parquet",
            ".pq": "parquet",
            ".jsonl": "jsonl",
            ".ndjson": "jsonl",
            ".csv": "csv",
            ".tsv": "tsv",
        }.get(last, "trec")
    fmt = fmt.lower()
    if fmt not in WRITE_FORMATS:
        raise InputError(
            "unknown output format", value=fmt, hint=f"Use one of: {', '.join(WRITE_FORMATS)}"
        )
    if fmt == "parquet" and gz:
        raise InputError(
            "Parquet files are compressed internally",
            path=str(path),
            hint="Drop the .gz suffix",
        )
    return fmt, gz


def _open(path: Path, gz: bool) -> IO[bytes]:
    path.parent.mkdir(parents=True, exist_ok=True)
    if gz:
        return gzip.open(path, "wb", compresslevel=6)  # type: ignore[return-value]
    return path.open("wb")


def write_run(run: Run, path: str | os.PathLike[str], format: str | None = None) -> Path:
    """Write ``run`` to ``path``; returns the path written."""
    out = Path(path)
    fmt, gz = _format_for(out, format)

    def table() -> pa.Table:
        t = run_table(run)
        if fmt == "parquet":
            t = t.replace_schema_metadata({RUN_NAME_KEY: run.name.encode("utf-8")})
        return t

    return _write(out, fmt, gz, table, lambda: trec_run_lines(run))


def write_qrels(qrels: Qrels, path: str | os.PathLike[str], format: str | None = None) -> Path:
    """Write ``qrels`` to ``path``; returns the path written. TSV uses BEIR's header."""
    out = Path(path)
    fmt, gz = _format_for(out, format)

    def table() -> pa.Table:
        t = qrels_table(qrels)
        return t.rename_columns(["query-id", "corpus-id", "score"]) if fmt == "tsv" else t

    return _write(out, fmt, gz, table, lambda: trec_qrels_lines(qrels))


def _write(
    out: Path,
    fmt: str,
    gz: bool,
    table: Callable[[], pa.Table],
    trec_lines: Callable[[], pa.Array],
) -> Path:
    """``table`` and ``trec_lines`` are made only for the format that needs them."""
    if fmt == "parquet":
        import pyarrow.parquet as pq  # 13 ms that writing text does not need

        pq.write_table(table(), out)
        return out
    with _open(out, gz) as fh:
        if fmt == "trec":
            write_lines(trec_lines(), fh)
        elif fmt == "jsonl":
            _write_jsonl(table(), fh)
        else:
            _write_delimited(table(), fh, "," if fmt == "csv" else "\t")
    return out


#: the characters json.dumps(..., ensure_ascii=False) escapes in a string: the quote, the
#: backslash and the C0 controls (everything else it writes as it is)
_JSON_ESCAPED = r'[\x00-\x1f"\\]'


def _write_jsonl(table: pa.Table, fh: IO[bytes]) -> None:
    """One object per row, byte for byte ``json.dumps(row, ensure_ascii=False)`` (keys in
    column order, ``", "`` and ``": "`` between them), built a column at a time by Arrow:
    ``json.dumps`` per row cost about 3 µs a line, most of an export's CPU time."""
    keys = [json.dumps(name, ensure_ascii=False) + ": " for name in table.column_names]
    for batch in table.to_batches(max_chunksize=1 << 16):
        parts: list[pa.Array | pa.Scalar] = []
        for i, (key, column) in enumerate(zip(keys, batch.columns, strict=True)):
            parts += [string_scalar(("{" if i == 0 else ", ") + key), _json_values(column)]
        parts.append(string_scalar("}"))
        write_lines(pc.binary_join_element_wise(*parts, string_scalar("")), fh)


def _json_values(column: pa.Array) -> pa.Array:
    """Each value as ``json.dumps`` writes it (``null`` for a null)."""
    kind = column.type
    if pa.types.is_dictionary(kind):
        column, kind = column.dictionary_decode(), kind.value_type
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        text = pc.binary_join_element_wise(
            string_scalar('"'), column, string_scalar('"'), string_scalar("")
        )
        # Kleene "and": false, not null, for a null value
        escaped = pc.and_kleene(
            pc.match_substring_regex(column, _JSON_ESCAPED), pc.is_valid(column)
        )
        if pc.any(escaped).as_py():  # rare: only those values go through json.dumps
            rows = np.flatnonzero(to_numpy(escaped))
            values = column.take(numpy_array(rows)).to_pylist()
            text = pc.replace_with_mask(
                text,
                escaped,
                string_array([json.dumps(v, ensure_ascii=False) for v in values]).cast(text.type),
            )
    elif pa.types.is_integer(kind):  # Arrow writes integers as str(int) does
        text = column.cast(pa.string())
    elif pa.types.is_floating(kind) or pa.types.is_boolean(kind):
        # json's own float text (repr, NaN, Infinity), in one call: no number holds ", "
        listed = json.dumps(column.to_pylist())[1:-1]
        text = string_array(listed.split(", ") if listed else [])
    else:
        raise TypeError(f"cannot write a column of {kind} as JSONL")
    return pc.fill_null(text, string_scalar("null"))


def _write_delimited(table: pa.Table, fh: IO[bytes], delimiter: str) -> None:
    if delimiter == "\t":
        for col in ("query_id", "doc_id", "query-id", "corpus-id"):
            if col in table.column_names:
                values = table.column(col)
                bad = pa.compute.any(pa.compute.match_substring_regex(values, r"[\t\n\r]"))
                if bad.as_py():
                    raise InputError(
                        "cannot write TSV: an id contains a tab or line break",
                        hint="Write CSV, JSONL or Parquet instead",
                    )
    table = table.cast(
        pa.schema(
            [
                pa.field(f.name, pa.string()) if pa.types.is_dictionary(f.type) else f
                for f in table.schema
            ]
        )
    )
    if delimiter == ",":  # a CSV opens in a spreadsheet: no cell may run as a formula
        table = neutralise_table(table)
    # pyarrow quotes header names; a plain header reads everywhere (BEIR writes none).
    fh.write((delimiter.join(table.column_names) + "\n").encode("utf-8"))
    pcsv.write_csv(
        table,
        fh,
        write_options=pcsv.WriteOptions(
            include_header=False,
            delimiter=delimiter,
            quoting_style="needed" if delimiter == "," else "none",
        ),
    )
