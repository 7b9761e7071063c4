"""``python -m toolsift.serve``: the same as ``toolsift serve``, without the CLI's extras."""

import sys

from ._api import main

sys.exit(main())
