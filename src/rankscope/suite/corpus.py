"""Corpus sources: BEIR folders, JSONL files, folders of files, ir_datasets, Python docstrings.

Each source yields :class:`~rankscope.engines.base.Document` values; BEIR folders and ir_datasets
also bring their own queries and judgments, which the suite uses when it gives none itself.

This module is also the one reader of JSONL (:func:`iter_jsonl`) and of BEIR files
(:class:`BeirFolder`, :func:`read_jsonl_documents`, :func:`read_queries`) for the benchmark,
``rankscope pool``, ``rankscope judge`` and ``rankscope needle``: every line is decoded on its
own, so bytes that are not UTF-8 are reported with the file and line, like any other bad line.
"""

from __future__ import annotations

import fnmatch
import gzip
import importlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from rankscope.engines.base import Document, Query, surrogate_problem
from rankscope.errors import ConfigError, FormatError, InputError
from rankscope.suite.symbols import symbols_in

if TYPE_CHECKING:  # the judge reads its files here without numpy, pyarrow or the suite schema
    from rankscope.data.qrels import Qrels
    from rankscope.suite.schema import BeirCorpus, CorpusSpec, FilesCorpus


def iter_documents(spec: CorpusSpec, base_dir: Path) -> Iterator[Document]:
    """The documents of a corpus, read one at a time as they are consumed, in a stable order.

    Where the source is (a file or folder that is not there) is checked now; what it holds
    (a bad line, a folder without text files) when it is read.
    """
    from rankscope.suite.schema import (  # pydantic (see above)
        BeirCorpus,
        DocstringsCorpus,
        FilesCorpus,
        IrDatasetsCorpus,
        JsonlCorpus,
    )

    if isinstance(spec, BeirCorpus):
        return beir_folder(spec, base_dir).documents()
    if isinstance(spec, JsonlCorpus):
        path = _existing(base_dir / spec.path, "corpus.path")
        return read_jsonl_documents(path, spec.id_field, spec.title_field, spec.text_field)
    if isinstance(spec, FilesCorpus):
        root = _existing(base_dir / spec.path, "corpus.path", folder=True)
        return _file_documents(spec, root)
    if isinstance(spec, IrDatasetsCorpus):
        dataset = _ir_dataset(spec.dataset)
        return (_ir_document(d) for d in dataset.docs_iter())
    if isinstance(spec, DocstringsCorpus):
        from rankscope.suite.docstrings import load_corpus  # imports the modules it reads

        return iter(load_corpus(spec.modules))
    raise ConfigError(f"unknown corpus type {spec!r}")  # pragma: no cover - schema prevents it


def corpus_queries(spec: CorpusSpec, base_dir: Path) -> list[Query] | None:
    """Queries that come with the corpus (BEIR ``queries.jsonl``, ir_datasets), else None."""
    from rankscope.suite.schema import BeirCorpus, IrDatasetsCorpus  # pydantic (see above)

    if isinstance(spec, BeirCorpus):
        return beir_folder(spec, base_dir).queries()
    if isinstance(spec, IrDatasetsCorpus):
        dataset = _ir_dataset(spec.dataset)
        if not dataset.has_queries():
            return None
        return [Query(id=str(q.query_id), text=_ir_query_text(q)) for q in dataset.queries_iter()]
    return None


def corpus_qrels(spec: CorpusSpec, base_dir: Path, *, required: bool = True) -> Qrels | None:
    """Judgments that come with the corpus (BEIR ``qrels/<split>.tsv``, ir_datasets), else None.

    A BEIR folder without qrels for its split is an error when ``required`` (the suite has no
    judgments of its own), else None: a suite may bring queries and judgments for a BEIR corpus
    that has none. A missing folder is always an error ("folder not found").
    """
    # numpy, pyarrow, pydantic (see above)
    from rankscope.data.qrels import Qrels
    from rankscope.suite.schema import BeirCorpus, IrDatasetsCorpus

    if isinstance(spec, BeirCorpus):
        return beir_folder(spec, base_dir).qrels(required=required)
    if isinstance(spec, IrDatasetsCorpus):
        dataset = _ir_dataset(spec.dataset)
        if not dataset.has_qrels():
            return None
        judged: dict[str, dict[str, int]] = {}
        for row in dataset.qrels_iter():
            judged.setdefault(str(row.query_id), {})[str(row.doc_id)] = int(row.relevance)
        return Qrels.from_dict(judged, source=f"ir_datasets:{spec.dataset}")
    return None


