"""The argument policy protocol: what one program may be told to do.

An allowlisted program is not a safe program: ``git -c alias.x=!cmd x``,
``find . -exec cmd ;`` and ``tar --to-command=cmd`` run whatever they are
given. Each program therefore gets a policy that reads its arguments the way
the program will and refuses the ones that run other programs (or write
where the policy cannot follow).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, final

__all__ = ["NO_CHECKS", "AllOf", "ArgumentPolicy", "ProgramRefused", "Refusal"]


@final
@dataclass(frozen=True)
class Refusal:
    """Why a policy refuses an argument list.

    Attributes:
        argument: The argument refused, as written; None when the program itself is refused.
        reason: Why, in words a caller can act on.
    """

    argument: str | None
    reason: str


class ArgumentPolicy(Protocol):
    """Decides whether a program may run with some arguments."""

    def check(self, args: Sequence[str], *, workspace: Path | None) -> Refusal | None:
        """The first refused argument of ``args`` (the program's name excluded), or None.

        Args:
            args: The arguments after the program's name.
            workspace: The real path of the folder the program runs in; None
                when unknown, and then paths are judged by their spelling alone.
        """
        ...


@final
@dataclass(frozen=True)
class AllOf:
    """Every policy must accept; the first refusal wins."""

    policies: tuple[ArgumentPolicy, ...]

    def check(self, args: Sequence[str], *, workspace: Path | None) -> Refusal | None:
        """The first refusal of any policy, in order."""
        for policy in self.policies:
            refusal = policy.check(args, workspace=workspace)
            if refusal is not None:
                return refusal
        return None


@final
@dataclass(frozen=True)
class ProgramRefused:
    """Refuses the program whatever its arguments (wrappers that run another program)."""

    reason: str

    def check(self, args: Sequence[str], *, workspace: Path | None) -> Refusal | None:
        """Always a refusal of the program itself."""
        return Refusal(None, self.reason)


#: Accepts every argument list: programs without a policy, and ``"builtin": "none"``.
NO_CHECKS: ArgumentPolicy = AllOf(())
