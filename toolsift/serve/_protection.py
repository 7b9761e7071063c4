"""The protected paths of a served workspace, following the config in force while serving."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import final

from ..builtins import ProtectedPath, protected_paths
from ..config import ToolsiftConfig

__all__ = ["FollowedProtection"]


@final
class FollowedProtection:
    """What builtin tools never touch, for the config in force now.

    A hot reload applies new servers, whose env and secret files must be out
    of reach from then on: the set is derived again whenever the config in
    force is another object, and kept otherwise (checks happen on every call).

    Args:
        config_in_force: The config now in force (the loaded one, or the one a reload applied).
        user_skill_folders: The user's skill folders the server reads.
    """

    def __init__(
        self, config_in_force: Callable[[], ToolsiftConfig], *, user_skill_folders: Iterable[Path] = ()
    ) -> None:
        self._config_in_force = config_in_force
        self._user_skill_folders = tuple(user_skill_folders)
        self._derived: tuple[ToolsiftConfig, tuple[ProtectedPath, ...]] | None = None

    def __call__(self) -> tuple[ProtectedPath, ...]:
        config = self._config_in_force()
        derived = self._derived
        if derived is None or derived[0] is not config:
            derived = self._derived = (config, protected_paths(config, user_skill_folders=self._user_skill_folders))
        return derived[1]
