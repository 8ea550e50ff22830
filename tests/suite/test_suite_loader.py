"""Suite loading: validation errors with YAML paths and lines, corpus sources, judgments."""

from __future__ import annotations

import json
import shutil
import sys
import textwrap
from pathlib import Path

import pytest

from rankscope.errors import ConfigError, RankscopeError
from rankscope.suite import load_suite, load_suite_text

DOCS = [
    {"_id": "d1", "title": "Python json", "text": "json.dumps turns objects into JSON strings"},
    {"_id": "d2", "title": "Paths", "text": "os.path.join joins path components"},
    {"_id": "d3", "title": "Shell", "text": "shutil.rmtree removes a directory tree"},
]


def write_suite(tmp_path: Path, body: str) -> Path:
    (tmp_path / "docs.jsonl").write_text("".join(json.dumps(d) + "\n" for d in DOCS))
    path = tmp_path / "suite.yaml"
    path.write_text(textwrap.dedent(body).lstrip())
    return path


def error_of(tmp_path: Path, body: str) -> ConfigError:
    path = write_suite(tmp_path, body)
    with pytest.raises(ConfigError) as info:
        load_suite(path)
    return info.value


VALID = """
name: tiny
corpus: {type: jsonl, path: docs.jsonl}
queries:
  - id: q1
    text: json string
    category: json
    judgments: {d1: 3, d2: 0}
  - id: 2
    text: join paths
    kind: multi_match
    fields: ["title^3", "text"]
  - id: q3
    text: directory tree
    kind: phrase
    slop: 1
  - id: q4
    text: boolean one
    kind: boolean
    must: [directory]
    must_not: [json]
  - plain text query
engines:
  - {name: lite, engine: sqlite}
"""


def test_valid_suite_resolves_queries_kinds_and_defaults(tmp_path: Path) -> None:
    suite = load_suite(write_suite(tmp_path, VALID))
    assert suite.name == "tiny"
    by_id = {q.id: q for q in suite.queries}
    assert set(by_id) == {"q1", "2", "q3", "q4", "q5"}
    assert by_id["2"].fields == (("title", 3.0), ("text", 1.0))
    assert by_id["q3"].kind == "phrase" and by_id["q3"].slop == 1
    assert by_id["q4"].must == ("directory",) and by_id["q4"].must_not == ("json",)
    assert by_id["q5"].kind == "query_string" and by_id["q5"].text == "plain text query"
    assert by_id["q1"].category == "json"
    assert suite.settings.k == [5, 10, 20]
    assert suite.settings.max_k == 100
    assert suite.settings.warmup == 1 and suite.settings.repeats == 3
    assert [c.name for c in suite.configs] == ["lite"]
    assert suite.qrels().to_dict() == {"q1": {"d1": 3, "d2": 0}}
    assert [d.id for d in suite.documents()] == ["d1", "d2", "d3"]


def test_bad_query_kind_names_yaml_path_line_and_choices(tmp_path: Path) -> None:
    error = error_of(
        tmp_path,
        """
        name: t
        corpus: {type: jsonl, path: docs.jsonl}
        queries:
          - {id: a, text: one}
          - {id: b, text: two}
          - {id: c, text: three}
          - id: d
            text: four
            kind: fuzzy
        engines: [{name: x, engine: sqlite}]
        """,
    )
    message = str(error)
    assert "queries[3].kind" in message
    assert "suite.yaml:9" in message  # `kind: fuzzy` is on line 9
    assert "'fuzzy'" in message and "multi_match" in message
    assert error.line == 9


def test_missing_field_points_at_the_mapping(tmp_path: Path) -> None:
    error = error_of(
        tmp_path,
        """
        name: t
        corpus: {type: jsonl, path: docs.jsonl}
        queries:
          - id: a
            category: x
        engines: [{name: x, engine: sqlite}]
        """,
    )
    assert "queries[0].text: required field is missing" in str(error)
    assert error.line == 4


