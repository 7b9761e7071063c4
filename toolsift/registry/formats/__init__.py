"""Provider schema formats, looked up by name."""

from __future__ import annotations

from ..._exceptions import UnknownFormat
from ..._public import publish
from ._base import NameRule as NameRule
from ._base import SchemaFormat as SchemaFormat
from ._strict import drop_optional_nulls as drop_optional_nulls
from ._strict import strict_schema as strict_schema
from .anthropic import AnthropicFormat as AnthropicFormat
from .gemini import GeminiFormat as GeminiFormat
from .mcp import MCPFormat as MCPFormat
from .openai import OpenAIFormat as OpenAIFormat
from .openai import OpenAIResponsesFormat as OpenAIResponsesFormat

__all__ = [
    "FORMATS",
    "AnthropicFormat",
    "GeminiFormat",
    "MCPFormat",
    "NameRule",
    "OpenAIFormat",
    "OpenAIResponsesFormat",
    "SchemaFormat",
    "drop_optional_nulls",
    "get_format",
    "strict_schema",
]

FORMATS: dict[str, SchemaFormat] = {
    f.name: f for f in (MCPFormat(), OpenAIFormat(), OpenAIResponsesFormat(), AnthropicFormat(), GeminiFormat())
}


def get_format(name: str | SchemaFormat) -> SchemaFormat:
    """Return the format registered under ``name`` (or ``name`` itself if it is a format).

    Raises:
        UnknownFormat: Listing the available names.
    """
    if not isinstance(name, str):
        return name
    try:
        return FORMATS[name]
    except KeyError:
        raise UnknownFormat(name, list(FORMATS)) from None


publish(globals(), __name__, __all__)
