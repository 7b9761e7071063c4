"""Command settings: the programs ``exec_shell`` may run and the argument rules they get.

This is the ``serve.commands`` section as data. Applying it (splitting command
lines, the built-in argument policies of git, find, tar...) is the job of
:mod:`toolsift.builtins`, which also checks that a rule's ``builtin`` names a
policy it has.
"""

from __future__ import annotations

import os
import re
from typing import Annotated

from pydantic import Field, field_validator

from ._model import ConfigModel

__all__ = ["CommandSettings", "ProgramRule"]

_OPTION = re.compile(r"-[^-\s=]|--[^-\s=][^\s=]*")
_Spellings = dict[str, str] | tuple[str, ...]


class ProgramRule(ConfigModel):
    """One program's argument policy.

    Attributes:
        builtin: Whose built-in policy applies: a program name with one
            (``sed`` for ``gsed``) or ``"none"``; default: the program's own name.
        denied_options: Options refused in any spelling (``--hook=x``,
            ``--hook x``, ``--ho``, ``-xvf`` for ``-x``), with why, as a phrase
            completing "it ..." (``{"--hook": "runs a hook script"}``; a list gives
            a generic reason). A spelling ending in ``=`` is refused only with a value.
        value_options: Options taking a value, so that a value is not read as an option.
        denied_words: Arguments refused wherever they appear (``find``'s ``-exec``), with why.
    """

    builtin: str | None = None
    denied_options: dict[str, str] = Field(default_factory=dict)
    value_options: tuple[str, ...] = ()
    denied_words: dict[str, str] = Field(default_factory=dict)

    @field_validator("denied_options", "denied_words", mode="before")
    @classmethod
    def _list_means_no_reason(cls, value: object) -> object:
        return dict.fromkeys(value, "") if isinstance(value, list | tuple) else value

    @field_validator("denied_options", "value_options")
    @classmethod
    def _option_spellings(cls, value: _Spellings) -> _Spellings:
        for spelling in value:
            if not _OPTION.fullmatch(spelling.removesuffix("=")):
                raise ValueError(f"{spelling!r} is not an option spelling: expected -x or --long (--long= to refuse "
                                 "it only with a value)")
        return value


class CommandSettings(ConfigModel):
    """Which programs ``exec_shell`` may run, within which limits (``serve.commands``).

    :class:`toolsift.builtins.CommandPolicy` applies it.

    Attributes:
        allowed_programs: Programs that may run. A bare name (``git``) is
            looked up on ``PATH`` and must be called by that bare name; an
            absolute path must be called by exactly that path. Empty (the
            default) refuses every command.
        timeout: Seconds a program may run before its process group is killed.
        max_output_bytes: Bytes of stdout, and of stderr, kept; the rest is counted and dropped.
        programs: Argument policies by program base name, added to (or, with
            ``"builtin": "none"``, replacing) the built-in ones.
    """

    allowed_programs: tuple[str, ...] = ()
    timeout: Annotated[float, Field(gt=0, allow_inf_nan=False)] = 30.0
    max_output_bytes: Annotated[int, Field(gt=0)] = 64 * 1024
    programs: dict[str, ProgramRule] = Field(default_factory=dict)

    @field_validator("allowed_programs")
    @classmethod
    def _bare_or_absolute(cls, programs: tuple[str, ...]) -> tuple[str, ...]:
        for program in programs:
            # A relative path would run whatever sits at that path in the workspace.
            if not program or program != program.strip() or ("/" in program and not os.path.isabs(program)):
                raise ValueError(f"allowed program {program!r} must be a bare name (git) or an absolute path")
        return programs

    @field_validator("programs")
    @classmethod
    def _base_names(cls, programs: dict[str, ProgramRule]) -> dict[str, ProgramRule]:
        for name in programs:
            if not name or "/" in name or name != name.strip():
                raise ValueError(f"argument policies are keyed by a program's base name (git), not {name!r}")
        return programs
