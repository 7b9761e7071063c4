"""The ``search`` section: how ``search_tools`` ranks and what a search unlocks by itself."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ._model import ConfigModel

__all__ = ["SearchConfig"]


class SearchConfig(ConfigModel):
    """How tool search ranks, for every agent of the file.

    Attributes:
        backend: ``bm25`` (fielded BM25, the default), ``semantic`` (local sentence
            embeddings) or ``hybrid`` (both, their scores scaled and added); the last two
            need the ``semantic`` extra and its model (the error names the commands)
            and keep embeddings in ``$XDG_CACHE_HOME/toolsift``.
        auto_unlock: How many of the best callable hits a search unlocks by itself;
            the model unlocks others by name (``search_tools`` with ``unlock``).
    """

    backend: Literal["bm25", "semantic", "hybrid"] = "bm25"
    auto_unlock: int = Field(default=1, ge=0, le=25)
