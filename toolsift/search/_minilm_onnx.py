"""all-MiniLM-L6-v2 through onnxruntime in int8: the same model at about a third of numpy's CPU time.

The graph is built here, with the ``onnx`` package's helpers, from the
safetensors weights the numpy encoder reads (no torch, no export step). It
uses onnxruntime's fused BERT operators: the query/key/value product and
attention in one ``QAttention`` (int8 weights per output column, the input
quantised per batch), bias and exact GELU in ``BiasGelu``. The other three
products are ``MatMulNBits``: 8-bit weights in blocks of 128, their inputs
quantised per row and block (accuracy level 4: integer products, VNNI where
the processor has it). Quantising those per batch too (``quantize_dynamic``
alone) saves another tenth of the time but put some tool texts at cosine
0.977 to the float32 vectors; this mix keeps each of them above 0.99.

Built once (about a second) and kept beside the embedding cache as
``all-MiniLM-L6-v2.<key>.onnx``, the key a digest of the model files, of
:data:`GRAPH_VERSION` and of onnxruntime's version, so another process, or a
restart, loads the file instead.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from .._files import write_atomically
from ._minilm import Encoder, Matrix

if TYPE_CHECKING:
    from onnx import ModelProto

__all__ = ["GRAPH_VERSION", "NEEDS", "GraphError", "OnnxMiniLM", "build_graph", "graph_path", "missing"]

logger = logging.getLogger("toolsift.search")

#: Versions what :func:`build_graph` writes: a change makes every process build (and cache) the graph again.
GRAPH_VERSION = 2
#: What running the encoder through onnxruntime needs beyond the numpy encoder's packages.
NEEDS = ("onnxruntime", "onnx")
# Weights per quantisation block of a MatMulNBits product (its activations are quantised per row and block).
BLOCK = 128
GRAPH_STEM = "all-MiniLM-L6-v2"


def missing() -> list[str]:
    """The modules of :data:`NEEDS` that are not installed (found without importing any)."""
    return [name for name in NEEDS if importlib.util.find_spec(name) is None]


def _cores() -> int:
    """The cores this process may run on (its affinity, not the machine's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # no sched_getaffinity on macOS and Windows
        return os.cpu_count() or 1


def graph_path(folder: Path, cache_folder: Path) -> Path:
    """Where the graph for the model files in ``folder`` is kept, named by their digest, the builder and runtime."""
    import onnxruntime

    digest = hashlib.sha256(f"{GRAPH_VERSION}\0{onnxruntime.__version__}\0".encode())
    for name in ("config.json", "model.safetensors"):
        with (folder / name).open("rb") as file:
            digest.update(hashlib.file_digest(file, "sha256").digest())
    return cache_folder / f"{GRAPH_STEM}.{digest.hexdigest()[:16]}.onnx"


def _int8(weight: npt.NDArray[np.float32], axis: int) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.float32]]:
    """Symmetric int8 quantisation: the values, and one scale per slice reduced along ``axis``."""
    scale = np.abs(weight).max(axis=axis, keepdims=True) / np.float32(127)
    scale[scale == 0] = 1
    quantised = np.clip(np.rint(weight / scale), -127, 127).astype(np.int8)
    return quantised, np.squeeze(scale, axis=axis).astype(np.float32)


def build_graph(folder: Path) -> ModelProto:
    """The int8 BERT graph of the sentence-transformers folder: ids and mask in, mean-pooled states out."""
    from safetensors.numpy import load_file

    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    weights = {key: value.astype(np.float32) for key, value in load_file(str(folder / "model.safetensors")).items()}
    graph = _Graph(weights, heads=int(config["num_attention_heads"]), eps=float(config["layer_norm_eps"]))
    x = graph.embedded()
    for i in range(int(config["num_hidden_layers"])):
        x = graph.layer(x, i)
    return graph.model(graph.pooled(x))