def test_wrong_types_and_several_problems_are_all_reported(tmp_path: Path) -> None:
    error = error_of(
        tmp_path,
        """
        name: t
        corpus: {type: jsonl, path: docs.jsonl}
        queries: [{id: a, text: one, judgments: {d1: 7}}]
        settings:
          max_k: many
          repeats: 0
        engines: [{name: x, engine: sqlite, chunking: {size: 8, overlap: 9}}]
        """,
    )
    message = str(error)
    assert "4 problems" in message
    assert "line 5: settings.max_k" in message and "'many'" in message
    assert "line 6: settings.repeats" in message
    assert "queries[0].judgments.d1" in message  # grades are 0..3
    assert "engines[0].chunking" in message and "overlap" in message


def test_unknown_key_and_unknown_engine(tmp_path: Path) -> None:
    error = error_of(
        tmp_path,
        """
        name: t
        corpus: {type: jsonl, path: docs.jsonl}
        queries: [{id: a, text: one, kinds: match}]
        engines: [{name: x, engine: sqlite}]
        """,
    )
    assert "queries[0].kinds: unknown field" in str(error)
    error = error_of(
        tmp_path,
        """
        name: t
        corpus: {type: jsonl, path: docs.jsonl}
        queries: [{id: a, text: one}]
        engines:
          - name: x
            engine: elasticsaerch
        """,
    )
    assert "engines[0].engine: unknown engine 'elasticsaerch'" in str(error)
    assert error.line == 6 and "sqlite" in str(error)


def test_kind_specific_parameters_are_checked(tmp_path: Path) -> None:
    error = error_of(
        tmp_path,
        """
        name: t
        corpus: {type: jsonl, path: docs.jsonl}
        queries:
          - {id: a, text: one, kind: multi_match, fields: ["title^x"]}
        engines: [{name: x, engine: sqlite}]
        """,
    )
    assert "queries[0].fields" in str(error) and "title^x" in str(error)
    error = error_of(
        tmp_path,
        """
        name: t
        corpus: {type: jsonl, path: docs.jsonl}
        queries:
          - {id: a, text: one, kind: boolean}
        engines: [{name: x, engine: sqlite}]
        """,
    )
    assert "queries[0]: boolean queries need" in str(error)


def test_yaml_syntax_error_has_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text("name: t\ncorpus: {type: jsonl\nqueries: []\n")
    with pytest.raises(ConfigError) as info:
        load_suite(path)
    assert "not valid YAML" in str(info.value) and info.value.line is not None


def test_corpus_type_errors(tmp_path: Path) -> None:
    error = error_of(
        tmp_path,
        """
        name: t
        corpus: {type: elastic, path: x}
        queries: [{id: a, text: one}]
        engines: [{name: x, engine: sqlite}]
        """,
    )
    assert "corpus" in str(error) and "beir" in str(error) and error.line == 2
    error = error_of(
        tmp_path,
        """
        name: t
        corpus:
          type: beir
        engines: [{name: x, engine: sqlite}]
        """,
    )
    assert "corpus.path: required field is missing" in str(error)


def test_missing_corpus_file_is_reported_on_first_use(tmp_path: Path) -> None:
    suite = load_suite_text(
        "name: t\ncorpus: {type: jsonl, path: nope.jsonl}\nqueries: [x]\n"
        "engines: [{name: a, engine: sqlite}]\n",
        base_dir=tmp_path,
    )
    with pytest.raises(ConfigError, match=r"corpus.path: file not found"):
        suite.documents()


def write_beir(folder: Path) -> None:
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text(
        "".join(json.dumps(d | {"metadata": {"author": "x"}}) + "\n" for d in DOCS)
    )
    queries = [
        {"_id": "1", "text": "json"},
        {"_id": "2", "text": "paths"},
        {"_id": "3", "text": "x"},
    ]
    (folder / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries))
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n1\td1\t2\n2\td2\t1\n")


