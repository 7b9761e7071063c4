"""``ResultGuard``: untrusted text is fenced, then the result is held to the size rule.

Fencing marks text that came from outside (a file's content, a program's
output) as data, so a model reading it is told not to follow instructions
inside it. The fence itself is supplied by the caller (``toolsift serve``
passes the MCP session layer's ``guard_result`` with the tool's server).

The size comes after the fence, so what is counted is what is sent, and a cut
keeps the fence's closing marker; the rule (cut with a note, never refuse) is
``_size``'s.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import final

from .._globs import compile_patterns
from ..registry import CallHandler, CallRecord, ToolResult
from ._call import refusal_of
from ._checkpoint import Checkpoint
from ._size import cap_result, size_limit

__all__ = ["Fence", "ResultGuard"]

#: Wraps the text of a result from tool ``name`` in untrusted-content markers.
Fence = Callable[[ToolResult, str], ToolResult]


@final
class ResultGuard(Checkpoint):
    """Fences the text of untrusted tools, then cuts a result over the size limit, with a note.

    Args:
        handler: The next stage.
        max_bytes: Most bytes of a result passed on (see :func:`result_size`); None: no byte limit.
        max_tokens: The same limit in tokens of 4 bytes; the smaller of the two applies. None: no token limit.
        untrusted: Globs of tools whose results are fenced (``read_file``, ``exec_shell``).
        fence: How to fence; required when ``untrusted`` is not empty.

    Raises:
        ValueError: When ``max_bytes`` or ``max_tokens`` is not positive, or ``untrusted`` is given without ``fence``.
        InvalidPattern: When an ``untrusted`` glob is invalid.
    """

    def __init__(
        self,
        handler: CallHandler,
        *,
        max_bytes: int | None = None,
        max_tokens: int | None = None,
        untrusted: Sequence[str] = (),
        fence: Fence | None = None,
    ) -> None:
        for name, value in (("max_bytes", max_bytes), ("max_tokens", max_tokens)):
            if value is not None and value <= 0:
                raise ValueError(f"{name} must be positive, got {value!r}")
        if untrusted and fence is None:
            raise ValueError(f"ResultGuard(untrusted={list(untrusted)!r}) needs a fence to wrap their results with")
        super().__init__(handler)
        self._limit = size_limit(max_bytes, max_tokens)
        self._untrusted = compile_patterns(untrusted, where="untrusted tools") if untrusted else None
        self._fence = fence

    def leave(self, call: CallRecord, result: ToolResult, seconds: float) -> ToolResult:
        if refusal_of(result) is not None:
            return result  # the pipeline's own words, not the tool's
        if self._untrusted is not None and self._fence is not None and self._untrusted.matches(call.name):
            result = self._fence(result, call.name)
        return cap_result(result, self._limit)
