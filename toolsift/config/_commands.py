"""Command settings: the programs ``exec_shell`` may run, and the sandbox's budgets.

This is the ``serve.commands`` section as data. Applying it (splitting command
lines, running programs inside a bubblewrap sandbox) is the job of
:mod:`toolsift.builtins`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import Field, field_validator, model_validator

from ._model import ConfigModel

__all__ = ["CommandSettings"]

# Keys older versions accepted here, and why they no longer mean anything.
_OBSOLETE = {
    "programs": "per-program argument policies are no longer used: exec_shell now runs every program inside a "
    "bubblewrap sandbox, which confines what any program (and whatever it starts) can reach. Remove "
    "'programs'; to keep a program from running, leave it off allowedPrograms",
}


class CommandSettings(ConfigModel):
    """Which programs ``exec_shell`` may run, within which budgets (``serve.commands``).

    :class:`toolsift.builtins.CommandPolicy` applies it.

    Attributes:
        allowed_programs: Programs that may run. A bare name (``git``) is
            looked up on the sandbox's ``PATH`` and must be called by that bare
            name; an absolute path must be called by exactly that path. Empty
            (the default) refuses every command.
        timeout: Seconds a program may run before the whole sandbox is killed.
        max_output_bytes: Bytes of stdout, and of stderr, kept; the rest is counted and dropped.
        network: Let programs reach the network; by default the sandbox has
            its own network namespace with nothing but an empty loopback.
    """

    allowed_programs: tuple[str, ...] = ()
    timeout: Annotated[float, Field(gt=0, allow_inf_nan=False)] = 30.0
    max_output_bytes: Annotated[int, Field(gt=0)] = 64 * 1024
    network: bool = False

    @model_validator(mode="before")
    @classmethod
    def _no_obsolete_keys(cls, data: Any) -> Any:
        # An old restriction silently dropped would look as if it still held: say so instead.
        if isinstance(data, Mapping):
            for key, why in _OBSOLETE.items():
                if key in data:
                    raise ValueError(f"{key!r}: {why}")
        return data

    @field_validator("allowed_programs")
    @classmethod
    def _bare_or_absolute(cls, programs: tuple[str, ...]) -> tuple[str, ...]:
        for program in programs:
            # A relative path would run whatever sits at that path in the workspace.
            if not program or program != program.strip() or ("/" in program and not os.path.isabs(program)):
                raise ValueError(f"allowed program {program!r} must be a bare name (git) or an absolute path")
        return programs
