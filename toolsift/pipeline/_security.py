"""``SecurityGuard``: the policies a call's arguments must satisfy before the tool is even looked up.

It checks, in order: the size of the arguments, the per-tool argument
rules, the command policy on arguments that hold command lines, and the URL
policy on every URL found in any argument. Schema validation is not repeated
here: ``ToolRegistry.execute`` validates against the tool's inputSchema, and
the rules below read values defensively (a number where a string was
expected is checked as its JSON text).

Unlike the rules of a single tool, these apply to every tool that matches,
gateway tools from other MCP servers included: a ``commands`` policy that
covers ``*__run_command`` guards someone else's shell tool too.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import final

from .._exceptions import PolicyDenied
from .._globs import compile_patterns
from .._net import urls_in
from ..builtins import CommandPolicy
from ..config._internal import ArgumentRule, UrlPolicy
from ..registry import CallHandler, CallRecord, ToolResult
from ._call import refuse
from ._checkpoint import Checkpoint

__all__ = ["SecurityGuard"]

#: Tools whose argument holds a command line, by glob: the builtin ``exec_shell``.
DEFAULT_COMMAND_ARGUMENTS: Mapping[str, str] = {"exec_shell": "command"}


@final
class SecurityGuard(Checkpoint):
    """Refuses calls whose arguments break a policy; the tool never runs.

    Args:
        handler: The next stage.
        max_argument_bytes: Largest accepted arguments, measured as JSON; None: no limit.
        arguments: Per tool glob, per argument name, the rule its values must follow
            (``{"write_file": {"path": ArgumentRule(denied=["*.env"])}}``).
        commands: The command policy for arguments that hold command lines; None: not checked.
        command_arguments: Which argument of which tools (by glob) holds a command line.
        urls: The URL policy applied to every argument; None: not checked.

    Raises:
        InvalidPattern: When a tool glob is not a valid tool-name glob.
        ValueError: When ``max_argument_bytes`` is not positive.
    """

    def __init__(
        self,
        handler: CallHandler,
        *,
        max_argument_bytes: int | None = None,
        arguments: Mapping[str, Mapping[str, ArgumentRule]] | None = None,
        commands: CommandPolicy | None = None,
        command_arguments: Mapping[str, str] = DEFAULT_COMMAND_ARGUMENTS,
        urls: UrlPolicy | None = None,
    ) -> None:
        if max_argument_bytes is not None and max_argument_bytes <= 0:
            raise ValueError(f"max_argument_bytes must be positive, got {max_argument_bytes!r}")
        super().__init__(handler)
        self._max_bytes = max_argument_bytes
        self._rules = [
            (compile_patterns([glob], where="argument policies"), argument, rule)
            for glob, rules in (arguments or {}).items()
            for argument, rule in rules.items()
        ]
        self._commands = commands
        self._command_arguments = [
            (compile_patterns([glob], where="command arguments"), argument)
            for glob, argument in command_arguments.items()
        ]
        self._urls = urls if urls is not None and urls.active else None

    def enter(self, call: CallRecord) -> CallRecord | ToolResult:
        try:
            self.check(call)
        except PolicyDenied as exc:
            return refuse("SecurityGuard", str(exc))
        return call

    def check(self, call: CallRecord) -> None:
        """Apply every policy to ``call``.

        Raises:
            PolicyDenied: At the first policy the call breaks.
        """
        name, arguments = call.name, call.arguments
        if self._max_bytes is not None:
            size = len(json.dumps(arguments, default=str).encode("utf-8"))
            if size > self._max_bytes:
                raise PolicyDenied(
                    "size",
                    f"the arguments are {size:,} bytes as JSON, over the limit of {self._max_bytes:,} bytes",
                    tool=name,
                )
        for patterns, argument, rule in self._rules:
            if argument in arguments and patterns.matches(name):
                rule.check(arguments[argument], argument=argument, tool=name)
        if self._commands is not None:
            for patterns, argument in self._command_arguments:
                # A missing argument is left to the schema check, whose message says so.
                if argument in arguments and patterns.matches(name):
                    self._commands.parse(arguments[argument], tool=name)
        if self._urls is not None:
            for url in urls_in(dict(arguments)):
                self._urls.check(url, tool=name)
