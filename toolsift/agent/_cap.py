"""A cap on how much of one tool result reaches the model.

A tool may return megabytes (a log, a whole file, an echo of its input), and the
agent loop would put all of it in the model's context. Past the cap the result
is cut and a note is appended that says what was cut, so the model knows it did
not see everything and can ask for less.

What counts is what :func:`toolsift.pipeline.result_size` counts: UTF-8 text, the
base64 payload of images, audio and blobs, embedded resource text, a resource
link's fields, and the JSON of the structured content. A token is taken to be
:data:`BYTES_PER_TOKEN` bytes, the usual rough figure for English text and code.

A result over the cap is cut block by block, in order, within what is left:

- text (and an embedded text resource) is cut on a UTF-8 character boundary;
- a block that cannot be cut (image, audio, blob, resource link) is kept when
  it fits whole and dropped otherwise;
- structured content is dropped when there are content blocks (MCP asks tools
  to repeat it there as text, and that text is what the model reads); alone,
  it becomes its JSON text and is cut like text.

A cut text that was fenced as untrusted keeps its closing marker, so the note
after it is never read as part of the tool's data.
"""

from __future__ import annotations

import json
from collections import Counter

import mcp.types as mcp_types

from ..config import LimitsConfig
from ..mcp_sessions import split_fence
from ..pipeline import result_size
from ..registry import ContentBlock, ToolResult

__all__ = ["BYTES_PER_TOKEN", "cap_result", "result_cap"]

BYTES_PER_TOKEN = 4


def result_cap(limits: LimitsConfig) -> int | None:
    """The cap in bytes: the smaller of ``max_result_bytes`` and ``max_result_tokens`` x 4; None: no cap."""
    caps = [
        cap
        for cap in (
            limits.max_result_bytes,
            None if limits.max_result_tokens is None else limits.max_result_tokens * BYTES_PER_TOKEN,
        )
        if cap is not None
    ]
    return min(caps) if caps else None


def _utf8(text: str) -> int:
    return len(text.encode("utf-8"))


def _prefix(text: str, size: int) -> str:
    """The longest prefix of ``text`` whose UTF-8 encoding fits in ``size`` bytes."""
    # A byte cut may split a character; "ignore" drops only that trailing partial sequence.
    return text.encode("utf-8")[:size].decode("utf-8", "ignore")


def _cut_text(text: str, size: int) -> str:
    fenced = split_fence(text)
    if fenced is None:
        return _prefix(text, size)
    opening, body, closing = fenced
    return _prefix(opening + body, max(size - _utf8(closing), 0)) + closing


def _cut(block: ContentBlock, size: int) -> ContentBlock | None:
    """``block`` cut to ``size`` bytes, or None when it cannot be cut."""
    if isinstance(block, mcp_types.TextContent):
        return block.model_copy(update={"text": _cut_text(block.text, size)})
    if isinstance(block, mcp_types.EmbeddedResource) and isinstance(block.resource, mcp_types.TextResourceContents):
        resource = block.resource.model_copy(update={"text": _cut_text(block.resource.text, size)})
        return block.model_copy(update={"resource": resource})
    return None


def _size(block: ContentBlock) -> int:
    return result_size(ToolResult(content=[block]))


def _left_out(blocks: Counter[str], structured: bool) -> str:
    parts = [f"{count} {kind} block{'s' if count > 1 else ''}" for kind, count in sorted(blocks.items())]
    return ", ".join([*parts, *(["the structured content"] if structured else [])])


def cap_result(result: ToolResult, cap: int | None) -> ToolResult:
    """``result`` itself when it fits in ``cap`` bytes; otherwise a copy cut to fit, with a note at the end.

    Args:
        result: What the tool returned.
        cap: Bytes the model may get from one result (see :func:`result_cap`); None: no cap.
    """
    if cap is None:
        return result
    original = result_size(result)
    if original <= cap:
        return result
    blocks = list(result.content)
    structured_dropped = result.structured_content is not None and bool(blocks)
    if result.structured_content is not None and not blocks:
        blocks = [mcp_types.TextContent(text=json.dumps(result.structured_content, ensure_ascii=False, default=str))]
    content: list[ContentBlock] = []
    dropped: Counter[str] = Counter()
    kept = 0
    for block in blocks:
        size = _size(block)
        if kept + size > cap:
            cut = _cut(block, cap - kept) if kept < cap else None
            if cut is None or not (size := _size(cut)):
                dropped[block.type] += 1
                continue
            block = cut
        content.append(block)
        kept += size
    note = (
        f"[toolsift: this result was cut to fit the limit of {cap:,} bytes (about {cap // BYTES_PER_TOKEN:,} "
        f"tokens): the tool returned {original:,} bytes, {kept:,} are shown"
    )
    if dropped or structured_dropped:
        note += f"; left out: {_left_out(dropped, structured_dropped)}"
    content.append(
        mcp_types.TextContent(text=note + ". Ask for less (a narrower query, a range, a page) to see the rest.]")
    )
    return ToolResult(content=content, is_error=result.is_error, meta=dict(result.meta))
