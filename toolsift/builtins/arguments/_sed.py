"""The sed policy: scripts are read, and the commands that run or write are refused.

GNU sed's ``e`` command and ``s///e`` flag run shell commands; ``w``, ``W``
and ``s///w`` write to any file. The script comes from ``-e``/``--expression``
(joined with newlines, as sed joins them) or else from the first operand; a
script file (``-f``) cannot be read here and is refused, and so is a script
this reader cannot follow to the end. Options follow GNU sed; on BSD sed,
``-i`` takes its suffix from the next word, which this reading does not follow.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import final

from ._declared import OptionRules
from ._options import Operand, Option, scan
from ._policy import Refusal

__all__ = ["SedPolicy", "sed_refusal"]

_SCRIPT_FILE = "reads the script from a file, which this policy cannot inspect"
_RULES = OptionRules.of(
    {"-f": _SCRIPT_FILE, "--file": _SCRIPT_FILE},
    values=("-e", "--expression", "-l", "--line-length"),
    optional=("-i", "--in-place"),
    flags=("-n", "--quiet", "--silent", "--debug", "--follow-symlinks", "--posix", "-E", "-r", "--regexp-extended",
           "-s", "--separate", "--sandbox", "-u", "--unbuffered", "-z", "--null-data", "--zero-terminated", "-b",
           "--binary", "--help", "--version"),
    complete=True,
)

_PLAIN = frozenset("=dDgGhHnNpPxzF}")
_NUMBERED = frozenset("lLqQ")
_LABELLED = frozenset("btT:v")
_SEPARATORS = ";\n}#"


@final
class SedPolicy:
    """The argument policy of ``sed``."""

    def check(self, args: Sequence[str], *, workspace: Path | None) -> Refusal | None:
        """A refused option, or the script when it runs or writes."""
        refusal = _RULES.check(args)
        if refusal is not None:
            return refusal
        tokens = list(scan(args, _RULES.grammar))
        expressions = [t.value for t in tokens if isinstance(t, Option) and t.name in ("-e", "--expression")]
        operands = [t.word for t in tokens if isinstance(t, Operand)]
        script = "\n".join(v for v in expressions if v is not None) if expressions else next(iter(operands), "")
        reason = sed_refusal(script)
        return Refusal(script, reason) if reason is not None else None


class _Unreadable(Exception):
    """The script has a part this reader cannot follow."""


def sed_refusal(script: str) -> str | None:
    """Why ``script`` is refused (a command that runs or writes, or an unreadable part), or None."""
    try:
        return _Reader(script).refusal()
    except _Unreadable as exc:
        return f"the script cannot be checked: {exc}"


class _Reader:
    """Walks a sed script command by command, the way GNU sed's compiler does."""

    def __init__(self, script: str) -> None:
        self.text = script
        self.at = 0

    def refusal(self) -> str | None:
        while True:
            self.skip(" \t\n;")
            if self.at >= len(self.text):
                return None
            if self.peek() == "#":
                self.to_line_end()
                continue
            self.addresses()
            command = self.take()
            if not command:
                raise _Unreadable("an address without a command at the end")
            if command in ("e", "w", "W"):
                what = "runs a shell command" if command == "e" else "writes to a file"
                return f"its {command!r} command {what}"
            if command == "s":
                reason = self.substitution()
                if reason is not None:
                    return reason
            elif command == "y":
                self.delimited(parts=2)
            elif command in _NUMBERED:
                self.skip(" \t")
                self.skip("0123456789")
            elif command in _LABELLED:
                self.skip(" \t")
                self.until(" \t" + _SEPARATORS)
            elif command in ("a", "i", "c", "r", "R"):
                self.to_line_end()  # text or a file name, to the end of the line
            elif command == "{":
                continue  # the next command may follow at once
            elif command not in _PLAIN:
                raise _Unreadable(f"{command!r} at offset {self.at - 1} is not a sed command")
            self.skip(" \t")
            if self.at < len(self.text) and self.peek() not in _SEPARATORS:
                raise _Unreadable(f"unexpected {self.peek()!r} at offset {self.at} after a command")

    def substitution(self) -> str | None:
        self.delimited(parts=2)
        while self.at < len(self.text):
            flag = self.peek()
            if flag == "e":
                return "its s///e flag runs the result as a shell command"
            if flag == "w":
                return "its s///w flag writes to a file"
            if flag not in "gpiImM0123456789":
                break
            self.at += 1
        return None

    def addresses(self) -> None:
        if self.address():
            self.skip(" \t")
            if self.at < len(self.text) and self.peek() == ",":
                self.at += 1
                self.skip(" \t")
                if self.peek() in ("+", "~"):
                    self.at += 1
                if not self.address():
                    raise _Unreadable(f"missing second address at offset {self.at}")
        self.skip(" \t")
        while self.at < len(self.text) and self.peek() == "!":
            self.at += 1
            self.skip(" \t")

    def address(self) -> bool:
        start = self.at
        char = self.peek()
        if char.isdigit():
            self.skip("0123456789")
            if self.peek() == "~":
                self.at += 1
                self.skip("0123456789")
        elif char == "$":
            self.at += 1
        elif char in ("/", "\\"):
            if char == "\\":
                self.at += 1
            self.delimited(parts=1)
            self.skip("IM")
        return self.at > start

    def delimited(self, *, parts: int) -> None:
        """Skip ``parts`` parts ended by the delimiter under the cursor; a backslash escapes the next character."""
        delimiter = self.take()
        if delimiter in ("", "\n", "\\"):
            raise _Unreadable(f"no usable delimiter at offset {self.at - 1}")
        for _ in range(parts):
            while True:
                char = self.take()
                if char == "":
                    raise _Unreadable(f"unterminated {delimiter!r}-delimited part")
                if char == "\\":
                    self.take()
                elif char == delimiter:
                    break

    def peek(self) -> str:
        return self.text[self.at:self.at + 1]

    def take(self) -> str:
        char = self.peek()
        self.at += len(char)
        return char

    def skip(self, chars: str) -> None:
        while self.at < len(self.text) and self.text[self.at] in chars:
            self.at += 1

    def until(self, stops: str) -> None:
        while self.at < len(self.text) and self.text[self.at] not in stops:
            self.at += 1

    def to_line_end(self) -> None:
        """To the next newline not escaped by a backslash (``a``/``i``/``c`` text continues across those)."""
        while self.at < len(self.text) and self.text[self.at] != "\n":
            self.at += 2 if self.text[self.at] == "\\" else 1