class _Graph:
    """The nodes and weights of the graph as :func:`build_graph` adds them, layer by layer."""

    def __init__(self, weights: dict[str, npt.NDArray[np.float32]], *, heads: int, eps: float) -> None:
        self.w = weights
        self.heads = heads
        self.eps = eps
        self.initializers: list[Any] = []
        self.nodes: list[Any] = []
        # Every text is one segment: its token-type embedding is a constant added to each position's.
        self.positions = (
            weights["embeddings.position_embeddings.weight"] + weights["embeddings.token_type_embeddings.weight"][0]
        )
        self.axis = [self.constant(f"axis{i}", np.array([i], np.int64)) for i in range(3)]

    def constant(self, name: str, value: npt.NDArray[Any]) -> str:
        from onnx import numpy_helper

        self.initializers.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def node(self, op: str, inputs: list[str], output: str, microsoft: bool = False, **attributes: Any) -> str:
        from onnx import helper

        domain = "com.microsoft" if microsoft else ""
        self.nodes.append(helper.make_node(op, inputs, [output], name=output, domain=domain, **attributes))
        return output

    def embedded(self) -> str:
        """Word plus position embeddings, normalised; and the mask as the attention takes it."""
        from onnx import TensorProto

        w, zero = self.w, self.axis[0]
        length = self.node("Shape", ["input_ids"], "length", start=1, end=2)
        position = self.node("Slice", [self.constant("position_table", self.positions), zero, length, zero], "position")
        table = self.constant("word_table", w["embeddings.word_embeddings.weight"])
        words = self.node("Gather", [table, "input_ids"], "words")
        norm = [
            self.constant("norm0.w", w["embeddings.LayerNorm.weight"]),
            self.constant("norm0.b", w["embeddings.LayerNorm.bias"]),
        ]
        summed = self.node("Add", [words, position], "embedded")
        self.node("Cast", ["attention_mask"], "mask32", to=TensorProto.INT32)
        return self.node("LayerNormalization", [summed, *norm], "x0", axis=-1, epsilon=self.eps)

    def layer(self, x: str, i: int) -> str:
        """One encoder layer: attention and its output product, then the feed-forward products, each with its norm."""
        w, p = self.w, f"encoder.layer.{i}."
        attended = self.linear(self.attention(x, str(i)), w[p + "attention.output.dense.weight"], f"l{i}.o")
        x = self.residual(attended, x, p + "attention.output", f"l{i}.x1")
        inner = self.linear(x, w[p + "intermediate.dense.weight"], f"l{i}.inner")
        bias = self.constant(f"l{i}.inner.b", w[p + "intermediate.dense.bias"])
        gelu = self.node("BiasGelu", [inner, bias], f"l{i}.gelu", True)
        return self.residual(self.linear(gelu, w[p + "output.dense.weight"], f"l{i}.out"), x, p + "output", f"l{i}.x2")

    def linear(self, x: str, weight: npt.NDArray[np.float32], name: str) -> str:
        """``x @ weight.T`` (weight as torch stores it: out x in) with 8-bit weights in blocks of BLOCK."""
        out, width = weight.shape
        blocks = -(-width // BLOCK)
        padded = np.zeros((out, blocks * BLOCK), np.float32)
        padded[:, :width] = weight
        quantised, scale = _int8(padded.reshape(out, blocks, BLOCK), axis=2)
        unsigned = (quantised.astype(np.int16) + 128).astype(np.uint8)  # MatMulNBits' default zero point: 128
        inputs = [x, self.constant(f"{name}.q", unsigned), self.constant(f"{name}.s", scale.reshape(-1))]
        return self.node("MatMulNBits", inputs, name, True, K=width, N=out, bits=8, block_size=BLOCK, accuracy_level=4)

    def attention(self, x: str, layer: str) -> str:
        """Self-attention with the query/key/value product in int8: per output column, the input per batch."""
        from onnx import helper

        p = f"encoder.layer.{layer}.attention.self."
        weight = np.concatenate([self.w[f"{p}{part}.weight"] for part in ("query", "key", "value")]).T  # in x 3 out
        quantised, scale = _int8(weight, axis=0)
        bias = np.concatenate([self.w[f"{p}{part}.bias"] for part in ("query", "key", "value")])
        q = f"l{layer}.qkv"
        self.nodes.append(helper.make_node("DynamicQuantizeLinear", [x], [f"{x}.q", f"{x}.s", f"{x}.z"], name=f"{x}.q"))
        inputs = [f"{x}.q", self.constant(f"{q}.w", quantised), self.constant(f"{q}.b", bias), f"{x}.s"]
        zero_point = self.constant(f"{q}.z", np.zeros_like(quantised[0]))
        inputs += [self.constant(f"{q}.s", scale), "mask32", f"{x}.z", zero_point]
        return self.node("QAttention", inputs, f"l{layer}.attention", True, num_heads=self.heads)

    def residual(self, y: str, x: str, part: str, name: str) -> str:
        """Layer norm of ``x + y + bias``, with the weights under ``part`` (``...attention.output``, ``...output``).

        Two additions and a LayerNormalization: 8 % less time in all than onnxruntime's SkipLayerNormalization.
        """
        w = self.w
        biased = self.node("Add", [y, self.constant(f"{name}.bias", w[f"{part}.dense.bias"])], f"{name}.biased")
        norm = [
            self.constant(f"{name}.w", w[f"{part}.LayerNorm.weight"]),
            self.constant(f"{name}.b", w[f"{part}.LayerNorm.bias"]),
        ]
        summed = self.node("Add", [biased, x], f"{name}.sum")
        return self.node("LayerNormalization", [summed, *norm], name, axis=-1, epsilon=self.eps)

    def pooled(self, x: str) -> str:
        """Mean pooling over each text's own word pieces."""
        from onnx import TensorProto

        one, two = self.axis[1], self.axis[2]
        mask = self.node(
            "Unsqueeze", [self.node("Cast", ["attention_mask"], "maskf", to=TensorProto.FLOAT), two], "mask3"
        )
        summed = self.node("ReduceSum", [self.node("Mul", [x, mask], "masked"), one], "summed", keepdims=0)
        return self.node("Div", [summed, self.node("ReduceSum", [mask, one], "count", keepdims=0)], "pooled")

    def model(self, output: str) -> ModelProto:
        from onnx import TensorProto, helper

        inputs = [
            helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "length"])
            for name in ("input_ids", "attention_mask")
        ]
        outputs = [helper.make_tensor_value_info(output, TensorProto.FLOAT, ["batch", self.positions.shape[1]])]
        graph = helper.make_graph(self.nodes, GRAPH_STEM, inputs, outputs, self.initializers)
        opsets = [helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]
        return helper.make_model(graph, opset_imports=opsets, ir_version=8)


