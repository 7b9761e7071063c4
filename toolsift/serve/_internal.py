"""What other toolsift packages use of the server and users do not.

Not public: a package imports from another either its public names or the names listed here, and
``tests/test_architecture.py`` checks both and pins this list.
"""

from ._api import main as main

__all__ = [
    "main",
]
