"""Permission levels: the ordered scale that layer 5 compares."""

from __future__ import annotations

from enum import IntEnum

__all__ = ["Level"]


class Level(IntEnum):
    """How much a caller may do; a tool requires a level and callers hold one.

    The order is what matters: a caller at ``WRITE`` may call tools that require
    ``READ`` or ``WRITE`` but not ``EXECUTE``.
    """

    READ = 10  # observe only: read files, list, search
    WRITE = 20  # change state the agent owns: write files, store memory
    EXECUTE = 30  # run programs or act on the outside world
    ADMIN = 40  # everything, including destructive operations

    @classmethod
    def parse(cls, value: object) -> Level:
        """Accept a Level, its name in any case (``"write"``), or its number.

        Raises:
            ValueError: Naming the value and the accepted names.
        """
        if isinstance(value, Level):
            return value
        if isinstance(value, str) and value.upper() in cls.__members__:
            return cls[value.upper()]
        if isinstance(value, int) and not isinstance(value, bool) and value in cls._value2member_map_:
            return cls(value)
        names = ", ".join(m.name.lower() for m in cls)
        raise ValueError(f"Unknown permission level {value!r}; expected one of {names}")

    def __str__(self) -> str:
        return self.name.lower()
