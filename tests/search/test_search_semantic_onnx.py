"""The int8 onnxruntime encoder: the numpy encoder's vectors, its graph built once per model, numpy without it."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from toolsift.search import _minilm, _minilm_onnx, _semantic, semantic_available
from toolsift.search._documents import tool_document
from toolsift.search._semantic import load_local_embedder

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from _search_eval import eval_registry

ONNX = pytest.mark.skipif(
    not semantic_available() or bool(_minilm_onnx.missing()), reason=f"needs {_semantic.INSTALL_HINT}"
)


@pytest.fixture
def fresh_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The process's model forgotten, and the graph kept in ``tmp_path/toolsift`` (not the user's cache)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    _semantic._model.cache_clear()
    yield tmp_path / "toolsift"
    _semantic._model.cache_clear()


def benchmark_texts() -> list[str]:
    """Tool texts as the benchmarks embed them (every 10th of the evaluation's tools), short and long."""
    documents = [tool_document(tool.spec) for tool in eval_registry()]
    return [doc.text for doc in documents[::10]]


@ONNX
def test_the_onnx_encoder_gives_the_numpy_encoders_vectors(fresh_model: Path) -> None:
    embed = load_local_embedder()
    assert isinstance(embed, _minilm_onnx.OnnxMiniLM) and load_local_embedder() is embed
    assert embed._session.get_session_options().intra_op_num_threads == len(os.sched_getaffinity(0))
    reference = _minilm.MiniLM(_minilm.model_folder())  # type: ignore[arg-type]
    texts = benchmark_texts()
    assert len(texts) >= 30 and max(map(len, texts)) > 2 * min(map(len, texts))
    cosine = (embed(texts) * reference(texts)).sum(axis=1)
    assert cosine.min() >= 0.99
    # sentence-transformers' own example for all-MiniLM-L6-v2 prints 0.6660, 0.1046 and 0.1411.
    rows = embed(["The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium."])
    similarity = rows @ rows.T
    assert np.allclose([similarity[0, 1], similarity[0, 2], similarity[1, 2]], [0.6660, 0.1046, 0.1411], atol=0.02)
    assert np.allclose(np.linalg.norm(rows, axis=1), 1, atol=1e-5)


@ONNX
def test_the_graph_is_built_once_and_a_new_process_loads_it(fresh_model: Path) -> None:
    folder = _minilm.model_folder()
    assert folder is not None
    load_local_embedder()
    (graph,) = fresh_model.glob("all-MiniLM-L6-v2.*.onnx")
    assert graph == _minilm_onnx.graph_path(folder, fresh_model)
    # A new process finds the graph on disk: building it there would fail.
    script = textwrap.dedent(
        """
        from toolsift.search import _minilm_onnx, _semantic

        def build_graph(folder):
            raise AssertionError("built again")

        _minilm_onnx.build_graph = build_graph
        embed = _semantic.load_local_embedder()
        print(type(embed).__name__, embed(["store a value"]).shape)
        """
    )
    environment = {**os.environ, "XDG_CACHE_HOME": str(fresh_model.parent)}
    done = subprocess.run([sys.executable, "-c", script], env=environment, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["OnnxMiniLM", "(1,", "384)"]
    # A new builder version builds again, and its graph replaces the older one.
    _minilm_onnx.GRAPH_VERSION += 1
    try:
        _minilm_onnx.OnnxMiniLM(folder, fresh_model)
        assert list(fresh_model.glob("all-MiniLM-L6-v2.*.onnx")) == [_minilm_onnx.graph_path(folder, fresh_model)]
        assert not graph.exists()
    finally:
        _minilm_onnx.GRAPH_VERSION -= 1


@ONNX
def test_a_graph_that_cannot_be_kept_is_used_all_the_same(fresh_model: Path, caplog: pytest.LogCaptureFixture) -> None:
    fresh_model.parent.joinpath("toolsift").write_text("a file where the cache folder should be")
    with caplog.at_level(logging.WARNING, logger="toolsift.search"):
        embed = load_local_embedder()
    assert isinstance(embed, _minilm_onnx.OnnxMiniLM) and embed(["store a value"]).shape == (1, 384)
    assert "could not keep the embedding graph in" in caplog.text


@pytest.mark.skipif(not semantic_available(), reason=f"needs {_semantic.INSTALL_HINT}")
def test_numpy_embeds_where_onnxruntime_is_absent_or_cannot_run_the_graph(
    fresh_model: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(_minilm_onnx, "NEEDS", (*_minilm_onnx.NEEDS, "toolsift_no_such_module"))
    with caplog.at_level(logging.INFO, logger="toolsift.search"):
        embed = load_local_embedder()
    assert type(embed) is _minilm.MiniLM and embed.producer == "numpy float32"
    assert "about 3x slower than with toolsift_no_such_module installed" in caplog.text
    assert not fresh_model.exists()  # no graph built
    monkeypatch.undo()
    if _minilm_onnx.missing():
        return
    monkeypatch.setenv("XDG_CACHE_HOME", str(fresh_model.parent))
    _semantic._model.cache_clear()

    def broken(folder: Path) -> bytes:
        raise RuntimeError("no MatMulNBits here")

    monkeypatch.setattr(_minilm_onnx, "load_graph", lambda folder, cache: broken(folder))
    with caplog.at_level(logging.WARNING, logger="toolsift.search"):
        embed = load_local_embedder()
    assert type(embed) is _minilm.MiniLM
    assert "onnxruntime could not run the model: RuntimeError: no MatMulNBits here" in caplog.text
