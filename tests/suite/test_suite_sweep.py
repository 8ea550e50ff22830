"""Sweep expansion, presets and the embedding-extra check."""

from __future__ import annotations

import pytest

from rankscope.errors import ConfigError
from rankscope.suite import PRESETS, ChunkingSpec, expand_sweep, preset_configs
from rankscope.suite import sweep as sweep_module
from rankscope.suite.schema import SweepSpec
from rankscope.suite.sweep import DEFAULT_EMBEDDING_MODEL, check_embedding_extra


def spec(**axes: object) -> SweepSpec:
    return SweepSpec.model_validate(axes)


def test_matrix_collapses_axes_that_do_not_apply() -> None:
    configs = expand_sweep(
        spec(
            engine=["sqlite", "vector"],
            chunk_size=[None, 128, 512],
            overlap=[0, 64, 200],
            embedding_model=["all-MiniLM-L6-v2", "BAAI/bge-small-en-v1.5"],
        )
    )
    names = [c.name for c in configs]
    assert len(names) == len(set(names))
    sqlite = [c for c in configs if c.engine == "sqlite"]
    # no chunking: overlap collapses; 128: overlap 200 is dropped (>= size); 512: all three
    assert [c.chunking for c in sqlite] == [
        None,
        ChunkingSpec(size=128, overlap=0),
        ChunkingSpec(size=128, overlap=64),
        ChunkingSpec(size=512, overlap=0),
        ChunkingSpec(size=512, overlap=64),
        ChunkingSpec(size=512, overlap=200),
    ]
    # a lexical engine ignores the embedding-model axis
    assert all(c.embedding_model is None for c in sqlite)
    vector = [c for c in configs if c.engine == "vector"]
    assert len(vector) == 6 * 2
    assert {c.embedding_model for c in vector} == {"all-MiniLM-L6-v2", "BAAI/bge-small-en-v1.5"}
    assert "vector-c128o64-bge-small-en-v1.5" in names
    assert "sqlite-c512o200" in names and "sqlite" in names


def test_rerankers_and_engine_options() -> None:
    configs = expand_sweep(
        spec(
            engine="tantivy",
            reranker=[None, "cross-encoder/ms-marco-MiniLM-L-6-v2"],
            options={"tantivy": {"stemmer": "en"}},
        )
    )
    assert [c.name for c in configs] == ["tantivy", "tantivy+rerank"]
    assert configs[1].reranker == "cross-encoder/ms-marco-MiniLM-L-6-v2"
    assert all(dict(c.options) == {"stemmer": "en"} for c in configs)
    assert configs[1].needs_embeddings and not configs[0].needs_embeddings


def test_presets_expand_and_explicit_axes_override_them() -> None:
    for name in PRESETS:
        configs = preset_configs(name)
        assert configs, name
        assert len({c.name for c in configs}) == len(configs)
    quick = expand_sweep(spec(preset="quick", engine=["sqlite"]))
    assert [c.name for c in quick] == ["sqlite", "sqlite-c256o32"]
    dense = preset_configs("embedding_comparison")
    assert all(c.engine == "vector" for c in dense)
    assert dense[0].embedding_model == DEFAULT_EMBEDDING_MODEL
    comprehensive = preset_configs("comprehensive")
    assert {c.engine for c in comprehensive} == {"sqlite", "tantivy", "vector", "hybrid"}
    assert any(c.reranker for c in comprehensive)


def test_preset_needing_embeddings_says_so_when_the_extra_is_missing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sweep_module, "embeddings_available", lambda: False)
    with pytest.raises(ConfigError) as info:
        check_embedding_extra(preset_configs("embedding_comparison"), "preset 'x'")
    message = str(info.value)
    assert "embedding extra" in message and "pip install 'rankscope[embed]'" in message
    # lexical-only presets are fine without it
    check_embedding_extra(preset_configs("chunk_comparison"), "preset 'chunk_comparison'")


def test_hybrid_needs_embeddings_only_with_a_dense_member() -> None:
    from rankscope.suite import BenchConfig

    lexical = BenchConfig(
        name="h",
        engine="hybrid",
        options={"engines": [{"engine": "sqlite"}, {"engine": "tantivy"}]},
    )
    dense = BenchConfig(
        name="h", engine="hybrid", options={"engines": [{"engine": "sqlite"}, {"engine": "vector"}]}
    )
    assert not lexical.needs_embeddings
    assert dense.needs_embeddings


def test_config_key_changes_with_config_and_context() -> None:
    a, b = expand_sweep(spec(engine="sqlite", chunk_size=[64, 128], overlap=[0]))
    assert a.key("corpus1") == a.key("corpus1")
    assert a.key("corpus1") != b.key("corpus1")
    assert a.key("corpus1") != a.key("corpus2")


def test_sweep_without_engines_is_rejected() -> None:
    with pytest.raises(ValueError, match="engine"):
        spec(chunk_size=[64])