def test_beir_folder_brings_queries_and_qrels(tmp_path: Path) -> None:
    write_beir(tmp_path / "beir")
    suite = load_suite_text(
        "name: b\ncorpus: {type: beir, path: beir}\nengines: [{name: a, engine: sqlite}]\n",
        base_dir=tmp_path,
    )
    # only the queries judged in the split are evaluated (BEIR convention)
    assert [q.id for q in suite.queries] == ["1", "2"]
    assert suite.qrels().to_dict() == {"1": {"d1": 2}, "2": {"d2": 1}}
    assert suite.documents()[0].fields["author"] == "x"
    with pytest.raises(ConfigError, match="split"):
        load_suite_text(
            "name: b\ncorpus: {type: beir, path: beir, split: dev}\n"
            "engines: [{name: a, engine: sqlite}]\n",
            base_dir=tmp_path,
        )


def test_beir_folder_without_qrels_takes_the_suites_own_judgments(tmp_path: Path) -> None:
    write_beir(tmp_path / "beir")
    shutil.rmtree(tmp_path / "beir" / "qrels")
    (tmp_path / "own.qrels").write_text("3 0 d3 1\n")
    inline = load_suite_text(
        "name: b\ncorpus: {type: beir, path: beir}\n"
        "queries: [{id: q1, text: json, judgments: {d1: 2}}]\n"
        "engines: [{name: a, engine: sqlite}]\n",
        base_dir=tmp_path,
    )
    assert inline.qrels().to_dict() == {"q1": {"d1": 2}}
    # the folder's queries with the suite's qrels file: every query is kept (nothing to filter by)
    from_file = load_suite_text(
        "name: b\ncorpus: {type: beir, path: beir}\nqrels: own.qrels\n"
        "engines: [{name: a, engine: sqlite}]\n",
        base_dir=tmp_path,
    )
    assert [q.id for q in from_file.queries] == ["1", "2", "3"]
    assert from_file.qrels().to_dict() == {"3": {"d3": 1}}
    # the folder alone must bring its judgments
    with pytest.raises(ConfigError, match="no qrels file for split 'test'"):
        load_suite_text(
            "name: b\ncorpus: {type: beir, path: beir}\nengines: [{name: a, engine: sqlite}]\n",
            base_dir=tmp_path,
        )


def test_qrels_file_inline_judgments_and_needles_merge(tmp_path: Path) -> None:
    (tmp_path / "extra.qrels").write_text("q1 0 d3 1\nq1 0 d1 1\nq2 0 d2 2\n")
    path = write_suite(
        tmp_path,
        """
        name: t
        corpus: {type: jsonl, path: docs.jsonl}
        qrels: extra.qrels
        queries:
          - {id: q1, text: json, judgments: {d1: 3}}
          - id: q2
            text: paths
            needle_doc_id: d3
            expected_answer: rmtree removes trees
        engines: [{name: x, engine: sqlite}]
        """,
    )
    suite = load_suite(path)
    # inline wins over the file; the needle is grade 3
    assert suite.qrels().to_dict() == {"q1": {"d1": 3, "d3": 1}, "q2": {"d2": 2, "d3": 3}}
    assert suite.answers == {"q2": "rmtree removes trees"}


def test_files_corpus_and_code_search_expectations(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "src" / "pkg").mkdir(parents=True)
    (repo / ".git").mkdir()
    (repo / ".git" / "config").write_text("ignored")
    (repo / "src" / "pkg" / "parser.py").write_text("class Parser:\n    def parse_line(self):\n")
    (repo / "src" / "pkg" / "render.py").write_text("def render_table(rows):\n    pass\n")
    (repo / "README.md").write_text("A repo")
    (repo / "blob.bin").write_bytes(b"\0\1\2")
    path = tmp_path / "suite.yaml"
    path.write_text(
        textwrap.dedent(
            """
            name: code
            corpus: {type: files, path: repo}
            queries:
              - {id: f, text: parser, expected_files: [pkg/parser.py]}
              - {id: s, text: table, expected_symbols: [render_tab]}
            engines: [{name: x, engine: sqlite}]
            """
        )
    )
    suite = load_suite(path)
    ids = [d.id for d in suite.documents()]
    assert ids == ["README.md", "src/pkg/parser.py", "src/pkg/render.py"]
    parser = suite.documents()[1]
    assert parser.fields["path"] == "src/pkg/parser.py"
    assert parser.fields["symbols"].split() == ["Parser", "parse_line"]
    assert suite.qrels().to_dict() == {"f": {"src/pkg/parser.py": 1}, "s": {"src/pkg/render.py": 1}}


