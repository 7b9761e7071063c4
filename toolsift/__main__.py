"""``python -m toolsift``: the same as the ``toolsift`` command."""

from .cli import main

main()
