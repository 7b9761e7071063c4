"""Asking the person at the terminal to approve a call that an ``ask`` rule holds back."""

from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import anyio

from ..registry import ApprovalRequest
from ._output import Output

__all__ = ["TerminalApprover"]

_ANSWERS = "[y]es once / [a]lways for this tool / [n]o"
_UNSAFE_IN_FILE_NAMES = re.compile(r"[^A-Za-z0-9_.-]+")


def _read_answer(prompt: str) -> str | None:
    try:
        return input(prompt)
    except EOFError:
        return None


class _ValueFiles:
    """A private folder (0700) holding, in files of their own (0600), the values too long to show inline.

    The person reads them before answering; the folder is removed once they have.
    """

    def __init__(self) -> None:
        self.folder: Path | None = None

    def __call__(self, argument: str, text: str) -> str:
        if self.folder is None:
            self.folder = Path(tempfile.mkdtemp(prefix="toolsift-approval-"))
        stem = _UNSAFE_IN_FILE_NAMES.sub("_", argument)[:60] or "value"
        path = self.folder / f"{stem}.txt"
        index = 1
        while path.exists():
            index += 1
            path = self.folder / f"{stem}-{index}.txt"
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8", errors="surrogateescape") as file:
            file.write(text)
        return str(path)

    def remove(self) -> None:
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None


class TerminalApprover:
    """An approver that asks on stdin: yes once, yes for this tool until the command ends, or no.

    The person sees the whole call (:meth:`ApprovalRequest.describe`): every
    argument in full, a value too long for the screen in a private file whose
    path is shown (removed once answered), and only the configured secrets
    hidden. Anything but a yes, end of input included, is a no. With
    ``assume_yes`` every call is approved and the approval is printed, for
    scripts that have read the rules they pass ``--yes`` to.

    Args:
        out: Where the question and the approvals are shown.
        assume_yes: Approve without asking.
        interactive: Whether a person can answer on stdin; when False (and not
            ``assume_yes``) an asked call is refused with the way out named.
        read: Reads one answer (``input`` by default, run off the event loop).
        mask: Hides configured secrets in what is shown (``McpServerManager.mask_secrets``).
    """

    def __init__(
        self,
        out: Output,
        *,
        assume_yes: bool = False,
        interactive: bool | None = None,
        read: Callable[[str], str | None] = _read_answer,
        mask: Callable[[str], str] | None = None,
    ) -> None:
        self._out = out
        self._assume_yes = assume_yes
        self._interactive = sys.stdin.isatty() if interactive is None else interactive
        self._read = read
        self._mask = mask
        self._always: set[str] = set()

    async def __call__(self, request: ApprovalRequest) -> bool:
        name = request.tool.name
        if self._assume_yes or name in self._always:
            self._out.note(f"approved: {request.describe(mask=self._mask)}")
            return True
        if not self._interactive:
            raise RuntimeError("there is no terminal to ask; pass --yes to approve such calls")
        files = _ValueFiles()
        try:
            # No markup, emoji codes or highlighting: the person reads the arguments exactly as they are.
            self._out.out.print(
                f"Approve {request.describe(mask=self._mask, spill=files)}",
                style="yellow",
                markup=False,
                emoji=False,
                highlight=False,
            )
            answer = await anyio.to_thread.run_sync(self._read, f"{_ANSWERS}: ")
        finally:
            files.remove()
        choice = (answer or "").strip().lower()
        if choice in ("a", "always"):
            self._always.add(name)
        return choice in ("y", "yes", "a", "always")
