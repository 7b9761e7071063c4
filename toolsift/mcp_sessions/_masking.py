"""Secrets a server echoes back, masked before its answer reaches the model.

A server sees the values toolsift resolved for it (``env``, ``headers``,
referenced settings) and may repeat them: in its result text, in an
``isError`` message, in structured content, in a JSON-RPC error message. The
session passes every answer through :func:`mask_result`, which applies the
same :class:`Redactor` that masks the server's stderr to every string in it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import mcp.types as types

from .._redaction import Redactor
from ..registry import ToolResult

__all__ = ["mask_result", "mask_wire"]

#: Masks the secrets in one string (a session's ``Redactor``, or ``McpSession.mask_secrets``).
Mask = Callable[[str], str]


def mask_result(result: ToolResult, redact: Redactor) -> ToolResult:
    """``result`` with every known secret masked in its text, links and structured content.

    Returns ``result`` itself when nothing needed masking.
    """
    if not redact:
        return result
    content = [_block(block, redact) for block in result.content]
    structured = _value(result.structured_content, redact)
    if structured is result.structured_content and all(a is b for a, b in zip(content, result.content, strict=True)):
        return result
    return result.model_copy(update={"content": content, "structured_content": structured})


def mask_wire(result: dict[str, Any], mask: Mask) -> dict[str, Any]:
    """A result as the server sent it (an extension's, read by the client and not by toolsift), every string masked."""
    masked: dict[str, Any] = _value(result, mask)
    return masked


def _block(block: types.ContentBlock, redact: Mask) -> types.ContentBlock:
    if isinstance(block, types.TextContent):
        text = redact(block.text)
        return block if text is block.text else block.model_copy(update={"text": text})
    if isinstance(block, types.EmbeddedResource) and isinstance(block.resource, types.TextResourceContents):
        text = redact(block.resource.text)
        if text is block.resource.text:
            return block
        return block.model_copy(update={"resource": block.resource.model_copy(update={"text": text})})
    if isinstance(block, types.ResourceLink):
        fields = {
            name: redact(value)
            for name in ("uri", "name", "title", "description")
            if isinstance(value := getattr(block, name), str)
        }
        changed = {name: value for name, value in fields.items() if value is not getattr(block, name)}
        return block.model_copy(update=changed) if changed else block
    return block  # images, audio, blobs: binary, not text a secret could be read from


def _value(value: Any, redact: Mask) -> Any:
    """Structured content with every string (keys too) masked; the same object when nothing changed."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        items = [(_value(key, redact), _value(item, redact)) for key, item in value.items()]
        if all(k is key and v is item for (k, v), (key, item) in zip(items, value.items(), strict=True)):
            return value
        return dict(items)
    if isinstance(value, list):
        masked = [_value(item, redact) for item in value]
        return value if all(a is b for a, b in zip(masked, value, strict=True)) else masked
    return value
