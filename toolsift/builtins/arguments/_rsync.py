"""The rsync policy: no remote shell or remote program of the caller's choosing, no daemon.

rsync runs ``-e``/``--rsh`` as its remote shell, ``--rsync-path`` on the
other end (which, for ``localhost:``, is here), passes ``-M`` options to a
remote rsync the policy cannot see, and ``--daemon`` runs the ``exec`` hooks
of a config file. A ``HOST:PATH`` whose host starts with ``-`` reaches ssh as
an option (``-oProxyCommand=...``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import final

from ._declared import OptionRules
from ._options import Operand, scan
from ._policy import Refusal
from ._remote import remote_host

__all__ = ["RsyncPolicy"]

_SHELL = "names the remote shell rsync runs"
_REMOTE = "passes options to the rsync on the other end, which this policy cannot check"
_RULES = OptionRules.of(
    {
        "-e": _SHELL,
        "--rsh": _SHELL,
        "--rsync-path": "names the program rsync runs on the other end, which for localhost is here",
        "-M": _REMOTE,
        "--remote-option": _REMOTE,
        "--daemon": "starts an rsync daemon, whose config file can run programs (pre-xfer exec)",
    },
    values=("-B", "-f", "-T", "-@"),
)


@final
class RsyncPolicy:
    """The argument policy of ``rsync``."""

    def check(self, args: Sequence[str], *, workspace: Path | None) -> Refusal | None:
        """The first option naming a program, or host that would reach ssh as an option."""
        refusal = _RULES.check(args)
        if refusal is not None:
            return refusal
        for token in scan(args, _RULES.grammar):
            if isinstance(token, Operand) and (remote_host(token.word) or "").startswith("-"):
                return Refusal(token.word, "its host starts with '-', which the remote shell would read as an "
                                           "option (-oProxyCommand=...)")
        return None
