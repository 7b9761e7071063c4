"""The command policy: which programs ``exec_shell`` may run, for how long, with how much output.

There is no shell anywhere: a command line is split with :mod:`shlex` and the
first word must be a program on the allowlist. Characters that only a shell
gives meaning to (``;``, ``|``, ``&``, backticks, ``$(``, redirections) would be
passed along literally, which is never what the caller meant, so they are
refused with a message that says so. The arguments then pass the program's
argument policy (see :mod:`toolsift.builtins.arguments`), which refuses the
options that would make an allowed program run another one.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from pydantic import model_validator

from .._exceptions import ConfigError, PolicyDenied
from ..config import CommandSettings
from .arguments import argument_policy, rule_problems

__all__ = ["SHELL_METACHARACTERS", "CommandPolicy"]

#: What a shell would interpret; refused anywhere in a command line.
SHELL_METACHARACTERS = (";", "|", "&", "`", "$(", "${", ">", "<", "\n", "\r", "\0")


class CommandPolicy(CommandSettings):
    """:class:`~toolsift.config.CommandSettings` put to work: splits command lines and checks them.

    Built from the ``serve.commands`` section with :meth:`from_settings`, or
    directly with the same fields (``CommandPolicy(allowed_programs=("git",))``).
    """

    @model_validator(mode="after")
    def _known_builtins(self) -> CommandPolicy:
        problems = rule_problems(self.programs)
        if problems:
            raise ValueError("; ".join(f"programs.{program}.builtin: {message}" for program, message in problems))
        return self

    @classmethod
    def from_settings(cls, settings: CommandSettings) -> CommandPolicy:
        """The policy of a loaded ``serve.commands`` section.

        Raises:
            ConfigError: When a rule names a built-in policy that does not exist.
        """
        if isinstance(settings, CommandPolicy):
            return settings
        problems = rule_problems(settings.programs)
        if problems:
            raise ConfigError("; ".join(message for _, message in problems),
                              field=f"serve.commands.programs.{problems[0][0]}.builtin")
        return cls.model_validate(settings.model_dump())

    def parse(self, command: object, *, tool: str | None = None, workspace: Path | None = None) -> list[str]:
        """Split ``command`` into argv, refusing what the policy does not allow.

        Args:
            command: The command line the caller sent.
            tool: The tool asking, for the message.
            workspace: The real path of the folder the program will run in,
                against which path arguments are checked; None when unknown
                (then such paths must be relative and must not climb out).

        Raises:
            PolicyDenied: When ``command`` is not a non-empty string, holds a shell
                metacharacter, cannot be split, names a program that is not
                on the allowlist, or has an argument its program's policy refuses.
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
                "serve.commands.allowedPrograms (for example [\"git\", \"ls\"])",
                tool=tool,
            )
        if program not in self.allowed_programs:
            raise PolicyDenied(
                "command",
                f"the program {program!r} is not on the allowlist ({', '.join(self.allowed_programs)}); bare names "
                "are looked up on PATH and must be called by that bare name",
                tool=tool,
            )
        self._check_arguments(argv, tool=tool, workspace=workspace)
        return argv

    def _check_arguments(self, argv: list[str], *, tool: str | None, workspace: Path | None) -> None:
        refusal = argument_policy(argv[0], self.programs).check(argv[1:], workspace=workspace)
        if refusal is None:
            return
        name = os.path.basename(argv[0])
        if refusal.argument is None:
            reason = f"the program {name!r} is refused because {refusal.reason}"
        else:
            reason = f"{name}: the argument {refusal.argument!r} is refused because {refusal.reason}"
        raise PolicyDenied("command", f"{reason} (argument policies are set under serve.commands.programs.{name})",
                           tool=tool)
