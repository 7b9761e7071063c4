"""The command policy: which programs ``exec_shell`` may run, for how long, with how much output.

There is no shell anywhere: a command line is split with :mod:`shlex` and the
first word must be a program on the allowlist. Characters that only a shell
gives meaning to (``;``, ``|``, ``&``, backticks, ``$(``, redirections) would be
passed along literally, which is never what the caller meant, so they are
refused with a message that says so. The allowlist says what a caller may
start; what a program (and whatever it starts in turn) can reach is decided
by the sandbox it runs in (see :class:`~toolsift.builtins.ShellTool`).
"""

from __future__ import annotations

import shlex

from .._exceptions import PolicyDenied
from ..config._internal import CommandSettings

__all__ = ["SHELL_METACHARACTERS", "CommandPolicy"]

#: What a shell would interpret; refused anywhere in a command line.
SHELL_METACHARACTERS = (";", "|", "&", "`", "$(", "${", ">", "<", "\n", "\r", "\0")


class CommandPolicy(CommandSettings):
    """:class:`~toolsift.config._internal.CommandSettings` put to work: splits command lines and checks them.

    Built from the ``serve.commands`` section with :meth:`from_settings`, or
    directly with the same fields (``CommandPolicy(allowed_programs=("git",))``).
    """

    @classmethod
    def from_settings(cls, settings: CommandSettings) -> CommandPolicy:
        """The policy of a loaded ``serve.commands`` section."""
        if isinstance(settings, CommandPolicy):
            return settings
        return cls.model_validate(settings.model_dump())

    def parse(self, command: object, *, tool: str | None = None) -> list[str]:
        """Split ``command`` into argv, refusing what the policy does not allow.

        Args:
            command: The command line the caller sent.
            tool: The tool asking, for the message.

        Raises:
            PolicyDenied: When ``command`` is not a non-empty string, holds a shell
                metacharacter, cannot be split, or names a program that is not
                on the allowlist.
        """
        if not isinstance(command, str) or not command.strip():
            raise PolicyDenied("command", f"expected a non-empty command line string, got {command!r}", tool=tool)
        found = [meta for meta in SHELL_METACHARACTERS if meta in command]
        if found:
            raise PolicyDenied(
                "command",
                f"the command {command!r} contains {', '.join(map(repr, found))}, which only a shell understands; "
                "programs run without a shell, so pipes, command lists, substitutions and redirections are "
                "refused: run one program with its arguments",
                tool=tool,
            )
        try:
            argv = shlex.split(command)
        except ValueError as exc:
            raise PolicyDenied("command", f"cannot split {command!r} into words: {exc}", tool=tool) from None
        program = argv[0]
        if not self.allowed_programs:
            raise PolicyDenied(
                "command",
                f"no program may run, so {program!r} is refused; list the programs to allow under "
                'serve.commands.allowedPrograms (for example ["git", "ls"])',
                tool=tool,
            )
        if program not in self.allowed_programs:
            raise PolicyDenied(
                "command",
                f"the program {program!r} is not on the allowlist ({', '.join(self.allowed_programs)}); bare names "
                "are looked up on PATH and must be called by that bare name",
                tool=tool,
            )
        return argv