def test_expected_symbols_match_case_insensitively_in_a_cpp_file(tmp_path: Path) -> None:
    # The code-search design's own example: DetectCollision defined in a .cpp file.
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "physics.cpp").write_text(
        "#include <vector>\n\nbool World::DetectCollision(const Body& a, const Body& b) {\n"
        "  return overlap(a, b);\n}\n"
    )
    (repo / "render.cpp").write_text("void draw(int x) {\n  paint(x);\n}\n")
    path = write_suite(
        tmp_path,
        """
        name: code
        corpus: {type: files, path: repo}
        queries:
          - {id: s, text: collision, expected_symbols: [detectcollision]}
        engines: [{name: x, engine: sqlite}]
        """,
    )
    suite = load_suite(path)
    physics = suite.documents()[0]
    assert physics.fields["symbols"].split() == ["World::DetectCollision", "DetectCollision"]
    assert suite.qrels().to_dict() == {"s": {"physics.cpp": 1}}


def test_queries_from_a_jsonl_file_with_line_errors(tmp_path: Path) -> None:
    (tmp_path / "q.jsonl").write_text('{"id": "a", "text": "json", "category": "c"}\n{"id": "b"}\n')
    path = write_suite(
        tmp_path,
        """
        name: t
        corpus: {type: jsonl, path: docs.jsonl}
        queries: {path: q.jsonl}
        engines: [{name: x, engine: sqlite}]
        """,
    )
    with pytest.raises(RankscopeError) as info:
        load_suite(path)
    assert "q.jsonl:2" in str(info.value) and "text" in str(info.value)


def test_ir_datasets_missing_says_how_to_install_and_that_it_downloads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "ir_datasets", None)  # import fails as when not installed
    with pytest.raises(ConfigError) as info:
        load_suite_text(
            "name: t\ncorpus: {type: ir_datasets, dataset: beir/scifact/test}\n"
            "engines: [{name: a, engine: sqlite}]\n",
            base_dir=tmp_path,
        )
    message = str(info.value)
    assert "pip install ir_datasets" in message and "internet" in message


def test_resolved_suite_has_absolute_paths_and_expanded_sweep(tmp_path: Path) -> None:
    path = write_suite(
        tmp_path,
        """
        name: t
        corpus: {type: jsonl, path: docs.jsonl}
        queries: [json]
        sweep: {engine: [sqlite], chunk_size: [null, 16], overlap: [4]}
        """,
    )
    suite = load_suite(path)
    resolved = suite.resolved()
    assert resolved["corpus"]["path"] == str((tmp_path / "docs.jsonl").resolve())
    assert "sweep" not in resolved
    assert [e["name"] for e in resolved["engines"]] == ["sqlite", "sqlite-c16o4"]
    assert load_suite_text(suite.resolved_yaml(), base_dir=tmp_path).configs == suite.configs


