"""Policies on argument values: per-argument allow/deny patterns, and which hosts URLs may name.

They are written in the ``serve`` section of ``toolsift.json`` and applied by the
serving pipeline; a policy and its check are one small value object, kept here
so that the config model depends on nothing above it.

Value and host patterns are shell-style globs matched with :mod:`fnmatch`
(``*``, ``?``, ``[abc]``); unlike tool-name globs they may hold spaces, since
argument values do. Argument patterns are case-sensitive; host names are
compared in lower case, as DNS does.
"""

from __future__ import annotations

import fnmatch
import json
import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, field_validator
from pydantic.alias_generators import to_camel

from .._exceptions import PolicyDenied
from .._redaction import redact

__all__ = ["ArgumentRule", "UrlPolicy", "argument_values"]

_MODEL_CONFIG = ConfigDict(
    alias_generator=to_camel, validate_by_name=True, validate_by_alias=True, frozen=True, extra="forbid"
)
_SHOWN_CHARS = 80


@lru_cache(maxsize=1024)
def _matcher(patterns: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{fnmatch.translate(pattern)})" for pattern in patterns))


def _first_match(patterns: tuple[str, ...], value: str) -> str | None:
    if not patterns or _matcher(patterns).match(value) is None:
        return None
    return next(p for p in patterns if fnmatch.fnmatchcase(value, p))


def _shown(value: str, argument: str | None = None) -> str:
    # Messages reach the caller and the audit log: a credential-looking value is never echoed.
    value = redact(value, argument)
    return repr(value if len(value) <= _SHOWN_CHARS else value[:_SHOWN_CHARS] + "...")


def argument_values(value: Any) -> list[str]:
    """The strings a rule checks for one argument: a string, each item of a list, or the JSON of anything else."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list | tuple):
        return [item if isinstance(item, str) else json.dumps(item, default=str) for item in value]
    return [json.dumps(value, default=str)]


def _non_empty(patterns: Iterable[str], what: str) -> None:
    for pattern in patterns:
        if not isinstance(pattern, str) or not pattern:
            raise ValueError(f"{what} patterns must be non-empty strings, got {pattern!r}")


class ArgumentRule(BaseModel):
    """Which values one argument of matching tools may take.

    Attributes:
        allowed: When set, every value must match one of these globs.
        denied: No value may match any of these globs (checked first).
    """

    model_config = _MODEL_CONFIG

    allowed: tuple[str, ...] = ()
    denied: tuple[str, ...] = ()

    @field_validator("allowed", "denied")
    @classmethod
    def _check(cls, patterns: tuple[str, ...]) -> tuple[str, ...]:
        _non_empty(patterns, "argument")
        return patterns

    def check(self, value: Any, *, argument: str, tool: str) -> None:
        """Refuse ``value`` unless the rule allows it.

        Raises:
            PolicyDenied: Naming the argument, the value and the pattern.
        """
        for text in argument_values(value):
            shown = f"argument {argument!r} = {_shown(text, argument)}"
            denied = _first_match(self.denied, text)
            if denied is not None:
                raise PolicyDenied("argument", f"{shown} matches the denied pattern {denied!r}", tool=tool)
            if self.allowed and _first_match(self.allowed, text) is None:
                raise PolicyDenied(
                    "argument", f"{shown} matches none of the allowed patterns {list(self.allowed)!r}", tool=tool
                )


class UrlPolicy(BaseModel):
    """Which hosts the URLs in a call's arguments may name.

    Attributes:
        allowed_hosts: When set, every URL's host must match one of these globs
            (``github.com``, ``*.example.org``).
        denied_hosts: No URL's host may match any of these (checked first).
    """

    model_config = _MODEL_CONFIG

    allowed_hosts: tuple[str, ...] = ()
    denied_hosts: tuple[str, ...] = ()

    @field_validator("allowed_hosts", "denied_hosts")
    @classmethod
    def _lower(cls, patterns: tuple[str, ...]) -> tuple[str, ...]:
        _non_empty(patterns, "host")
        return tuple(pattern.lower() for pattern in patterns)

    @property
    def active(self) -> bool:
        """True when the policy can refuse anything."""
        return bool(self.allowed_hosts or self.denied_hosts)

    def check(self, url: str, *, tool: str | None = None) -> None:
        """Refuse ``url`` unless its host is allowed; URLs without a host (``file:///x``) pass.

        Raises:
            PolicyDenied: Naming the URL's host and the pattern or allowlist.
        """
        try:
            host = urlsplit(url).hostname
        except ValueError:
            raise PolicyDenied("url", f"the URL {_shown(url)} cannot be parsed", tool=tool) from None
        if not host:
            return
        denied = _first_match(self.denied_hosts, host)
        if denied is not None:
            raise PolicyDenied(
                "url",
                f"the URL {_shown(url)} names host {host!r}, which matches the denied pattern {denied!r}",
                tool=tool,
            )
        if self.allowed_hosts and _first_match(self.allowed_hosts, host) is None:
            raise PolicyDenied(
                "url",
                f"the URL {_shown(url)} names host {host!r}, which is not among the allowed "
                f"hosts {list(self.allowed_hosts)!r}",
                tool=tool,
            )
