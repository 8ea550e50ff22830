"""``read_qrels`` / ``read_run``: one entry point for every supported input.

``source`` may be a path (``str`` / ``Path``), an open file (text or binary), a mapping
``{query_id: {doc_id: value}}``, a pandas DataFrame or a pyarrow Table. gzip input is recognised by
its magic bytes, whatever the file is called.

``format="auto"`` decides by the file name, then by the content:

- ``.parquet`` / ``.pq`` or the ``PAR1`` magic: Parquet;
- ``.jsonl`` / ``.ndjson``, or a first line that is a JSON object: JSONL (a ``.json`` file holding
  one ``{query_id: {doc_id: value}}`` object is read as a mapping);
- a first line that names columns (``query-id corpus-id score``, ``qid,docno,rel``...): CSV (comma)
  or TSV (tab), as in BEIR;
- anything else: TREC (``qid iter docno rel`` / ``qid Q0 docno rank score runid``).

Explicit formats: ``"trec"``, ``"tsv"`` (alias ``"beir"``), ``"csv"``, ``"jsonl"``, ``"json"``,
``"parquet"``. See :mod:`rankscope.data.trec` for TREC parsing rules and strictness, and
:mod:`rankscope.data.tabular` for accepted column names.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO, Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from rankscope.data import tabular
from rankscope.data._source import (
    PARQUET_MAGIC,
    Loaded,
    Warner,
    Where,
    bom_length,
    display_name,
    load,
    note_bom,
    path_suffixes,
)
from rankscope.data.qrels import Qrels, qrels_from_table
from rankscope.data.run import Run, run_from_table
from rankscope.data.trec import read_trec_qrels, read_trec_run
from rankscope.errors import InputError

Source = str | os.PathLike[str] | IO[Any] | Mapping[Any, Any] | Any
FORMATS = ("auto", "trec", "tsv", "beir", "csv", "jsonl", "json", "parquet")


def read_qrels(
    source: Source,
    *,
    format: str = "auto",
    strict: bool = True,
    on_warning: Callable[[str], None] | None = None,
) -> Qrels:
    """Read relevance judgments. Bad input raises ``FormatError`` / ``InputError``.

    ``strict=False`` reads the way trec_eval does and reports each oddity through
    ``on_warning`` (default: a ``DataWarning``).
    """
    warn = Warner(on_warning)
    table = tabular.in_memory_table(source, "relevance")
    if table is not None:
        tbl, where = table
        return qrels_from_table(tbl, where, strict=strict, warn=warn)
    loaded = _load(source)
    fmt = _detect(loaded, source, format)
    if fmt == "trec":
        return read_trec_qrels(loaded, strict=strict, warn=warn)
    tbl, where, lines = _read_table(loaded, fmt, "relevance", warn)
    return qrels_from_table(tbl, where, strict=strict, warn=warn, lines=lines)


def read_run(
    source: Source,
    *,
    name: str | None = None,
    format: str = "auto",
    strict: bool = True,
    on_warning: Callable[[str], None] | None = None,
) -> Run:
    """Read a ranked run. ``name`` overrides the run name found in the input.

    Without ``name``: the TREC runid of the last line, a run-name column's last value, or the
    file's stem (``bm25`` for ``bm25.parquet``), else ``"run"``.
    """
    warn = Warner(on_warning)
    table = tabular.in_memory_table(source, "score")
    default = _default_name(source)
    if table is not None:
        tbl, where = table
        return run_from_table(tbl, where, name=name, default_name=default, strict=strict, warn=warn)
    loaded = _load(source)
    fmt = _detect(loaded, source, format)
    if fmt == "trec":
        return read_trec_run(loaded, name=name, strict=strict, warn=warn)
    tbl, where, lines = _read_table(loaded, fmt, "score", warn)
    return run_from_table(
        tbl, where, name=name, default_name=default, strict=strict, warn=warn, lines=lines
    )


# --------------------------------------------------------------------------- helpers


def _default_name(source: Source) -> str:
    if isinstance(source, str | os.PathLike) or hasattr(source, "read"):
        name = display_name(source)
        if name != "<stream>":
            stem = Path(name).name.split(".")[0]
            if stem:
                return stem
    return "run"


def _load(source: Source) -> Loaded:
    if isinstance(source, str | os.PathLike) or hasattr(source, "read"):
        return load(source)  # type: ignore[arg-type]
    raise InputError(
        "cannot read this kind of object",
        value=type(source).__name__,
        hint="Pass a path, an open file, a dict, a pandas DataFrame or a pyarrow Table",
    )


def _detect(loaded: Loaded, source: Source, fmt: str) -> str:
    fmt = fmt.lower()
    if fmt not in FORMATS:
        raise InputError("unknown format", value=fmt, hint=f"Use one of: {', '.join(FORMATS)}")
    if fmt == "beir":
        return "tsv"
    if fmt != "auto":
        return fmt
    data = loaded.data
    if data[:4] == PARQUET_MAGIC:
        return "parquet"
    suffix = path_suffixes(source)
    if suffix in ([".parquet"], [".pq"]):
        return "parquet"
    if suffix in ([".jsonl"], [".ndjson"]):
        return "jsonl"
    if suffix == [".json"]:
        return "json"
    first = _first_line(data)
    if first.startswith("{") and _is_json_object(first):
        return "jsonl"
    if suffix == [".csv"] or ("," in first and "\t" not in first):
        fields = [f.strip().strip('"') for f in first.split(",")]
        if tabular.looks_like_header(fields):
            return "csv"
    if tabular.looks_like_header(first.split("\t")) or tabular.looks_like_header(first.split()):
        return "tsv"
    return "trec"


def _is_json_object(text: str) -> bool:
    try:
        return isinstance(json.loads(text), dict)
    except ValueError:
        return False


def _first_line(data: Any) -> str:
    head = bytes(data[bom_length(data) : 1 << 16])
    for line in head.split(b"\n"):
        text = line.decode("utf-8", "replace").strip()
        if text and not text.startswith("#"):
            return text
    return ""


def _read_table(
    loaded: Loaded, fmt: str, value_role: str, warn: Warner
) -> tuple[pa.Table, Where, npt.NDArray[np.int64] | None]:
    where = loaded.where
    if len(loaded.data) == 0:
        raise where.error(
            "empty file", hint="Check that the file was written completely", cls=InputError
        )
    if fmt == "parquet":
        rows = Where(where.name, unit="row")
        return tabular.read_parquet(loaded.data, rows), rows, None
    # the text readers copy a mapped file into bytes anyway: this copy starts after the mark
    bom = note_bom(loaded.data, where, warn)
    data = loaded.data[bom:] if bom else loaded.data
    if fmt in ("csv", "tsv"):
        delim = "," if fmt == "csv" else ("\t" if "\t" in _first_line(data) else " ")
        table, lines = tabular.read_delimited(data, where, delim)
        return table, where, lines
    if fmt == "json":
        doc = tabular.load_json_document(data)
        if isinstance(doc, Mapping) and all(isinstance(v, Mapping) for v in doc.values()):
            entries = Where(where.name, unit="entry")
            return tabular.table_from_mapping(doc, entries, value_role), entries, None
        if isinstance(doc, list) and all(isinstance(v, Mapping) for v in doc):
            items = Where(where.name, unit="item")
            return pa.Table.from_pylist(doc), items, None
    table, lines = tabular.read_jsonl(data, where)
    return table, where, lines
