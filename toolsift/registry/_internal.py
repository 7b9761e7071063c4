"""What other toolsift packages use of the registry and users do not.

Not public: a package imports from another either its public names or the names listed here, and
``tests/test_architecture.py`` checks both and pins this list.
"""

from ._audit import AuditEvent as AuditEvent
from ._function import FunctionTool as FunctionTool
from ._permissions import check_permissions as check_permissions
from ._registration import RegistryChange as RegistryChange
from ._spec import repeatable_by as repeatable_by
from ._tools import Forward as Forward
from ._tools import ProgressCallback as ProgressCallback
from ._tools import Unlocks as Unlocks

__all__ = [
    "AuditEvent",
    "Forward",
    "FunctionTool",
    "ProgressCallback",
    "RegistryChange",
    "Unlocks",
    "check_permissions",
    "repeatable_by",
]
