"""What a request costs in money: each provider's prices per model, with its cache discount and premium.

Providers bill input tokens three ways: uncached, read from the prompt cache (a tenth of the input
price on current models), and written to it (Anthropic's 5-minute writes and OpenAI's from GPT-5.6 on
cost 1.25x the input price). The table ships as ``prices.json`` beside this module; prices change, so
:meth:`PriceTable.from_file` reads a newer one (``toolsift chat --prices FILE``), and
:meth:`PriceTable.merged` lays one over the other.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, final

from ..._exceptions import AgentError
from .._messages import Usage

__all__ = ["PriceTable"]

_PACKAGED = Path(__file__).with_name("prices.json")
_FIELDS = ("input", "output", "cache_read", "cache_write")
# What may follow a table name in a model name that still is that model: a dated snapshot.
_SNAPSHOT = re.compile(r"(-\d{8}|-\d{4}-\d{2}-\d{2})?")


@dataclass(frozen=True)
class Price:
    """One model's prices, in USD per million tokens."""

    input: float
    output: float
    cache_read: float
    cache_write: float

    @property
    def read_ratio(self) -> float:
        """A cache read's price relative to an uncached input token."""
        return self.cache_read / self.input if self.input else 1.0

    @property
    def write_ratio(self) -> float:
        """A cache write's price relative to an uncached input token."""
        return self.cache_write / self.input if self.input else 1.0

    def cost(self, usage: Usage) -> float:
        """What ``usage`` costs, in USD."""
        uncached = max(0, usage.input_tokens - usage.cache_read_tokens - usage.cache_write_tokens)
        total = (
            uncached * self.input
            + usage.cache_read_tokens * self.cache_read
            + usage.cache_write_tokens * self.cache_write
            + usage.output_tokens * self.output
        )
        return total / 1_000_000


@final
class PriceTable:
    """Prices by provider and model name.

    Args:
        prices: provider -> model name -> :class:`Price`.
    """

    def __init__(self, prices: Mapping[str, Mapping[str, Price]]) -> None:
        self._prices = {provider: dict(models) for provider, models in prices.items()}

    @classmethod
    def default(cls) -> PriceTable:
        """The table shipped with toolsift (read once)."""
        return _packaged()

    @classmethod
    def from_file(cls, path: str | Path) -> PriceTable:
        """A table read from a JSON file shaped like the shipped ``prices.json``.

        Raises:
            AgentError: The file cannot be read, or a field is missing or not a number (named).
        """
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise AgentError(f"Price table {str(path)!r} cannot be read: {exc}") from exc
        return cls.from_mapping(data, origin=str(path))

    @classmethod
    def from_mapping(cls, data: Any, *, origin: str = "prices") -> PriceTable:
        """A table from ``{provider: {model: {input, output, cache_read, cache_write}}}`` (keys
        starting with ``_`` are comments).

        Raises:
            AgentError: A field is missing or not a non-negative number; the message names it.
        """
        if not isinstance(data, Mapping):
            raise AgentError(f"{origin}: a price table is an object of providers")
        table: dict[str, dict[str, Price]] = {}
        for provider, models in data.items():
            if str(provider).startswith("_"):
                continue
            if not isinstance(models, Mapping):
                raise AgentError(f"{origin}: {provider} must be an object of models")
            table[str(provider)] = {
                str(name): _price(entry, f"{origin}: {provider}.{name}") for name, entry in models.items()
            }
        return cls(table)

    def merged(self, newer: PriceTable) -> PriceTable:
        """This table with ``newer``'s prices laid over it, model by model."""
        prices = {provider: dict(models) for provider, models in self._prices.items()}
        for provider, models in newer._prices.items():
            prices.setdefault(provider, {}).update(models)
        return PriceTable(prices)

    def price(self, provider: str, model: str) -> Price | None:
        """The price of ``model`` (or of the model a dated snapshot name is), None when not listed."""
        models = self._prices.get(provider, {})
        matches = [name for name in models if model.startswith(name) and _SNAPSHOT.fullmatch(model[len(name) :])]
        return models[max(matches, key=len)] if matches else None


def _price(entry: Any, where: str) -> Price:
    if not isinstance(entry, Mapping):
        raise AgentError(f"{where} must be an object with {', '.join(_FIELDS)}")
    values: dict[str, float] = {}
    for field in _FIELDS:
        value = entry.get(field)
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise AgentError(f"{where}.{field} must be a non-negative number (USD per million tokens), not {value!r}")
        values[field] = float(value)
    return Price(**values)


@functools.cache
def _packaged() -> PriceTable:
    return PriceTable.from_file(_PACKAGED)


def priced(usage: Usage | None, price: Price | None) -> Usage | None:
    """``usage`` with its cost, when the model has a price."""
    if usage is None or price is None:
        return usage
    return replace(usage, cost=price.cost(usage))
