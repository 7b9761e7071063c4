"""``HOST:PATH`` words: the arguments that make a program start a remote shell."""

from __future__ import annotations

__all__ = ["remote_host"]


def remote_host(word: str) -> str | None:
    """The host of ``[USER@]HOST:PATH`` (a colon before any slash, as rsync and tar read it), or None."""
    head, colon, _ = word.partition(":")
    if not colon or "/" in head:
        return None
    return head.rpartition("@")[2]