def test_engine_option_paths_are_relative_to_the_suite_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "models" / "mini").mkdir(parents=True)
    path = write_suite(
        tmp_path,
        """
        name: paths
        corpus: {type: jsonl, path: docs.jsonl}
        queries: [{id: q1, text: json, judgments: {d1: 1}}]
        engines:
          - {name: prior, engine: run_file, options: {path: runs/prior.trec}}
          - {name: db, engine: sqlite, options: {path: ":memory:"}}
          - name: mixed
            engine: hybrid
            options:
              engines:
                - {engine: sqlite, path: index/lexical.db}
                - {engine: vector, model: models/mini, cache_dir: ~/embeddings}
          - name: reranked
            engine: rerank
            options: {engine: {engine: tantivy, path: ../shared-index}, model: cross-encoder/x}
        """,
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    configs = {c.name: c.options for c in load_suite(Path("..") / path.name).configs}
    root = tmp_path.resolve()
    assert configs["prior"]["path"] == str(root / "runs" / "prior.trec")
    assert configs["db"]["path"] == ":memory:"
    lexical, dense = configs["mixed"]["engines"]
    assert lexical["path"] == str(root / "index" / "lexical.db")
    assert dense["model"] == str(root / "models" / "mini")  # a local folder
    assert dense["cache_dir"] == str(Path("~/embeddings").expanduser())
    assert configs["reranked"]["engine"]["path"] == str(tmp_path.parent.resolve() / "shared-index")
    assert configs["reranked"]["model"] == "cross-encoder/x"  # a model name, not a file


@pytest.mark.parametrize(
    ("body", "marker", "problem"),
    [
        (
            """
            queries:
              - {id: q1, text: one, judgments: {d1: 1}}
              - {id: q2, text: two}
              - {id: q1, text: three}
            engines: [{name: lite, engine: sqlite}]
            """,
            "id: q1",
            "queries[2].id: two queries have the id 'q1' (the first is queries[0], line {first})",
        ),
        (
            """
            queries: [{id: q1, text: one, judgments: {d1: 1}}]
            engines:
              - {name: lite, engine: sqlite}
              - name: other
                engine: sqlite
              - name: lite
                engine: sqlite
            """,
            "name: lite",
            "engines[2].name: two engine configurations are named 'lite' (the first is "
            "engines[0], line {first})",
        ),
    ],
)
def test_duplicate_ids_and_names_point_at_the_duplicate(
    tmp_path: Path, body: str, marker: str, problem: str
) -> None:
    header = "name: dup\ncorpus: {type: jsonl, path: docs.jsonl}\n"
    error = error_of(tmp_path, header + textwrap.dedent(body))
    path = tmp_path / "suite.yaml"
    found = [n for n, line in enumerate(path.read_text().splitlines(), 1) if marker in line]
    first, duplicate = found[0], found[-1]
    assert duplicate > 1
    assert str(error).startswith(f"{path}:{duplicate}: {problem.format(first=first)}")


def test_misspelled_keys_and_engine_names_get_a_suggestion(tmp_path: Path) -> None:
    def message_of(text: str) -> str:
        with pytest.raises(ConfigError) as caught:
            load_suite_text(textwrap.dedent(text), base_dir=tmp_path)
        return str(caught.value)

    text = message_of(
        """
        name: t
        corpus: {type: jsonl, path: docs.jsonl}
        queries: [{id: q1, text: json, judgements: {d1: 3}}]
        engines: [{name: x, engine: sqlite}]
        """
    )
    assert text == "<suite>:4: queries[0].judgements: unknown field; did you mean `judgments`?"
    text = message_of(
        """
        name: t
        corpus: {type: beir, pth: data, split: test}
        queries: [json]
        settings: {repeats: 1, warmpu: 2}
        engines: [{name: x, engine: tantivvy}]
        """
    )
    # the corpus of the given type: a beir corpus takes `path` (not the jsonl corpus's fields)
    assert "corpus.pth: unknown field; did you mean `path`?" in text
    assert "settings.warmpu: unknown field; did you mean `warmup`?" in text
    text = message_of(
        """
        name: t
        corpus: {type: jsonl, path: docs.jsonl}
        queries: [json]
        engines: [{name: x, engine: tantivvy}]
        """
    )
    assert "unknown engine 'tantivvy'. Did you mean `tantivy`? Expected one of: anserini," in text
    # nothing close: the plain message
    text = message_of(
        """
        name: t
        corpus: {type: jsonl, path: docs.jsonl}
        queries: [{id: q1, text: json, zzzzzz: 1}]
        engines: [{name: x, engine: qqqqqq}]
        """
    )
    assert "zzzzzz: unknown field (check its spelling" in text


def test_a_lone_surrogate_in_a_query_is_refused_at_its_line(tmp_path: Path) -> None:
    """JSON and YAML escapes can write half a surrogate pair; no engine can take the text (it is
    not valid Unicode), so the loader refuses it where it is written."""
    # the file holds the six characters \ud800: valid JSON, invalid Unicode once decoded
    (tmp_path / "q.jsonl").write_text(
        '{"id": "a", "text": "json"}\n{"id": "b", "text": "pair \\ud83d\\ude00 ok"}\n'
        '{"id": "h", "text": "cancer \\ud800 tumor"}\n'
    )
    path = write_suite(
        tmp_path,
        """
        name: t
        corpus: {type: jsonl, path: docs.jsonl}
        queries: {path: q.jsonl}
        engines: [{name: x, engine: sqlite}]
        """,
    )
    with pytest.raises(RankscopeError) as info:
        load_suite(path)
    assert str(info.value) == (
        f"{tmp_path / 'q.jsonl'}:3: `text` holds a lone UTF-16 surrogate ('\\ud800' at character "
        "7), which is not valid Unicode and no engine can take; write the character's whole "
        "surrogate pair or remove the escape"
    )

    error = error_of(
        tmp_path,
        r"""
        name: t
        corpus: {type: jsonl, path: docs.jsonl}
        queries:
          - {id: a, text: json}
          - id: b
            text: bread
            kind: boolean
            must: [bread, "x\udc00"]
        engines: [{name: x, engine: sqlite}]
        """,
    )
    assert error.line == 8
    assert "queries[1].must: holds a lone UTF-16 surrogate ('\\udc00' at character 1)" in str(error)


OPTION_TYPOS = """
name: t
corpus: {type: jsonl, path: docs.jsonl}
queries: [json]
engines:
  - {name: bm25, engine: sqlite}
  - name: dense
    engine: vector
    options:
      modle: all-MiniLM-L6-v2
  - name: fused
    engine: hybrid
    options:
      fusion: rrff
      engines:
        - {engine: sqlite, tokenzier: porter}
        - {engine: vector, model: hashing, batch_size: many}
"""


def test_engine_option_typos_fail_at_load_with_lines_and_suggestions(tmp_path: Path) -> None:
    import time

    load_suite(write_suite(tmp_path, VALID))  # the imports, once
    path = write_suite(tmp_path, OPTION_TYPOS)
    started = time.perf_counter()
    with pytest.raises(ConfigError) as info:
        load_suite(path)
    elapsed = time.perf_counter() - started
    message = str(info.value)
    assert message == (
        f"{path}:9: 4 problems in the engine options:\n"
        "  line 9: engines[1].options.modle (configuration 'dense'): unknown option 'modle' for "
        "engine 'vector' (Did you mean `model`? Engine 'vector' takes: model, fields, "
        "batch_size, device, query_prefix, document_prefix, cache, cache_dir, max_seq_length, "
        "backend, embedder)\n"
        "  line 13: engines[2].options.fusion (configuration 'fused'): option 'fusion' of engine "
        "'hybrid' is 'rrff', not one of rrf, weighted (Did you mean `rrf`?)\n"
        "  line 15: engines[2].options.engines[0].tokenzier (configuration 'fused'): unknown "
        "option 'tokenzier' for engine 'sqlite' (Did you mean `tokenizer`? Engine 'sqlite' "
        "takes: path, tokenizer)\n"
        "  line 16: engines[2].options.engines[1].batch_size (configuration 'fused'): option "
        "'batch_size' of engine 'vector' must be int, not str 'many' (Its default: 64)"
    )
    assert info.value.line == 9
    assert elapsed < 1.0, elapsed


def test_a_missing_required_option_and_a_sweep_typo_are_named(tmp_path: Path) -> None:
    error = error_of(
        tmp_path,
        """
        name: t
        corpus: {type: jsonl, path: docs.jsonl}
        queries: [json]
        engines:
          - {name: mine, engine: python}
        """,
    )
    assert str(error).startswith(
        f"{tmp_path / 'suite.yaml'}:5: engines[0].options.search (configuration 'mine'): engine "
        "'python' needs the option 'search' (str | Callable[..., Any]). Engine 'python' takes: "
        "search, index, call, kinds"
    )
    error = error_of(
        tmp_path,
        """
        name: t
        corpus: {type: jsonl, path: docs.jsonl}
        queries: [json]
        sweep:
          engine: [sqlite, faiss]
          options:
            faiss: {index: hnws}
        """,
    )
    assert error.line == 7
    assert "sweep.options.faiss.index (configuration 'faiss'): option 'index' of engine " in str(
        error
    )
    assert str(error).endswith(
        "is 'hnws', not one of flat, hnsw, ivf_flat, ivf_pq. Did you mean `hnsw`?"
    )


def test_probe_imports_the_python_function_and_checks_its_signature(tmp_path: Path) -> None:
    (tmp_path / "two_args.py").write_text(
        "def search(query, k):\n    return []\n\ndef one_arg(query):\n    return []\n"
    )
    body = """
        name: t
        corpus: {type: jsonl, path: docs.jsonl}
        queries: [json]
        engines:
          - name: mine
            engine: python
            options: {search: "two_args:%s"}
        """
    load_suite(write_suite(tmp_path, body % "search"), probe=True)
    path = write_suite(tmp_path, body % "one_arg")
    load_suite(path)  # without the probe nothing is imported
    with pytest.raises(ConfigError) as info:
        load_suite(path, probe=True)
    assert info.value.line == 7
    assert "engines[0].options.search (configuration 'mine'): two_args:one_arg cannot be " in str(
        info.value
    )
    assert "the engine calls fn(query, k)" in str(info.value)
    with pytest.raises(ConfigError, match=r"suite.yaml:7: .*cannot import module 'nowhere_x'"):
        load_suite(write_suite(tmp_path, body.replace("two_args", "nowhere_x") % "f"), probe=True)


def test_probe_sends_an_http_engine_one_query_and_only_to_the_chosen_ones(
    tmp_path: Path,
) -> None:
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    path = write_suite(
        tmp_path,
        f"""
        name: t
        corpus: {{type: jsonl, path: docs.jsonl}}
        queries: [json string]
        engines:
          - {{name: bm25, engine: sqlite}}
          - name: api
            engine: http
            options: {{url: "http://127.0.0.1:{port}/search?q={{query}}&k={{k}}"}}
        """,
    )
    load_suite(path)  # no probe: nothing is sent
    load_suite(path, probe={"bm25"})  # the api is not among the configurations to run
    with pytest.raises(ConfigError) as info:
        load_suite(path, probe=True)
    assert info.value.line == 8
    assert str(info.value).startswith(
        f"{path}:8: engines[1].options.url (configuration 'api'): the probe query 'json "
        f"string' failed (http engine, query 'q1': cannot connect to http://127.0.0.1:{port}/"
        "search ("
    )
    assert str(info.value).endswith(
        "is the search service running and the URL right?). Start the service first, fix the "
        "options, or skip this check with --no-probe"
    )


def test_resolved_suite_writes_python_given_options_as_their_repr(tmp_path: Path) -> None:
    from dataclasses import replace
    from pathlib import PurePosixPath

    from rankscope.suite import BenchConfig, ChunkingSpec

    suite = load_suite(
        write_suite(
            tmp_path,
            "name: t\ncorpus: {type: jsonl, path: docs.jsonl}\n"
            "queries: [json]\nengines: [{name: a, engine: sqlite}]\n",
        )
    )
    given = BenchConfig(
        name="mine",
        engine="python",
        options={"search": PurePosixPath("/x"), "nlist": None, "fields": ("a", "b")},
        chunking=ChunkingSpec(size=16, overlap=4),
    )
    engines = replace(suite, configs=[given]).resolved()["engines"]
    assert engines == [
        {
            "name": "mine",
            "engine": "python",
            "options": {"search": "PurePosixPath('/x')", "nlist": None, "fields": ["a", "b"]},
            "chunking": {"size": 16, "overlap": 4, "unit": "tokens"},
        }
    ]
    assert list(engines[0]) == ["name", "engine", "options", "chunking"]
