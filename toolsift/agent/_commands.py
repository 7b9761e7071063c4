"""Slash commands typed by the user: ``/use``, ``/unuse``, ``/skills``, ``/tools``, ``/instructions``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["Command", "parse_command"]

CommandName = Literal["use", "unuse", "skills", "tools", "instructions", "help"]
COMMANDS: tuple[CommandName, ...] = ("use", "unuse", "skills", "tools", "instructions", "help")


@dataclass(frozen=True)
class Command:
    """One parsed slash command.

    Attributes:
        name: Which command.
        skill: The skill named by ``/use``.
        arguments: The text after the skill name (``/use``) or after the command.
    """

    name: CommandName
    skill: str | None = None
    arguments: str = ""


def parse_command(text: str) -> Command | None:
    """Return the command in ``text``, or None when it is a message for the model.

    Only the known commands are commands; ``/etc/hosts is missing`` is a message.
    ``/use`` without a skill name becomes ``help``, whose answer says how to use it.
    """
    stripped = text.strip()
    if not stripped.startswith("/"):
        return None
    word, _, rest = stripped[1:].partition(" ")
    rest = rest.strip()
    if word not in COMMANDS:
        return None
    if word == "use":
        skill, _, arguments = rest.partition(" ")
        if not skill:
            return Command("help", arguments="use")
        return Command("use", skill=skill, arguments=arguments.strip())
    return Command(word, arguments=rest)
