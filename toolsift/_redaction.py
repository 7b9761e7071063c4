"""Secrets kept out of what toolsift shows: the two markers, and the helpers that put them in.

Two markers, because they stand in for two different things:

- :data:`MASK` (``***``) replaces a secret inside a *setting shown to its
  owner* (``toolsift mcp get``, a repr, a log line naming a URL). The reader
  knows which field it is; the mask keeps the value's shape, so a masked URL
  still parses (``https://user:***@host``: ``[redacted]`` there reads as an
  IPv6 literal and ``urlsplit`` refuses it). The settings helpers that use it
  (``mask_url``, ``mask_settings``) live in ``toolsift/_secrets``,
  which knows what a reference looks like and so what to leave as written.
- :data:`REDACTED` (``[redacted]``) replaces a secret found *in text or data
  handed on*: a server's answer or stderr before a model or a log reads it
  (:class:`Redactor`), a call's arguments in an audit record (:func:`redact`).
  Nothing around it says a value was removed, so the marker has to say it
  (``***`` in a tool result reads as emphasis or as the tool's own output).

This module imports nothing of toolsift, so that every package, the registry
included, can use it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["MASK", "REDACTED", "Redactor", "looks_like_secret", "redact"]

MASK = "***"
REDACTED = "[redacted]"

_SECRET_KEY = re.compile(
    r"pass(word|wd)?|secret|token|api[_-]?key|auth|credential|private[_-]?key|cookie|session", re.IGNORECASE
)
# Shapes of credentials seen in the wild: bearer headers, provider key prefixes, JWTs, long hex/base64 blobs.
_SECRET_VALUE = re.compile(
    r"^(bearer\s+\S+|sk-[A-Za-z0-9_-]{8,}|gh[pousr]_[A-Za-z0-9]{20,}|xox[abpr]-\S+|AKIA[0-9A-Z]{16}"
    r"|eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+|[A-Fa-f0-9]{32,}|[A-Za-z0-9+/_-]{40,}={0,2})$",
    re.IGNORECASE,
)
_MAX_VALUE_CHARS = 200
# Deeper than any argument a call may carry (MAX_ARGUMENT_DEPTH), shallow enough never to overflow the stack.
_MAX_DEPTH = 100
# Shorter values ("1", "true", "info") are configuration, not credentials, and
# masking them would garble every log line that happens to contain them.
_MIN_SECRET_CHARS = 6


def looks_like_secret(text: str) -> bool:
    """True when ``text`` has the shape of a credential: a bearer value, a provider key, a JWT, a long blob."""
    return _SECRET_VALUE.match(text.strip()) is not None


def redact(value: Any, key: str | None = None, *, _depth: int = 0) -> Any:
    """Return ``value`` with secret-looking entries replaced by :data:`REDACTED` and long strings cut.

    A value is secret when its key looks like a credential name or the string
    itself looks like a credential. Nesting past a fixed depth is cut, so a
    record of a refused, absurdly deep call cannot overflow the stack.
    """
    if key is not None and _SECRET_KEY.search(key):
        return REDACTED
    if isinstance(value, Mapping | list | tuple) and _depth >= _MAX_DEPTH:
        return f"[nested deeper than {_MAX_DEPTH}]"
    if isinstance(value, Mapping):
        return {str(k): redact(v, str(k), _depth=_depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact(v, _depth=_depth + 1) for v in value]
    if isinstance(value, str):
        if looks_like_secret(value):
            return REDACTED
        if len(value) > _MAX_VALUE_CHARS:
            return value[:_MAX_VALUE_CHARS] + f"...[{len(value)} chars]"
    return value


class Redactor:
    """Replaces known secret values in text by :data:`REDACTED`, longest first.

    Args:
        secrets: Values that must never be shown.
    """

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self._pattern: re.Pattern[str] | None = None
        self._parts: tuple[str, ...] = ()
        self.update(secrets)

    def update(self, secrets: Iterable[str]) -> None:
        """Replace the set of masked values."""
        parts: set[str] = set()
        for value in secrets:
            # A header such as "Bearer abc..." leaks through its token alone too.
            parts.update(p for p in (value, *value.split()) if len(p) >= _MIN_SECRET_CHARS)
        self._parts = tuple(sorted(parts, key=len, reverse=True))
        self._pattern = re.compile("|".join(map(re.escape, self._parts))) if self._parts else None

    def __bool__(self) -> bool:
        """Whether there is anything to mask."""
        return self._pattern is not None

    def __call__(self, text: str) -> str:
        # A substring search per secret is far faster than the alternation on text that holds none,
        # which is nearly all text (tool results run to megabytes).
        if self._pattern is None or not any(part in text for part in self._parts):
            return text
        return self._pattern.sub(REDACTED, text)