def test_suite_with_an_embedding_preset_fails_clearly_without_the_extra(
    tmp_path: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rankscope.suite import load_suite_text

    monkeypatch.setattr(sweep_module, "embeddings_available", lambda: False)
    text = "name: t\ncorpus: {type: jsonl, path: d.jsonl}\nqueries: [x]\nsweep:\n  preset: PRESET\n"
    with pytest.raises(ConfigError) as info:
        load_suite_text(text.replace("PRESET", "embedding_comparison"), source="s.yaml")
    assert "s.yaml:5" in str(info.value) and "rankscope[embed]" in str(info.value)
    assert load_suite_text(text.replace("PRESET", "chunk_comparison"), source="s.yaml").configs


def test_embedding_model_on_a_lexical_engine_is_rejected_with_its_line() -> None:
    from rankscope.suite import load_suite_text

    text = (
        "name: t\ncorpus: {type: jsonl, path: d.jsonl}\nqueries: [x]\nengines:\n"
        "  - name: a\n    engine: sqlite\n    embedding_model: all-MiniLM-L6-v2\n"
    )
    with pytest.raises(ConfigError) as info:
        load_suite_text(text, source="s.yaml")
    assert "s.yaml:7" in str(info.value) and "engines[0].embedding_model" in str(info.value)


def test_params_sweep_an_engines_options_and_name_each_configuration() -> None:
    configs = expand_sweep(
        spec(
            engine=["faiss", "sqlite"],
            options={"faiss": {"index": "hnsw", "model": "hashing:64"}},
            params={"faiss": {"m": [8, 16], "ef_search": [16, 64.5], "exact": True}},
        )
    )
    names = [c.name for c in configs]
    assert names == [
        "faiss-m8-ef_search16-exact",
        "faiss-m8-ef_search64.5-exact",
        "faiss-m16-ef_search16-exact",
        "faiss-m16-ef_search64.5-exact",
        "sqlite",
    ]
    assert dict(configs[1].options) == {
        "index": "hnsw",
        "model": "hashing:64",
        "m": 8,
        "ef_search": 64.5,
        "exact": True,
    }
    # a string value is named by itself; a swept value wins over the engine's options
    (one,) = expand_sweep(
        spec(
            engine="faiss",
            options={"faiss": {"index": "flat"}},
            params={"faiss": {"index": "ivf_pq"}},
        )
    )
    assert one.name == "faiss-ivf_pq" and one.options["index"] == "ivf_pq"


def test_params_for_an_engine_not_swept_or_clashing_names_are_refused() -> None:
    with pytest.raises(ConfigError, match="does not run: hnswlib"):
        expand_sweep(spec(engine=["faiss"], params={"hnswlib": {"m": [8]}}))
    # string values are named by themselves: "p-q" + "r" and "p" + "q-r" read the same
    grid = {"faiss": {"a": ["p-q", "p"], "b": ["r", "q-r"]}}
    with pytest.raises(ConfigError, match="two configurations would be named 'faiss-p-q-r'"):
        expand_sweep(spec(engine=["faiss"], params=grid))


def test_a_params_error_names_the_suite_file_and_line() -> None:
    from rankscope.suite import load_suite_text

    text = (
        "name: t\ncorpus: {type: jsonl, path: d.jsonl}\nqueries: [x]\n"
        "sweep:\n  engine: [sqlite]\n  params:\n    faiss: {m: [8]}\n"
    )
    with pytest.raises(ConfigError) as info:
        load_suite_text(text, source="s.yaml")
    assert str(info.value).startswith("s.yaml:7: sweep.params names engines")


def test_a_list_of_grids_sweeps_each_in_turn() -> None:
    configs = expand_sweep(
        spec(
            engine="faiss",
            params={
                "faiss": [
                    {"index": "hnsw", "ef_search": [10, 40]},
                    {"index": ["ivf_flat", "ivf_pq"], "nprobe": 4},
                ]
            },
        )
    )
    assert [c.name for c in configs] == [
        "faiss-hnsw-ef_search10",
        "faiss-hnsw-ef_search40",
        "faiss-ivf_flat-nprobe4",
        "faiss-ivf_pq-nprobe4",
    ]
    assert dict(configs[3].options) == {"index": "ivf_pq", "nprobe": 4}


def test_config_keys_stay_what_they_were() -> None:
    # A key names a configuration's checkpoint: a changed key silently invalidates every
    # user's cached results, so these values are pinned.
    from pathlib import PurePosixPath

    from rankscope.suite import BenchConfig

    (swept,) = expand_sweep(spec(engine="sqlite", chunk_size=[64], overlap=[8]))
    assert swept.key("corpus1") == "1b5d0aa2a3ab2078"
    given = BenchConfig(
        name="dense",
        engine="vector",
        options={"fields": ("title", "text"), "root": PurePosixPath("/data"), "m": 16},
        chunking=ChunkingSpec(size=256, overlap=32, unit="chars"),
        embedding_model="BAAI/bge-small-en-v1.5",
        reranker="cross-encoder/x",
    )
    assert given.key() == "6f41420c2d322dea"
    assert given.key("corpus1", {"mod": "abc"}) == "61cdc0fa79b650ad"


def test_the_old_chunking_name_still_reads_with_a_warning() -> None:
    import rankscope.suite

    with pytest.warns(
        DeprecationWarning, match=r"suite\.Chunking is deprecated; use .*ChunkingSpec"
    ):
        assert rankscope.suite.Chunking is ChunkingSpec
    assert "Chunking" not in dir(rankscope.suite) and "Chunking" not in rankscope.suite.__all__
