"""What the person approving a call reads: the whole call, with only configured secrets hidden.

The audit's :func:`redact` is the wrong tool here. It cuts strings at 200
characters and hides every value whose key merely sounds like a credential
(``author``, ``max_tokens``, ``passage``) or whose text merely looks like one,
so a model could put its payload past the cut, or under such a key, and the
person would approve what they never saw. An approver is shown every argument
in full; the only values hidden are those the configuration holds as secrets
(what the sessions resolved from ``env``, ``headers``, ``${VAR}`` and
``secret://``), and the text says how many were hidden.

Characters that change how text looks without being seen (control characters,
a carriage return that rewrites a line, bidirectional overrides, zero-width
characters) are shown escaped, and every line of a multi-line value starts
with ``|``, so an argument cannot pose as another argument or as the footer.
A value too long to read inline can be handed to ``spill`` (the terminal
writes it to a private file), leaving its head and tail in the text.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["INLINE_CHARS", "SecretMask", "Spill", "describe_call"]

# Returns the text with every configured secret in it replaced (a session's masker).
SecretMask = Callable[[str], str]
# Keeps a value too long to show inline (argument name, whole text) and says where it can be read.
Spill = Callable[[str, str], str]

#: Values longer than this (in characters, as shown) go to ``spill`` when there is one.
INLINE_CHARS = 4_000
_HEAD_CHARS = _TAIL_CHARS = 1_500
_INDENT = "    | "
_SHOWN_RAW = {"\n", "\t"}
_ESCAPED_CATEGORIES = {"Cc", "Cf", "Zl", "Zp", "Cs"}


def _visible(text: str) -> str:
    """``text`` with the characters that hide or rewrite text escaped (``\\r``, ``\\u202e``...)."""
    if text.isprintable() and "\r" not in text:
        return text
    return "".join(
        char
        if char in _SHOWN_RAW or unicodedata.category(char) not in _ESCAPED_CATEGORIES
        else "\\r"
        if char == "\r"
        else f"\\u{ord(char):04x}"
        if ord(char) <= 0xFFFF
        else f"\\U{ord(char):08x}"
        for char in text
    )


def _masked(value: Any, mask: SecretMask, hidden: list[int]) -> Any:
    """``value`` with secrets masked in every string, keys included; ``hidden[0]`` counts the strings changed."""
    if isinstance(value, str):
        masked = mask(value)
        if masked != value:
            hidden[0] += 1
        return masked
    if isinstance(value, Mapping):
        return {_masked(str(key), mask, hidden): _masked(item, mask, hidden) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_masked(item, mask, hidden) for item in value]
    return value


def _block(text: str) -> list[str]:
    return [_INDENT + _visible(line) for line in text.split("\n")]


def _argument(key: str, value: Any, spill: Spill | None) -> list[str]:
    """The lines showing one argument: inline when short and on one line, else a ``|`` block."""
    name = key if key.isidentifier() else json.dumps(key, ensure_ascii=False)
    if isinstance(value, str):
        lines = value.count("\n") + 1
        text, kind = value, f"text, {lines:,} line{'s' if lines != 1 else ''}, {len(value):,} characters"
    else:
        text, kind = json.dumps(value, ensure_ascii=False, indent=2, default=str), "JSON"
    if "\n" not in text and len(text) <= 100:
        shown = json.dumps(value, ensure_ascii=False) if isinstance(value, str) else text
        return [f"  {_visible(name)}: {_visible(shown)}"]
    if spill is None or len(text) <= INLINE_CHARS:
        return [f"  {_visible(name)}: {kind}:", *_block(text)]
    where = spill(key, text)
    skipped = len(text) - _HEAD_CHARS - _TAIL_CHARS
    return [
        f"  {_visible(name)}: {kind}; the whole value is in {where}; its start and end:",
        *_block(text[:_HEAD_CHARS]),
        f"    ... {skipped:,} characters not shown here (read them in {where}) ...",
        *_block(text[-_TAIL_CHARS:]),
    ]


def describe_call(
    tool: str, reason: str, arguments: Mapping[str, Any], *, mask: SecretMask | None = None, spill: Spill | None = None
) -> str:
    """The call as its approver reads it: ``tool (reason)``, then every argument in full.

    Args:
        tool: The tool's name.
        reason: Why the call asks.
        arguments: The call's arguments, as the tool will get them.
        mask: Hides configured secrets; the footer says how many values it changed.
        spill: Takes values over :data:`INLINE_CHARS` characters and says where
            they can be read; only their head and tail are shown then. Without
            it every value is shown whole.
    """
    hidden = [0]
    if mask is not None:
        arguments = _masked(dict(arguments), mask, hidden)
    lines = [f"{_visible(tool)} ({reason})"]
    if not arguments:
        lines.append("  (no arguments)")
    for key, value in arguments.items():
        lines += _argument(str(key), value, spill)
    if hidden[0] == 1:
        lines.append("1 value hidden: it holds the value of a configured secret")
    elif hidden[0]:
        lines.append(f"{hidden[0]} values hidden: they hold the values of configured secrets")
    return "\n".join(lines)