@dataclass(frozen=True, slots=True)
class BeirFolder:
    """A BEIR folder: ``corpus.jsonl``, ``queries.jsonl`` and ``qrels/<split>.tsv``.

    Each part is optional except the corpus: :attr:`has_queries` and :attr:`has_qrels` say
    what the folder holds, so a suite that brings its own queries and judgments can use a
    folder without them. ``.jsonl.gz`` files are read as well. ``option`` names the setting the
    folder came from, for error messages.
    """

    root: Path
    split: str = "test"
    option: str = "corpus.path"

    @classmethod
    def open(cls, root: Path, split: str = "test", option: str = "corpus.path") -> BeirFolder:
        """The folder at ``root``; ConfigError "folder not found" when it is not there."""
        return cls(_existing(root, option, folder=True), split, option)

    def _file(self, name: str) -> Path | None:
        for candidate in (self.root / name, self.root / f"{name}.gz"):
            if candidate.is_file():
                return candidate
        return None

    @property
    def corpus_path(self) -> Path:
        path = self._file("corpus.jsonl")
        if path is None:
            raise ConfigError(
                f"{self.option}: the BEIR folder has no corpus.jsonl",
                path=self.root / "corpus.jsonl",
                hint="a BEIR folder holds corpus.jsonl, queries.jsonl and qrels/<split>.tsv",
            )
        return path

    @property
    def queries_path(self) -> Path | None:
        return self._file("queries.jsonl")

    @property
    def qrels_path(self) -> Path:
        return self.root / "qrels" / f"{self.split}.tsv"

    @property
    def has_queries(self) -> bool:
        return self.queries_path is not None

    @property
    def has_qrels(self) -> bool:
        return self.qrels_path.is_file()

    @property
    def splits(self) -> list[str]:
        """The splits that have a qrels file."""
        return sorted(p.stem for p in (self.root / "qrels").glob("*.tsv"))

    def documents(self) -> Iterator[Document]:
        return read_jsonl_documents(self.corpus_path)

    def queries(self) -> list[Query]:
        path = self.queries_path
        if path is None:
            raise ConfigError(
                f"{self.option}: the BEIR folder has no queries.jsonl",
                path=self.root / "queries.jsonl",
                hint="add `queries:` to the suite, or put queries.jsonl in the folder",
            )
        return read_jsonl_queries(path)

    def qrels(self, *, required: bool = True) -> Qrels | None:
        """The split's judgments; None when absent and not ``required``."""
        if not self.has_qrels:
            if not required:
                return None
            raise ConfigError(
                f"BEIR folder has no qrels file for split {self.split!r}",
                path=self.qrels_path,
                hint=f"set corpus.split to one of: {', '.join(self.splits) or '(none found)'}, "
                "or give the suite its own judgments",
            )
        from rankscope.suite.relevance import read_qrels_file  # numpy, pyarrow (see above)

        return read_qrels_file(self.qrels_path)


def beir_folder(spec: BeirCorpus, base_dir: Path) -> BeirFolder:
    """The BEIR folder a suite's corpus names (relative to the suite file)."""
    return BeirFolder.open(base_dir / spec.path, spec.split)


def read_jsonl_documents(
    path: Path,
    id_field: str | None = None,
    title_field: str = "title",
    text_field: str = "text",
) -> Iterator[Document]:
    """Documents from JSONL; the id is ``id_field`` or else ``_id`` / ``id`` / ``doc_id``."""
    # the loop runs once per document of corpora of millions: kept lean
    names = (id_field,) if id_field else ("_id", "id", "doc_id", "docid")
    known = {text_field, title_field, id_field, "_id", "id", "doc_id", "docid"}
    for line_no, obj in iter_jsonl(path):
        doc_id = obj.get(names[0])
        if doc_id is None:
            doc_id = _pick_id(obj, id_field, names, path, line_no)
        elif type(doc_id) is not str:
            doc_id = str(doc_id)
        # BEIR exports write a missing title (sometimes a missing text) as null
        text = obj.get(text_field)
        title = obj.get(title_field)
        if text is None:
            text = ""
        if title is None:
            title = ""
        if type(text) is not str or type(title) is not str:
            raise FormatError(
                f"`{text_field}` and `{title_field}` must be strings",
                path=path,
                line=line_no,
                value=text if not isinstance(text, str) else title,
            )
        extra: dict[str, str] = {}
        if not obj.keys() <= known:  # most corpora hold nothing but id, title and text
            extra = {str(k): str(v) for k, v in _flatten(obj).items() if k not in known}
        if not (text.isascii() and title.isascii() and doc_id.isascii()):
            _check_unicode({"id": doc_id, text_field: text, title_field: title}, path, line_no)
        if extra:
            _check_unicode(extra, path, line_no)
        yield Document(doc_id, text, title, extra)


