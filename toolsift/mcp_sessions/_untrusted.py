"""Fencing an untrusted server's result, and a look-out for prompt injection.

For servers with ``trust: untrusted`` (the default) every text the model will
read (text blocks and embedded text resources) is fenced (the format:
``toolsift/_fence.py``). A short list of phrases aimed at the model is looked
for in every string of the result; a hit is logged on ``toolsift.untrusted``
and the result is flagged ``suspicious_content`` (the registry copies
``meta["flags"]`` into the audit event). Flagging does not block: false
positives are cheap to read, silently dropped data is not.
"""

from __future__ import annotations

import logging
import secrets
from typing import Any

import mcp.types as types

from .._fence import fence, suspicious_patterns
from ..registry import ToolResult

__all__ = ["SUSPICIOUS_FLAG", "guard_result"]

logger = logging.getLogger("toolsift.untrusted")

SUSPICIOUS_FLAG = "suspicious_content"


def _strings(block: types.ContentBlock) -> list[str]:
    """Strings of a block a model may read, besides its fenced text."""
    if isinstance(block, types.ResourceLink):
        return [s for s in (block.name, block.title, block.description, block.uri) if s]
    return []


def _structured_strings(value: Any, into: list[str]) -> None:
    """Every string (keys included) in structured content."""
    if isinstance(value, str):
        into.append(value)
    elif isinstance(value, dict):
        for key, item in value.items():
            into.append(str(key))
            _structured_strings(item, into)
    elif isinstance(value, list | tuple):
        for item in value:
            _structured_strings(item, into)


def guard_result(result: ToolResult, *, server: str, tool: str, start: int = 0) -> ToolResult:
    """Fence the text of an untrusted server's result and flag suspicious content.

    Text blocks and embedded text resources are fenced; images, audio and
    blobs pass unchanged; resource-link fields and structured content are
    scanned but left as they are (they are not free text the model is asked
    to read). Blocks before ``start`` are toolsift's own words and stay as
    they are. Returns a new result; ``result`` is not changed.
    """
    nonce = secrets.token_hex(4)
    scanned: list[str] = []
    content: list[types.ContentBlock] = list(result.content[:start])
    for block in result.content[start:]:
        # model_copy, not a constructor: the blocks were validated when the server's answer was parsed.
        if isinstance(block, types.TextContent):
            scanned.append(block.text)
            block = block.model_copy(update={"text": fence(block.text, server=server, tool=tool, nonce=nonce)})
        elif isinstance(block, types.EmbeddedResource) and isinstance(block.resource, types.TextResourceContents):
            scanned.append(block.resource.text)
            fenced = fence(block.resource.text, server=server, tool=tool, nonce=nonce)
            block = block.model_copy(update={"resource": block.resource.model_copy(update={"text": fenced})})
        else:
            scanned.extend(_strings(block))
        content.append(block)
    if result.structured_content is not None:
        _structured_strings(result.structured_content, scanned)
    found = sorted({name for text in set(scanned) for name in suspicious_patterns(text)})
    meta = dict(result.meta)
    if found:
        logger.warning(
            "Suspicious content in the result of tool %r from MCP server %r: %s; flagged as %r",
            tool,
            server,
            ", ".join(found),
            SUSPICIOUS_FLAG,
        )
        meta["flags"] = sorted({*meta.get("flags", ()), SUSPICIOUS_FLAG})
        meta["suspicious"] = found
    # A copy keeps the result's kind (an outcome a gateway's client reads: see toolsift.serve).
    return result.model_copy(update={"content": content, "meta": meta, "mcp_meta": None})
