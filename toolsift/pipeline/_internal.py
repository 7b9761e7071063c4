"""What other toolsift packages use of the pipeline and users do not.

Not public: a package imports from another either its public names or the names listed here, and
``tests/test_architecture.py`` checks both and pins this list.
"""

from ._call import refuse as refuse
from ._permission import profile_scope as profile_scope
from ._telemetry import trace_configured_calls as trace_configured_calls

__all__ = [
    "profile_scope",
    "refuse",
    "trace_configured_calls",
]