def read_jsonl_queries(path: Path) -> list[Query]:
    """Queries from JSONL: ``_id``/``id``/``query_id``/``qid`` and ``text`` (or ``query``), plus
    ``category`` when present."""
    queries = []
    for line_no, obj in iter_jsonl(path):
        qid = _pick_id(obj, None, ("_id", "id", "query_id", "qid"), path, line_no)
        text = obj.get("text", obj.get("query"))
        if not isinstance(text, str):
            raise FormatError(
                "query has no `text` string", path=path, line=line_no, value=obj.get("text")
            )
        category = obj.get("category")
        _check_unicode({"id": qid, "text": text}, path, line_no)
        queries.append(
            Query(id=qid, text=text, category=None if category is None else str(category))
        )
    return queries


def read_tsv_queries(path: Path) -> list[Query]:
    """Queries from a TSV of ``id<TAB>text`` lines (MS MARCO's ``queries.tsv``)."""
    queries = []
    for line_no, line in iter_lines(path):
        if not line.strip():
            continue
        qid, sep, text = line.rstrip("\r\n").partition("\t")
        if not sep or not qid.strip():
            raise FormatError(
                "a query TSV line is 'id<TAB>text'", path=path, line=line_no, value=line.strip()
            )
        queries.append(Query(id=qid.strip(), text=text))
    return queries


def read_queries(path: Path) -> list[Query]:
    """Queries from BEIR ``queries.jsonl`` or, for ``.tsv``/``.txt`` files, ``id<TAB>text``."""
    name = path.name.lower().removesuffix(".gz")
    if name.endswith((".tsv", ".txt")):
        return read_tsv_queries(path)
    return read_jsonl_queries(path)


def _file_documents(spec: FilesCorpus, root: Path) -> Iterator[Document]:
    """Each text file under the folder is a document; its id is its relative POSIX path.

    Hidden files and folders (``.git``, ``.venv``...) are skipped, as are binary files and files
    over ``max_bytes``. ``fields["path"]`` holds the path and ``fields["symbols"]`` the names the
    file defines (:func:`~rankscope.suite.symbols.symbols_in`), used by ``expected_symbols``
    judgments.
    """
    seen: set[Path] = set()
    found = 0
    for pattern in spec.glob:
        for file in sorted(root.glob(pattern)):
            rel = file.relative_to(root).as_posix()
            if file in seen or not file.is_file() or any(p.startswith(".") for p in rel.split("/")):
                continue
            if any(fnmatch.fnmatch(rel, ex) for ex in spec.exclude):
                continue
            seen.add(file)
            try:
                raw = file.read_bytes()
            except OSError:
                continue
            if len(raw) > spec.max_bytes or b"\0" in raw[:8192]:
                continue
            text = raw.decode("utf-8", errors="replace")
            symbols = " ".join(symbols_in(text, file.suffix))
            found += 1
            yield Document(id=rel, text=text, title=rel, fields={"path": rel, "symbols": symbols})
    if not found:
        raise ConfigError(
            "the files corpus matched no readable text files",
            path=root,
            value=spec.glob,
            hint="check corpus.path and corpus.glob (e.g. glob: '**/*.py')",
        )


def _open_binary(path: Path) -> IO[bytes]:
    """The file's bytes, through gzip when it ends in ``.gz``; InputError if unreadable."""
    try:
        if path.suffix == ".gz":
            return gzip.open(path, "rb")  # type: ignore[return-value]  # GzipFile is a BinaryIO
        return path.open("rb")
    except OSError as error:
        raise InputError(f"cannot open file: {error.strerror}", path=path) from None


