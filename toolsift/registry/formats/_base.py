"""The schema-format protocol and provider name rules with deterministic aliases."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from .._spec import ToolSpec

__all__ = ["NameRule", "SchemaFormat"]

_HASH_CHARS = 8


@dataclass(frozen=True)
class NameRule:
    """A provider's rule for function names, and how to alias names that break it.

    Attributes:
        key: Identifies the rule; formats sharing a rule share aliases.
        pattern: What a valid name looks like.
        max_length: Longest valid name.
        invalid_char: Regex of characters to replace when aliasing.
        must_start: Regex a valid first character matches.
    """

    key: str
    pattern: re.Pattern[str]
    max_length: int
    invalid_char: re.Pattern[str]
    must_start: re.Pattern[str] | None = None

    def accepts(self, name: str) -> bool:
        """True when ``name`` may be sent to the provider as it is."""
        return self.pattern.fullmatch(name) is not None

    def alias(self, name: str, salt: int = 0) -> str:
        """A deterministic valid alias: the name cleaned and cut, plus a short hash.

        ``salt`` lengthens the hash; the registry raises it only in the
        astronomically rare case of a collision.
        """
        cleaned = self.invalid_char.sub("_", name)
        if self.must_start is not None and not self.must_start.match(cleaned):
            cleaned = "_" + cleaned
        digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[: _HASH_CHARS + salt]
        keep = self.max_length - len(digest) - 1
        return f"{cleaned[:keep]}_{digest}"


class SchemaFormat(Protocol):
    """Turns a tool spec into one provider's tool declaration.

    Attributes:
        name: The format's name (``"openai"``).
        name_rule: The provider's name rule, or None when canonical names always fit.

    A format with a strict mode (OpenAI's) also sets ``strict_mode = True``;
    asking any other for ``strict=True`` is refused rather than ignored.
    """

    name: str
    name_rule: NameRule | None

    def export(self, spec: ToolSpec, exported_name: str, *, strict: bool = False) -> dict[str, Any]:
        """Return the provider's declaration for ``spec`` under ``exported_name``."""
        ...


def base_schema(spec: ToolSpec) -> dict[str, Any]:
    """The tool's input schema with a top-level ``type: object`` guaranteed."""
    schema: dict[str, Any] = dict(spec.input_schema) if isinstance(spec.input_schema, Mapping) else {}
    schema.setdefault("type", "object")
    if schema.get("type") == "object":
        schema.setdefault("properties", {})
    return schema
