"""Asking the person at the terminal to approve a call that an ``ask`` rule holds back."""

from __future__ import annotations

import sys
from collections.abc import Callable

import anyio

from ..registry import ApprovalRequest
from ._output import Output

__all__ = ["TerminalApprover"]

_ANSWERS = "[y]es once / [a]lways for this tool / [n]o"


def _read_answer(prompt: str) -> str | None:
    try:
        return input(prompt)
    except EOFError:
        return None


class TerminalApprover:
    """An approver that asks on stdin: yes once, yes for this tool until the command ends, or no.

    Anything but a yes, end of input included, is a no. With ``assume_yes``
    every call is approved and the approval is printed, for scripts that have
    read the rules they pass ``--yes`` to.

    Args:
        out: Where the question and the approvals are shown.
        assume_yes: Approve without asking.
        interactive: Whether a person can answer on stdin; when False (and not
            ``assume_yes``) an asked call is refused with the way out named.
        read: Reads one answer (``input`` by default, run off the event loop).
    """

    def __init__(self, out: Output, *, assume_yes: bool = False, interactive: bool | None = None,
                 read: Callable[[str], str | None] = _read_answer) -> None:
        self._out = out
        self._assume_yes = assume_yes
        self._interactive = sys.stdin.isatty() if interactive is None else interactive
        self._read = read
        self._always: set[str] = set()

    async def __call__(self, request: ApprovalRequest) -> bool:
        name = request.tool.name
        if self._assume_yes or name in self._always:
            self._out.note(f"approved: {request.describe()}")
            return True
        if not self._interactive:
            raise RuntimeError("there is no terminal to ask; pass --yes to approve such calls")
        self._out.line(f"Approve {request.describe()}?", style="yellow")
        answer = await anyio.to_thread.run_sync(self._read, f"{_ANSWERS}: ")
        choice = (answer or "").strip().lower()
        if choice in ("a", "always"):
            self._always.add(name)
        return choice in ("y", "yes", "a", "always")
