"""Settings as written in a config file, with their secrets masked, for showing to a person.

A config file may hold a literal secret anywhere a server takes text: an
``env`` or ``headers`` value, an argument (``--api-key sk-...``,
``--token=...``, ``API_KEY=...``), a URL's password or query. What a command
prints (``toolsift mcp get``), a repr or a log line shows ``***`` in its
place (``toolsift._redaction.MASK``, which says why settings have a marker of
their own). A ``${VAR}`` or ``secret://`` reference stays as written where it
is the whole value: it names where the secret lives, not the secret.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from .._redaction import MASK, looks_like_secret
from ._expand import has_references
from ._resolvers import is_secret_reference

__all__ = ["mask_arguments", "mask_settings", "mask_url", "secret_name"]

# The last word of a name that holds a secret: --api-key, GITHUB_TOKEN, clientSecret, --password.
_SECRET_WORDS = frozenset(
    {
        "apikey",
        "auth",
        "authorization",
        "cookie",
        "credential",
        "credentials",
        "key",
        "pass",
        "passphrase",
        "passwd",
        "password",
        "pat",
        "pwd",
        "secret",
        "token",
    }
)
_WORD_BREAK = re.compile(r"[^A-Za-z0-9]+|(?<=[a-z0-9])(?=[A-Z])")
# NAME=value (a variable handed on) or Name: value (a header handed on), as one argument.
_ASSIGNMENT = re.compile(r"(?P<name>[A-Za-z_][A-Za-z0-9_.-]*)(?P<sep>=|:\s*)(?P<value>.*)", re.DOTALL)
# A path is shown even when long enough to look like a key: a server's folder is no secret.
_PATH_START = ("/", "./", "../", "~")


def secret_name(name: str) -> bool:
    """True when a key, variable or flag name says it holds a secret (``--api-key``, ``clientSecret``)."""
    words = [word for word in _WORD_BREAK.split(name) if word]
    return bool(words) and words[-1].lower() in _SECRET_WORDS


def _reference(value: str) -> bool:
    return has_references(value) or is_secret_reference(value)


def _hidden(value: str) -> str:
    """A value known to be secret: the mask, unless it only refers to where the secret lives."""
    return value if _reference(value) else MASK


def mask_url(url: str) -> str:
    """``url`` with its password and every query value masked, and its fragment dropped."""
    try:
        parts = urlsplit(url)
        netloc = parts.netloc
        if parts.password is not None:
            netloc = netloc.replace(f":{parts.password}@", f":{MASK}@", 1)
        query = "&".join(f"{pair.partition('=')[0]}={MASK}" for pair in parts.query.split("&")) if parts.query else ""
        return parts._replace(netloc=netloc, query=query, fragment="").geturl()
    except ValueError:
        return MASK


def _text(value: str) -> str:
    """One piece of text that no name marks as secret: masked when it is a URL or looks like a credential."""
    if _reference(value):
        return value
    assignment = _ASSIGNMENT.fullmatch(value)
    if assignment is not None:
        name, sep, rest = assignment["name"], assignment["sep"], assignment["value"]
        if secret_name(name):
            return f"{name}{sep}{_hidden(rest)}"
        if sep == "=":  # API_URL=https://user:password@host
            return f"{name}={_text(rest)}"
    if "://" in value:
        return mask_url(value)
    if looks_like_secret(value) and not value.startswith(_PATH_START):
        return MASK
    return value


def mask_arguments(args: Sequence[str]) -> list[str]:
    """A command's arguments with the secrets in them masked.

    The value of a flag named like a secret is masked, given as
    ``--token=VALUE`` or as the next argument (``--api-key VALUE``); so is
    ``NAME=VALUE`` or ``Name: VALUE`` with such a name, a URL's password and
    query, and any argument shaped like a credential (``sk-...``, a JWT).
    """
    masked: list[str] = []
    value_is_secret = False
    for arg in args:
        if value_is_secret:
            masked.append(_hidden(arg))
            value_is_secret = False
            continue
        if not arg.startswith("-"):
            masked.append(_text(arg))
            continue
        flag, equals, value = arg.partition("=")
        if not equals:
            masked.append(arg)
            value_is_secret = secret_name(flag)
        else:
            masked.append(f"{flag}={_hidden(value) if secret_name(flag) else _text(value)}")
    return masked


def _values(values: Mapping[str, Any]) -> dict[str, Any]:
    # Every literal env or header value is masked, whatever its name: it is there to be handed to the server.
    return {key: value if isinstance(value, str) and _reference(value) else MASK for key, value in values.items()}


def mask_settings(settings: Mapping[str, Any]) -> dict[str, Any]:
    """One server's entry, as a config file writes it, with every secret in it masked.

    ``env`` and ``headers`` values are masked unless they are references;
    ``args`` go through :func:`mask_arguments`; any other text is masked when
    its key names a secret (``clientSecret``, a bare ``auth`` token) and
    otherwise as one argument would be. Nested blocks (``auth``) are walked.
    """
    shown: dict[str, Any] = {}
    for key, value in settings.items():
        if key in ("env", "headers") and isinstance(value, Mapping):
            shown[key] = _values(value)
        elif key == "args" and isinstance(value, list) and all(isinstance(arg, str) for arg in value):
            shown[key] = mask_arguments(value)
        elif isinstance(value, str):
            shown[key] = _hidden(value) if secret_name(key) else _text(value)
        elif isinstance(value, Mapping):
            shown[key] = mask_settings(value)
        else:
            shown[key] = value
    return shown