def iter_lines(path: Path, *, partial_tail: bool = False) -> Iterator[tuple[int, str]]:
    """(line number, text) of each line of a UTF-8 text file (``.gz`` read compressed).

    Each line is decoded on its own, so bytes that are not UTF-8 raise a FormatError naming the
    file and line (and how to convert the file); a leading byte-order mark is dropped.
    ``partial_tail`` skips a last line without a newline: the half-written end of a file that
    a killed process was appending to.
    """
    with _open_binary(path) as handle:
        line_no = 0
        try:
            for line_no, raw in enumerate(handle, start=1):
                if partial_tail and not raw.endswith(b"\n"):
                    return
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError as error:
                    raise FormatError(
                        "text is not valid UTF-8",
                        path=path,
                        line=line_no,
                        value=raw[error.start : error.start + 8],
                        hint="convert the file to UTF-8 (for example with "
                        "`iconv -f latin1 -t utf-8`)",
                    ) from None
                if line_no == 1 and text.startswith("\ufeff"):
                    text = text[1:]
                yield line_no, text
        except (OSError, EOFError) as error:  # a damaged or truncated gzip stream
            raise FormatError(
                f"cannot read the file: {error}", path=path, line=line_no + 1
            ) from None


def read_text(path: Path) -> str:
    """A whole UTF-8 text file (``.gz`` read compressed), with :func:`iter_lines`' errors."""
    return "".join(line for _, line in iter_lines(path))


def iter_jsonl(path: Path, *, partial_tail: bool = False) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-blank line of a JSONL file (``.gz`` read compressed).

    A line that is not UTF-8, not JSON, or not a JSON object raises FormatError naming file and
    line. ``partial_tail``: see :func:`iter_lines`.
    """
    for line_no, line in iter_lines(path, partial_tail=partial_tail):
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as error:
            if not line.strip():  # a blank line (tested here: most lines are not blank)
                continue
            raise FormatError(
                f"invalid JSON: {error.msg}", path=path, line=line_no, value=line.strip()[:80]
            ) from None
        if not isinstance(obj, dict):
            raise FormatError("each line must be a JSON object", path=path, line=line_no)
        yield line_no, obj


def _check_unicode(fields: dict[str, str], path: Path, line: int) -> None:
    """A FormatError naming the file, line and field whose text holds a lone UTF-16 surrogate
    (:func:`~rankscope.engines.base.surrogate_problem`)."""
    for name, value in fields.items():
        problem = surrogate_problem(value)
        if problem is not None:
            raise FormatError(f"`{name}` {problem}", path=path, line=line)


def _pick_id(
    obj: dict[str, Any], field: str | None, candidates: tuple[str, ...], path: Path, line: int
) -> str:
    names = (field,) if field else candidates
    for name in names:
        if name in obj and obj[name] is not None:
            return str(obj[name])
    raise FormatError(
        f"object has no id field (looked for {', '.join(names)})",
        path=path,
        line=line,
        hint="add an `_id` or `id` key, or set corpus.id_field",
    )


def _flatten(obj: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in obj.items():
        if isinstance(value, dict):
            for sub, inner in value.items():
                if isinstance(inner, str | int | float):
                    out[str(sub)] = inner
        elif isinstance(value, str | int | float) and not isinstance(value, bool):
            out[key] = value
    return out


def _existing(path: Path, yaml_path: str, folder: bool = False) -> Path:
    ok = path.is_dir() if folder else path.exists()
    if not ok:
        kind = "folder" if folder else "file"
        raise ConfigError(
            f"{yaml_path}: {kind} not found",
            path=path,
            hint="paths in a suite are relative to the suite file",
        )
    return path


def _ir_dataset(name: str) -> Any:
    try:
        ir_datasets = importlib.import_module("ir_datasets")
    except ImportError:
        raise ConfigError(
            f"corpus type ir_datasets ({name!r}) needs the ir_datasets package, which is not "
            f"installed",
            hint="pip install ir_datasets; it downloads the dataset on first use, so run it on a "
            "machine with internet access (or use a local BEIR folder: corpus.type: beir)",
        ) from None
    try:
        return ir_datasets.load(name)
    except KeyError:
        raise ConfigError(
            f"ir_datasets does not know the dataset {name!r}",
            hint="see https://ir-datasets.com for valid ids, e.g. beir/scifact/test",
        ) from None


def _ir_document(doc: Any) -> Document:
    fields = doc._asdict() if hasattr(doc, "_asdict") else {}
    text = str(fields.pop("text", fields.pop("body", "")) or "")
    title = str(fields.pop("title", "") or "")
    doc_id = str(fields.pop("doc_id"))
    extra = {k: str(v) for k, v in fields.items() if isinstance(v, str)}
    return Document(id=doc_id, text=text, title=title, fields=extra)


def _ir_query_text(query: Any) -> str:
    for name in ("text", "title", "query"):
        value = getattr(query, name, None)
        if isinstance(value, str) and value:
            return value
    return str(query[1])
