"""Tool results as provider content, without silent loss.

What a provider cannot take is described in text: ``[audio result: audio/wav,
24 KB]``, a binary resource's URI and size. Embedded text resources are inlined.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from typing import Literal

import mcp.types as mcp_types

from ..registry import ToolResult

__all__ = ["ResultPart", "describe_result", "result_text"]


@dataclass(frozen=True)
class ResultPart:
    """One piece of a tool result a provider can carry: text, or an image when supported."""

    kind: Literal["text", "image"]
    text: str = ""
    data: str = ""
    mime_type: str = ""


def _size(data: str) -> str:
    try:
        raw = len(base64.b64decode(data, validate=False))
    except ValueError:
        raw = len(data)
    return f"{raw / 1024:.0f} KB" if raw >= 1024 else f"{raw} bytes"


def describe_result(result: ToolResult, *, images: bool) -> list[ResultPart]:
    """Turn every content block into text or image parts.

    Args:
        result: The tool's result.
        images: Whether the provider takes images in tool results.
    """
    parts: list[ResultPart] = []
    for block in result.content:
        if isinstance(block, mcp_types.TextContent):
            parts.append(ResultPart("text", text=block.text))
        elif isinstance(block, mcp_types.ImageContent):
            if images:
                parts.append(ResultPart("image", data=block.data, mime_type=block.mime_type))
            else:
                parts.append(ResultPart("text", text=f"[image result: {block.mime_type}, {_size(block.data)}]"))
        elif isinstance(block, mcp_types.AudioContent):
            parts.append(ResultPart("text", text=f"[audio result: {block.mime_type}, {_size(block.data)}]"))
        elif isinstance(block, mcp_types.EmbeddedResource):
            resource = block.resource
            if isinstance(resource, mcp_types.TextResourceContents):
                parts.append(ResultPart("text", text=f"[resource {resource.uri}]\n{resource.text}"))
            else:
                mime = resource.mime_type or "application/octet-stream"
                size = _size(resource.blob)
                parts.append(ResultPart("text", text=f"[binary resource {resource.uri}: {mime}, {size}]"))
        elif isinstance(block, mcp_types.ResourceLink):
            mime = f", {block.mime_type}" if block.mime_type else ""
            parts.append(ResultPart("text", text=f"[resource link: {block.name} {block.uri}{mime}]"))
    if not parts and result.structured_content is not None:
        parts.append(ResultPart("text", text=json.dumps(result.structured_content, ensure_ascii=False, default=str)))
    if result.is_error and not any(p.kind == "text" for p in parts):
        parts.insert(0, ResultPart("text", text="[the tool reported an error without a message]"))
    if not parts:
        parts.append(ResultPart("text", text="[empty result]"))
    return parts


def result_text(result: ToolResult) -> str:
    """The whole result as one text (images described), for providers that take only text."""
    return "\n".join(p.text for p in describe_result(result, images=False))
