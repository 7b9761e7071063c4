"""``ResultGuard``: what comes back is bounded in size, and untrusted text is fenced.

The size counts every byte a client would receive: text, base64 payloads of
images, audio and blobs, embedded resource text, resource-link fields and the
JSON of the structured content. An oversized result is refused rather than
cut, because a silently truncated file or listing reads as complete.

Fencing marks text that came from outside (a file's content, a program's
output) as data, so a model reading it is told not to follow instructions
inside it. The fence itself is supplied by the caller (``toolsift serve``
passes the MCP session layer's ``guard_result``), which keeps this package
free of the session layer.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import final

import mcp.types as mcp_types

from ..registry import CallHandler, CallRecord, ToolResult, compile_patterns
from ._call import refusal_of, refuse

__all__ = ["Fence", "ResultGuard", "result_size"]

#: Wraps the text of a result from tool ``name`` in untrusted-content markers.
Fence = Callable[[ToolResult, str], ToolResult]


def _block_size(block: mcp_types.ContentBlock) -> int:
    if isinstance(block, mcp_types.TextContent):
        return len(block.text.encode("utf-8"))
    if isinstance(block, mcp_types.ImageContent | mcp_types.AudioContent):
        return len(block.data)
    if isinstance(block, mcp_types.EmbeddedResource):
        resource = block.resource
        if isinstance(resource, mcp_types.TextResourceContents):
            return len(resource.text.encode("utf-8"))
        return len(resource.blob)
    return len(block.model_dump_json(exclude_none=True))


def result_size(result: ToolResult) -> int:
    """The bytes of content a client receives for ``result``."""
    size = sum(_block_size(block) for block in result.content)
    if result.structured_content is not None:
        size += len(json.dumps(result.structured_content, default=str).encode("utf-8"))
    return size


@final
class ResultGuard:
    """Refuses oversized results and fences the text of untrusted tools.

    Args:
        handler: The next stage.
        max_bytes: Largest result passed on (see :func:`result_size`); None: no limit.
        untrusted: Globs of tools whose results are fenced (``read_file``, ``exec_shell``).
        fence: How to fence; required when ``untrusted`` is not empty.

    Raises:
        ValueError: When ``max_bytes`` is not positive, or ``untrusted`` is given without ``fence``.
        InvalidPattern: When an ``untrusted`` glob is invalid.
    """

    def __init__(
        self,
        handler: CallHandler,
        *,
        max_bytes: int | None = None,
        untrusted: Sequence[str] = (),
        fence: Fence | None = None,
    ) -> None:
        if max_bytes is not None and max_bytes <= 0:
            raise ValueError(f"max_bytes must be positive, got {max_bytes!r}")
        if untrusted and fence is None:
            raise ValueError(f"ResultGuard(untrusted={list(untrusted)!r}) needs a fence to wrap their results with")
        self._handler = handler
        self._max_bytes = max_bytes
        self._untrusted = compile_patterns(untrusted, where="untrusted tools") if untrusted else None
        self._fence = fence

    async def __call__(self, call: CallRecord) -> ToolResult:
        result = await self._handler(call)
        if refusal_of(result) is not None:
            return result  # the pipeline's own words, not the tool's
        if self._max_bytes is not None:
            size = result_size(result)
            if size > self._max_bytes:
                return refuse(
                    "ResultGuard",
                    f"The result of tool {call.name!r} is {size:,} bytes, over the limit "
                    f"of {self._max_bytes:,} bytes; ask for less (a smaller file, a "
                    "narrower query)",
                )
        if self._untrusted is not None and self._fence is not None and self._untrusted.matches(call.name):
            return self._fence(result, call.name)
        return result
