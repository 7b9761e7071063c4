"""JSONC (JSON with comments and trailing commas) turned into JSON with every position kept.

VS Code's and Cursor's ``mcp.json`` and Gemini CLI's ``settings.json`` allow
``//`` and ``/* */`` comments and a comma before a closing bracket. Blanking
those out with spaces, newlines kept, leaves text that ``json.loads`` accepts
and in which every key sits on the same line and column as in the file, so the
line scan and the parser's own error positions stay right. Written by hand
because the JSON5/JSONC libraries return values only, never positions.
"""

from __future__ import annotations

import re

__all__ = ["UnclosedComment", "strip_jsonc"]

_TOKENS = re.compile(
    r"""
      (?P<string>"(?:[^"\\]|\\.)*")   # a string: comment-like text inside it stays
    | (?P<comment>//[^\n]*|/\*.*?\*/)
    | (?P<unclosed>/\*)
    | (?P<comma>,)
    | (?P<close>[}\]])
    | (?P<other>[{\[]|[^\s"/,{}\[\]]+|["/])
    """,
    re.VERBOSE | re.DOTALL,
)
_KEEP = frozenset("\r\n")


class UnclosedComment(ValueError):
    """Raised when a ``/*`` comment runs to the end of the text.

    Attributes:
        line: The 1-based line where the comment starts.
    """

    def __init__(self, line: int) -> None:
        self.line = line
        super().__init__(f"a /* comment that starts on line {line} is not closed by */")


def strip_jsonc(text: str) -> str:
    """``text`` with comments and trailing commas replaced by spaces; plain JSON comes back unchanged.

    A comma counts as trailing only after a value (``[1,]``), so ``{,}`` and
    ``[1,,]`` stay as written and ``json.loads`` reports them at their place.

    Raises:
        UnclosedComment: When a ``/*`` is never closed.
    """
    chars = list(text)
    previous = ""  # the last token that is not a comment
    comma: int | None = None  # a comma that is trailing if a closing bracket comes next
    for match in _TOKENS.finditer(text):
        kind = match.lastgroup
        if kind == "comment":
            for index in range(match.start(), match.end()):
                if chars[index] not in _KEEP:
                    chars[index] = " "
            continue
        if kind == "unclosed":
            raise UnclosedComment(text.count("\n", 0, match.start()) + 1)
        if kind == "close" and comma is not None:
            chars[comma] = " "
        comma = match.start() if kind == "comma" and previous not in ("", ",", "{", "[") else None
        previous = match.group()
    return "".join(chars)
