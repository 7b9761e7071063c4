"""Hosts and URLs: whether a host is this machine, and the URLs inside a tool call's arguments.

Shared by the pipeline (URL policies) and serving (loopback binds); a root module: every
package may import it, none of it is public.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterator
from typing import Any

__all__ = ["is_loopback", "strings_in", "urls_in"]

_LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})
# scheme://authority..., wherever it appears in a string (a URL inside a command line counts too).
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>`]+")


def is_loopback(host: str) -> bool:
    """True when ``host`` names this machine only (``127.0.0.1``, ``::1``, ``localhost``)."""
    if host.lower() in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def strings_in(value: Any) -> Iterator[str]:
    """Every string in ``value``, nested lists and objects included (a call's arguments, a server's settings)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings_in(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from strings_in(item)


def urls_in(value: Any) -> Iterator[str]:
    """Every URL found in the strings of ``value``, nested lists and objects included."""
    for text in strings_in(value):
        yield from _URL.findall(text)
