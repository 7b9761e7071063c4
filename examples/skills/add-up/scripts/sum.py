"""Add every number given on the command line (or, without any, one per line on stdin) and print the total.

A long column of numbers is quicker to add here than two at a time with ``calc__add``::

    python3 scripts/sum.py 2 3 4.5
    printf '1\n2\n' | python3 scripts/sum.py

Whole numbers stay whole; a word that is not a number stops the script with its position.
"""

from __future__ import annotations

import sys
from decimal import Decimal, InvalidOperation


def total(words: list[str]) -> Decimal:
    result = Decimal(0)
    for position, word in enumerate(words, start=1):
        try:
            result += Decimal(word)
        except InvalidOperation:
            sys.exit(f"item {position} is not a number: {word!r}")
    return result


if __name__ == "__main__":
    given = sys.argv[1:] or sys.stdin.read().split()
    print(total(given))
