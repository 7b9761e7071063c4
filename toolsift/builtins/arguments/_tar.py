"""The tar policy: no program run for tar (compressors, scripts, pipes), no remote archives.

GNU tar runs programs through ``--to-command``, ``--checkpoint-action=exec=``,
``--use-compress-program`` (``-I``), ``--info-script`` and
``--new-volume-script`` (``-F``), and reaches ``HOST:FILE`` archives through
a remote shell (``--rsh-command``, and the host itself is handed to ssh).
Its first argument may be an old-style bundle (``tar xIf PROG x.tar``) whose
letters take their values from the following words; it is unbundled first.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import final

from ._declared import OptionRules
from ._options import Arity, Option, scan
from ._policy import Refusal
from ._remote import remote_host

__all__ = ["TarPolicy"]

_RUNS = "runs its value as a program"
_SCRIPT = "runs a script at the end of each volume"
_RULES = OptionRules.of(
    {
        "--to-command": "pipes each extracted file into a command it runs",
        "--checkpoint-action": "runs actions at checkpoints, exec=COMMAND among them",
        "--use-compress-program": _RUNS,
        "-I": _RUNS,
        "--info-script": _SCRIPT,
        "--new-volume-script": _SCRIPT,
        "-F": _SCRIPT,
        "--rsh-command": "names the remote shell tar runs",
        "--rmt-command": "names the program tar runs on a remote host",
    },
    values=("-b", "-C", "-f", "-g", "-H", "-K", "-L", "-N", "-T", "-V", "-X", "--file", "--directory",
            "--files-from", "--exclude-from", "--listed-incremental", "--format", "--label"),
    # Real options that are prefixes of denied ones, so that they are not read as abbreviations.
    optional=("--checkpoint",),
)
_SHORT_VALUES = frozenset(name[1] for name, arity in _RULES.grammar.options.items()
                          if len(name) == 2 and arity is Arity.REQUIRED)


@final
class TarPolicy:
    """The argument policy of GNU ``tar``."""

    def check(self, args: Sequence[str], *, workspace: Path | None) -> Refusal | None:
        """The first option that runs a program, or archive on another host."""
        args = _unbundle(args)
        refusal = _RULES.check(args)
        if refusal is not None:
            return refusal
        for token in scan(args, _RULES.grammar):
            if isinstance(token, Option) and token.name in ("-f", "--file") and token.value is not None \
                    and remote_host(token.value) is not None:
                return Refusal(token.value, "tar reads HOST:FILE as an archive on another host and starts a remote "
                                            "shell to reach it; name a local file as ./FILE")
        return None


def _unbundle(args: Sequence[str]) -> list[str]:
    """``xvf a.tar`` as ``-x -v -f a.tar``: each letter taking a value takes the next word after the bundle."""
    if not args or args[0].startswith("-"):
        return list(args)
    bundle, rest = args[0], list(args[1:])
    options: list[str] = []
    for letter in bundle:
        options.append(f"-{letter}")
        if letter in _SHORT_VALUES and rest:
            options.append(rest.pop(0))
    return options + rest
