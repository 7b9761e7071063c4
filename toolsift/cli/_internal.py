"""What other toolsift modules use of the command line and users do not: ``python -m toolsift``'s entry.

Not public: a package imports from another either its public names or the names listed here, and
``tests/test_architecture.py`` checks both and pins this list.
"""

from ._app import main as main

__all__ = ["main"]
