"""The one estimate toolsift makes of what a text costs a model: its UTF-8 bytes, 4 to a token.

Unlock caps, the result size rule and the prompt-cache rules all count with it,
so that a limit given in tokens means the same thing in each of them.
"""

from __future__ import annotations

__all__ = ["BYTES_PER_TOKEN", "estimated_tokens"]

BYTES_PER_TOKEN = 4


def estimated_tokens(text: str) -> int:
    """About how many tokens ``text`` is (rounded down)."""
    return len(text.encode()) // BYTES_PER_TOKEN
