"""The command policy: which programs ``exec_shell`` may run, for how long, with how much output.

There is no shell anywhere: a command line is split with :mod:`shlex` and the
first word must be a program on the allowlist. Characters that only a shell
gives meaning to (``;``, ``|``, ``&``, backticks, ``$(``, redirections) would be
passed along literally, which is never what the caller meant, so they are
refused with a message that says so.
"""

from __future__ import annotations

import os
import shlex
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic.alias_generators import to_camel

from .._exceptions import PolicyDenied

__all__ = ["SHELL_METACHARACTERS", "CommandPolicy"]

#: What a shell would interpret; refused anywhere in a command line.
SHELL_METACHARACTERS = (";", "|", "&", "`", "$(", "${", ">", "<", "\n", "\r", "\0")


class CommandPolicy(BaseModel):
    """Which programs may run and within which limits.

    Keys accept camelCase and snake_case, like the rest of the config.

    Attributes:
        allowed_programs: Programs that may run. A bare name (``git``) is
            looked up on ``PATH`` and must be called by that bare name; an
            absolute path must be called by exactly that path. Empty (the
            default) refuses every command.
        timeout: Seconds a program may run before its process group is killed.
        max_output_bytes: Bytes of stdout, and of stderr, kept; the rest is counted and dropped.
    """

    model_config = ConfigDict(alias_generator=to_camel, validate_by_name=True, validate_by_alias=True, frozen=True,
                              extra="forbid")

    allowed_programs: tuple[str, ...] = ()
    timeout: Annotated[float, Field(gt=0, allow_inf_nan=False)] = 30.0
    max_output_bytes: Annotated[int, Field(gt=0)] = 64 * 1024

    @field_validator("allowed_programs")
    @classmethod
    def _bare_or_absolute(cls, programs: tuple[str, ...]) -> tuple[str, ...]:
        for program in programs:
            # A relative path would run whatever sits at that path in the workspace.
            if not program or program != program.strip() or ("/" in program and not os.path.isabs(program)):
                raise ValueError(f"allowed program {program!r} must be a bare name (git) or an absolute path")
        return programs

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
        return argv
