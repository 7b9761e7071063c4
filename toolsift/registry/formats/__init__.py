"""Provider schema formats, looked up by name."""

from __future__ import annotations

from ..._exceptions import UnknownFormat
from ..._public import publish
from ._base import SchemaFormat as SchemaFormat
from ._providers import AnthropicFormat, GeminiFormat, MCPFormat, OpenAIFormat, OpenAIResponsesFormat

__all__ = [
    "FORMATS",
    "SchemaFormat",
    "get_format",
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
