"""The one rule for a big result: past the limit it is cut, with a note that says what was cut.

Every call path applies it in the same place, the :class:`~toolsift.pipeline.ResultGuard`
stage, on the way out: after the tool ran (an MCP session fenced its untrusted server's
text), after the registry's audit record of how the call ended, and after the stage fenced
an untrusted builtin tool's text, so the size counted is the size sent and a cut keeps the
fence's closing marker. A served call passes the stage with ``serve.maxResultBytes``; the agent
loop's ``Conversation`` wraps its call handler in it with ``limits.maxResultBytes`` and
``limits.maxResultTokens`` (:func:`size_limit`: the smaller of the two, a token taken as
:data:`BYTES_PER_TOKEN` bytes, the usual rough figure for English text and code).

A result over the limit is cut rather than refused: the model (or client) keeps what fits and
reads in the note how much was left out, so it can ask for less; a refusal would leave it
nothing to go on, and the note means the cut is never silent. The cut keeps the server's
``_meta``, and ``is_error`` unless the structured content was left out: then the cut result is
an error result, because the structured answer is all-or-nothing data and a tool that declares
an ``outputSchema`` may not succeed without it (an MCP client, such as the SDK's, rejects that
success instead of showing what was kept).

What counts is what :func:`result_size` counts: UTF-8 text, the base64 payload of images,
audio and blobs, embedded resource text, a resource link's fields, and the JSON of the
structured content. A result over the limit is cut block by block, in order, within what is left:

- text (and an embedded text resource) is cut on a UTF-8 character boundary;
- a block that cannot be cut (image, audio, blob, resource link) is kept when
  it fits whole and dropped otherwise;
- structured content is dropped when there are content blocks (MCP asks tools
  to repeat it there as text, and that text is what the model reads); alone,
  it becomes its JSON text and is cut like text.

Beneath this rule, an MCP server's ``maxResultBytes`` (10 MiB by default) is the transport's
hard safety limit: a message over it is dropped as it arrives, before it is read into memory,
and the call ends with an error saying so.
"""

from __future__ import annotations

import json
from collections import Counter

import mcp.types as mcp_types

from .._fence import split_fence
from .._tokens import BYTES_PER_TOKEN
from ..registry import ToolResult

__all__ = ["cap_result", "result_size", "size_limit"]


def size_limit(max_bytes: int | None, max_tokens: int | None) -> int | None:
    """The limit in bytes: the smaller of ``max_bytes`` and ``max_tokens`` x 4; None: no limit."""
    limits = [
        limit
        for limit in (max_bytes, None if max_tokens is None else max_tokens * BYTES_PER_TOKEN)
        if limit is not None
    ]
    return min(limits) if limits else None


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


def _cut(block: mcp_types.ContentBlock, size: int) -> mcp_types.ContentBlock | None:
    """``block`` cut to ``size`` bytes, or None when it cannot be cut."""
    if isinstance(block, mcp_types.TextContent):
        return block.model_copy(update={"text": _cut_text(block.text, size)})
    if isinstance(block, mcp_types.EmbeddedResource) and isinstance(block.resource, mcp_types.TextResourceContents):
        resource = block.resource.model_copy(update={"text": _cut_text(block.resource.text, size)})
        return block.model_copy(update={"resource": resource})
    return None


def _left_out(blocks: Counter[str], structured: bool) -> str:
    parts = [f"{count} {kind} block{'s' if count > 1 else ''}" for kind, count in sorted(blocks.items())]
    return ", ".join([*parts, *(["the structured content"] if structured else [])])


def cap_result(result: ToolResult, cap: int | None) -> ToolResult:
    """``result`` itself when it fits in ``cap`` bytes; otherwise a copy cut to fit, with a note at the end.

    Args:
        result: What the tool returned.
        cap: Bytes one result may take (see :func:`size_limit`); None: no limit.
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
    content: list[mcp_types.ContentBlock] = []
    dropped: Counter[str] = Counter()
    kept = 0
    for block in blocks:
        size = _block_size(block)
        if kept + size > cap:
            cut = _cut(block, cap - kept) if kept < cap else None
            if cut is None or not (size := _block_size(cut)):
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
    # A copy keeps the result's kind (a subclass that says more than the content: see CallRecord).
    return result.model_copy(
        update={
            "content": content,
            "structured_content": None,
            "is_error": result.is_error or result.structured_content is not None,
            "meta": dict(result.meta),
        }
    )
