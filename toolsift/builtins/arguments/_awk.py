"""The awk policy (awk, gawk, mawk, nawk): programs are read, and what runs or writes is refused.

awk runs commands with ``system()`` and with pipes (``print | "cmd"``,
``"cmd" | getline``, gawk's ``|&``), writes files with ``print > "file"``,
and gawk loads code with ``@load``, ``@include``, ``-l`` and ``-i`` and calls
any function, ``system`` included, indirectly (``@name()``). Telling a string
from a regular expression or a division needs awk's whole grammar, so the
program text is searched as it stands, strings included: a ``|`` that is not
``||``, ``system``, ``@name``, and ``>`` in a program that prints. That
refuses a little more than it must; it never reads a string where awk sees code.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import final

from ._declared import OptionRules
from ._options import Operand, Option, scan
from ._policy import Refusal

__all__ = ["AwkPolicy", "awk_refusal"]

_FILE = "reads the program from a file, which this policy cannot inspect"
_WRITES = "writes to the file it names"
_RULES = OptionRules.of(
    {
        "-f": _FILE, "--file": _FILE, "-E": _FILE, "--exec": _FILE,
        "-i": "includes awk source from a file, which this policy cannot inspect", "--include": _FILE,
        "-l": "loads a compiled extension", "--load": "loads a compiled extension",
        "-W": "passes an implementation option (gawk: any long option; mawk: exec FILE) this policy does not read",
        "-D": "starts the debugger, which can evaluate any awk statement", "--debug": "starts the debugger, which "
                                                                                     "can evaluate any awk statement",
        "-d=": _WRITES, "--dump-variables=": _WRITES, "-o=": _WRITES, "--pretty-print=": _WRITES,
        "-p=": _WRITES, "--profile=": _WRITES,
    },
    values=("-F", "--field-separator", "-v", "--assign", "-e", "--source"),
    optional=("-L", "--lint"),
    flags=("-b", "--characters-as-bytes", "-c", "--traditional", "-C", "--copyright", "-g", "--gen-pot", "-h",
           "--help", "-k", "--csv", "-M", "--bignum", "-n", "--non-decimal-data", "-N", "--use-lc-numeric", "-O",
           "--optimize", "-s", "--no-optimize", "-P", "--posix", "-r", "--re-interval", "-S", "--sandbox", "-t",
           "--lint-old", "-V", "--version", "-Y"),
    complete=True,
)

_CHECKS = (
    (re.compile(r"\bsystem\b"), "it calls system(), which runs a shell command"),
    (re.compile(r"(?<!\|)(?:\||\|{3,})(?!\|)"), "it uses '|', which pipes to or from a shell command"),
    (re.compile(r"@\s*[A-Za-z_]"), "it uses @ (gawk's @load, @include or an indirect call such as @f())"),
)
_PRINTS = re.compile(r"\bprintf?\b")


@final
class AwkPolicy:
    """The argument policy of ``awk`` and its kin."""

    def check(self, args: Sequence[str], *, workspace: Path | None) -> Refusal | None:
        """A refused option, or a program text that runs or writes."""
        refusal = _RULES.check(args)
        if refusal is not None:
            return refusal
        tokens = list(scan(args, _RULES.grammar))
        sources = [t.value for t in tokens if isinstance(t, Option) and t.name in ("-e", "--source")]
        operands = [t.word for t in tokens if isinstance(t, Operand)]
        for program in [s for s in sources if s is not None] if sources else operands[:1]:
            reason = awk_refusal(program)
            if reason is not None:
                return Refusal(program, reason)
        return None


def awk_refusal(program: str) -> str | None:
    """Why the awk ``program`` is refused, or None."""
    for pattern, reason in _CHECKS:
        if pattern.search(program):
            return reason
    if ">" in program and _PRINTS.search(program):
        return "it prints and uses '>', which in a print statement writes to a file"
    return None
