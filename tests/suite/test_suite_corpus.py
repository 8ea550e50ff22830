"""The one JSONL and BEIR reader (suite/corpus.py), shared by bench, pool, judge and needle."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from rankscope.errors import ConfigError, FormatError
from rankscope.suite.corpus import (
    BeirFolder,
    corpus_qrels,
    corpus_queries,
    iter_documents,
    iter_jsonl,
    read_jsonl_documents,
    read_queries,
)
from rankscope.suite.schema import BeirCorpus

LATIN1 = '{"_id": "d2", "text": "caf\xe9"}\n'.encode("latin-1")


def _beir(folder: Path, *, qrels: bool = True) -> Path:
    folder.mkdir(parents=True)
    docs = [
        {"_id": "d1", "title": None, "text": "wing flutter"},  # BEIR writes absent titles as null
        {"_id": "d2", "title": "Heat", "text": "heat transfer", "metadata": {"year": 1962}},
    ]
    (folder / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    (folder / "queries.jsonl").write_text('{"_id": "1", "text": "flutter"}\n')
    if qrels:
        (folder / "qrels").mkdir()
        (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n1\td1\t2\n")
    return folder


def test_bytes_that_are_not_utf8_name_file_line_and_fix(tmp_path: Path) -> None:
    path = tmp_path / "corpus.jsonl"
    path.write_bytes(b'{"_id": "d1", "text": "ok"}\n' + LATIN1)
    with pytest.raises(FormatError) as caught:
        list(read_jsonl_documents(path))
    message = str(caught.value)
    assert message.startswith(f"{path}:2: text is not valid UTF-8")
    assert "iconv" in message and caught.value.line == 2
    queries = tmp_path / "queries.tsv"
    queries.write_bytes(b"1\tfine\n2\tna\xefve\n")
    with pytest.raises(FormatError, match=r"queries.tsv:2: text is not valid UTF-8"):
        read_queries(queries)


def test_gzip_bom_and_bad_json_lines(tmp_path: Path) -> None:
    gz = tmp_path / "c.jsonl.gz"
    with gzip.open(gz, "wt", encoding="utf-8") as f:
        f.write('\ufeff{"id": "a", "text": "x"}\n\n{"doc_id": "b", "text": "y"}\n')
    assert [d.id for d in read_jsonl_documents(gz)] == ["a", "b"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"_id": 1}\n[1, 2]\n')
    with pytest.raises(FormatError, match=r"bad.jsonl:2: each line must be a JSON object"):
        list(iter_jsonl(bad))
    partial = tmp_path / "p.jsonl"
    partial.write_bytes(b'{"a": 1}\n{"a": 2, "b": "caf\xc3')  # a killed writer's last line
    assert [row for _, row in iter_jsonl(partial, partial_tail=True)] == [{"a": 1}]


def test_queries_in_jsonl_and_tsv(tmp_path: Path) -> None:
    jl = tmp_path / "queries.jsonl"
    jl.write_text('{"qid": "7", "query": "lift", "category": "aero"}\n{"_id": "8", "text": "x"}\n')
    got = read_queries(jl)
    assert [(q.id, q.text, q.category) for q in got] == [("7", "lift", "aero"), ("8", "x", None)]
    tsv = tmp_path / "queries.tsv"
    tsv.write_text("1\twing flutter\n\n2\theat\n")
    assert [(q.id, q.text) for q in read_queries(tsv)] == [("1", "wing flutter"), ("2", "heat")]
    tsv.write_text("1 no tab here\n")
    with pytest.raises(FormatError, match=r"queries.tsv:1: a query TSV line is 'id<TAB>text'"):
        read_queries(tsv)


def test_beir_folder_reads_everything(tmp_path: Path) -> None:
    folder = BeirFolder.open(_beir(tmp_path / "beir"))
    docs = list(folder.documents())
    assert [(d.id, d.title, d.text) for d in docs] == [
        ("d1", "", "wing flutter"),
        ("d2", "Heat", "heat transfer"),
    ]
    assert docs[1].fields["year"] == "1962"
    assert folder.has_queries and folder.has_qrels and folder.splits == ["test"]
    assert [q.id for q in folder.queries()] == ["1"]
    qrels = folder.qrels()
    assert qrels is not None and qrels.to_dict() == {"1": {"d1": 2}}


def test_beir_folder_without_qrels_is_allowed_when_not_required(tmp_path: Path) -> None:
    _beir(tmp_path / "beir", qrels=False)
    spec = BeirCorpus(type="beir", path="beir")
    assert corpus_qrels(spec, tmp_path, required=False) is None
    assert not BeirFolder.open(tmp_path / "beir").has_qrels
    assert [d.id for d in iter_documents(spec, tmp_path)] == ["d1", "d2"]
    with pytest.raises(ConfigError, match=r"no qrels file for split 'test'.*own judgments"):
        corpus_qrels(spec, tmp_path)


def test_missing_beir_folder_is_folder_not_found(tmp_path: Path) -> None:
    spec = BeirCorpus(type="beir", path="nowhere")
    for read in (corpus_qrels, corpus_queries, iter_documents):
        with pytest.raises(ConfigError, match=r"corpus.path: folder not found") as caught:
            read(spec, tmp_path)
        assert "split" not in str(caught.value)


def test_jsonl_documents_ids_fields_and_nulls(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    rows = [
        {"_id": 7, "title": None, "text": "seven"},  # a number id reads as text
        {"_id": None, "id": "b", "text": None, "meta": {"year": 1962}, "lang": "en"},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    first, second = read_jsonl_documents(path)
    assert (first.id, first.title, first.text, dict(first.fields)) == ("7", "", "seven", {})
    assert (second.id, second.text) == ("b", "")
    assert dict(second.fields) == {"year": "1962", "lang": "en"}
    with pytest.raises(FormatError, match=r"no id field \(looked for pid\)"):
        list(read_jsonl_documents(path, id_field="pid"))
    # with an id field named, the usual id keys are still no extra fields
    path.write_text(json.dumps({"pid": "c", "_id": "other", "text": "x", "lang": "en"}) + "\n")
    (doc,) = read_jsonl_documents(path, id_field="pid")
    assert doc.id == "c" and dict(doc.fields) == {"lang": "en"}


def test_a_lone_surrogate_in_a_document_names_file_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "docs.jsonl"
    path.write_text(
        '{"_id": "a", "text": "caf\\u00e9 \\ud83d\\ude00"}\n{"_id": "b", "title": "x\\udfff"}\n'
    )
    docs = read_jsonl_documents(path)
    assert next(docs).text == "café 😀"
    with pytest.raises(FormatError) as caught:
        next(docs)
    assert str(caught.value).startswith(
        f"{path}:2: `title` holds a lone UTF-16 surrogate ('\\udfff' at character 1)"
    )
