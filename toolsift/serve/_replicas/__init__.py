"""Several gateway replicas serving one set of sessions, with their shared state in Redis."""

from ._manager import SharedSessionManager as SharedSessionManager
from ._state import SharedState as SharedState

__all__ = ["SharedSessionManager", "SharedState"]
