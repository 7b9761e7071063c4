"""``exec_shell``: run one allowed program in the workspace, without a shell, inside a sandbox.

The program runs under bubblewrap (see :class:`Sandbox`): the workspace is the
only folder it can write, what configures toolsift is hidden from it, it has
no network unless the policy allows it, no stdin and a minimal environment
(the server's own variables may hold credentials). On timeout, and when the
caller is cancelled, the sandbox is killed with everything in it (see
``_sandbox_process``), so a program cannot leave children running behind it.
"""

from __future__ import annotations

import os
import shlex
from typing import Annotated

import anyio
import mcp.types as mcp_types
from anyio.abc import ByteReceiveStream
from pydantic import Field

from ..registry import Level, ToolResult
from ..registry._internal import FunctionTool
from ._commands import CommandPolicy
from ._sandbox import SANDBOX_PATH, Sandbox, SandboxUnavailable
from ._sandbox_process import sandboxed_process
from ._workspace import Workspace

__all__ = ["ShellTool"]


class _Capture:
    """The first ``limit`` bytes of a stream; the rest is counted and dropped."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self.data = bytearray()
        self.total = 0

    async def drain(self, stream: ByteReceiveStream | None) -> None:
        if stream is None:  # pragma: no cover - both pipes are always requested
            return
        async for chunk in stream:
            self.total += len(chunk)
            room = self._limit - len(self.data)
            if room > 0:
                self.data += chunk[:room]

    def text(self, label: str) -> str:
        text = self.data.decode("utf-8", errors="replace")
        if self.total > len(self.data):
            text += f"\n[{label} truncated: {self.total:,} bytes, {len(self.data):,} shown]"
        return text


class ShellTool:
    """``exec_shell`` for one workspace and one command policy.

    Args:
        workspace: The folder programs run in, and its protected paths.
        policy: Which programs may run, with network or not, and the budgets.
        bwrap: The bubblewrap program; default: ``bwrap`` on ``PATH``. Where
            it is missing or cannot make a sandbox, every command is refused.
    """

    def __init__(
        self, workspace: Workspace, policy: CommandPolicy, *, bwrap: str | os.PathLike[str] | None = None
    ) -> None:
        self._workspace = workspace
        self._policy = policy
        self._sandbox = Sandbox(workspace, network=policy.network, bwrap=bwrap)

    def tool(self) -> FunctionTool:
        """The tool, ready to register (it requires level ``execute``)."""
        annotations = mcp_types.ToolAnnotations(
            read_only_hint=False, destructive_hint=True, open_world_hint=self._policy.network
        )
        return FunctionTool(self.exec_shell, required_level=Level.EXECUTE, annotations=annotations)

    async def exec_shell(
        self,
        command: Annotated[
            str,
            Field(
                description="One program and its arguments, split like a shell would "
                "split words (no pipes, redirections or ';')"
            ),
        ],
    ) -> ToolResult:
        """Run an allowed program in the workspace folder, sandboxed, and return its exit code and output."""
        argv = self._policy.parse(command, tool="exec_shell")
        program = self._sandbox.program(argv[0])
        if program is None:
            where = (
                "is not an executable under the system folders the sandbox shows (/usr)"
                if os.path.isabs(argv[0])
                else f"was not found on the sandbox's PATH ({SANDBOX_PATH})"
            )
            return ToolResult.error(f"exec_shell: the program {argv[0]!r} is allowed but {where}")
        stdout, stderr = _Capture(self._policy.max_output_bytes), _Capture(self._policy.max_output_bytes)
        try:
            async with sandboxed_process(self._sandbox, [program, *argv[1:]]) as process:
                with anyio.move_on_after(self._policy.timeout) as deadline:
                    async with anyio.create_task_group() as group:
                        group.start_soon(stdout.drain, process.stdout)
                        group.start_soon(stderr.drain, process.stderr)
                    await process.wait()
        except SandboxUnavailable as exc:
            return ToolResult.error(f"exec_shell is refused: {exc}")
        except OSError as exc:
            return ToolResult.error(f"exec_shell: cannot start the sandbox for {argv[0]!r}: {exc.strerror or exc}")
        return self._result(argv, process.returncode, stdout, stderr, timed_out=deadline.cancelled_caught)

    def _result(
        self, argv: list[str], code: int | None, stdout: _Capture, stderr: _Capture, *, timed_out: bool
    ) -> ToolResult:
        shown = shlex.join(argv)
        if timed_out:
            head = (
                f"exec_shell: {shown!r} ran past its time budget of {self._policy.timeout:g}s; the sandbox and "
                "everything in it was killed"
            )
        else:
            head = f"$ {shown}\nexit code {code}"
        parts = [head]
        if stdout.total:
            parts.append(stdout.text("stdout"))
        if stderr.total:
            parts += ["--- stderr ---", stderr.text("stderr")]
        structured = {
            "exit_code": None if timed_out else code,
            "stdout": stdout.data.decode("utf-8", errors="replace"),
            "stderr": stderr.data.decode("utf-8", errors="replace"),
            "timed_out": timed_out,
            "truncated": stdout.total > len(stdout.data) or stderr.total > len(stderr.data),
        }
        result = ToolResult.text("\n".join(parts), structured=structured)
        return result.model_copy(update={"is_error": timed_out or code != 0})