def load_graph(folder: Path, cache_folder: Path) -> bytes:
    """The serialised graph: read from ``cache_folder``, or built and written there (replacing older builds)."""
    path = graph_path(folder, cache_folder)
    try:
        return path.read_bytes()
    except OSError:  # not built yet, or a folder that cannot hold it: built (again) below
        pass
    graph: bytes = build_graph(folder).SerializeToString()
    try:
        cache_folder.mkdir(parents=True, exist_ok=True)
        write_atomically(path, graph, what="the embedding graph cache")
        for older in cache_folder.glob(f"{GRAPH_STEM}.*.onnx"):
            if older != path:
                older.unlink(missing_ok=True)
    except OSError as exc:
        logger.warning("could not keep the embedding graph in %s: %s", cache_folder, exc)
    return graph


class GraphError(RuntimeError):
    """The graph could not be built or read, or this onnxruntime cannot run it (an operator it lacks)."""


class OnnxMiniLM(Encoder):
    """The encoder run by onnxruntime in int8, on as many threads as this process has cores.

    Args:
        folder: Holds ``config.json``, ``model.safetensors`` and ``tokenizer.json``.
        cache_folder: Where the built graph is kept for the next process.

    Raises:
        ImportError: onnxruntime, onnx, ``tokenizers`` or ``safetensors`` is not installed.
        OSError: ``config.json`` is missing or unreadable.
        GraphError: The graph could not be built or read, or onnxruntime cannot run it.
    """

    producer = f"onnxruntime int8 (graph {GRAPH_VERSION})"

    def __init__(self, folder: Path, cache_folder: Path) -> None:
        import onnxruntime

        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        super().__init__(folder)
        self._width = int(config["hidden_size"])
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = _cores()
        options.inter_op_num_threads = 1
        options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
        # Threads that spin while waiting for work take CPU from everything else on a shared machine.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.log_severity_level = 3  # errors only: its warnings are about graph rewrites, not about this graph
        try:
            graph = load_graph(folder, cache_folder)
            self._session = onnxruntime.InferenceSession(graph, options, providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime's own errors share no base class but Exception
            raise GraphError(f"{type(exc).__name__}: {exc}") from exc

    @property
    def width(self) -> int:
        return self._width

    def _encode(self, ids: npt.NDArray[np.int64], lengths: npt.NDArray[np.int64]) -> Matrix:
        mask = (np.arange(ids.shape[1])[None, :] < lengths[:, None]).astype(np.int64)
        (pooled,) = self._session.run(["pooled"], {"input_ids": ids, "attention_mask": mask})
        return np.asarray(pooled, dtype=np.float32)
