"""Warnings about valid but doubtful server settings.

None of these stops a load: the transport conflicts follow a fixed rule
(command wins), and a plaintext credential works, it just should not sit in a
file that gets copied, committed and shared. Messages name the field, never
its value.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from urllib.parse import parse_qsl, urlsplit

from ._json_lines import Loc
from ._server import ServerConfig
from .secrets import has_references, is_secret_reference

__all__ = ["looks_like_credential", "server_warnings"]

# Key names that usually hold credentials (env vars, header names, query keys, CLI flags).
_CREDENTIAL = re.compile(
    r"pass(word|wd|phrase)|pwd|secret|token|api[-_]?key|apikey|access[-_]?key|private[-_]?key"
    r"|credential|auth|cookie|(^|[-_])key$",
    re.IGNORECASE,
)
# Values under such keys that are clearly switches, not credentials (USE_TOKEN_CACHE=true).
_HARMLESS = re.compile(r"true|false|yes|no|on|off|none|\d+", re.IGNORECASE)
_ADVICE = "move it to an environment variable (${NAME}) or a secret (secret://env/NAME, secret://file/PATH)"


def looks_like_credential(key: str) -> bool:
    """Return True when a key name suggests its value is a credential."""
    return _CREDENTIAL.search(key) is not None


def _is_credential_flag(arg: str) -> bool:
    """``--token`` or ``--api-key``: a flag whose value is the next argument."""
    return arg.startswith("-") and "=" not in arg and looks_like_credential(arg)


def _plaintext(value: str) -> bool:
    return bool(value) and not has_references(value) and not is_secret_reference(value) and not (
        _HARMLESS.fullmatch(value)
    )


def _credential_warnings(config: ServerConfig, spell: Callable[[str], str]) -> list[tuple[Loc, str]]:
    found: list[tuple[Loc, str]] = []
    for field in ("env", "headers"):
        for key, value in getattr(config, field).items():
            if looks_like_credential(key) and _plaintext(value):
                found.append(((spell(field), key), f"{key!r} looks like a credential written in plaintext; {_ADVICE}"))
    for index, arg in enumerate(config.args):
        flag, sep, value = arg.partition("=")
        previous = config.args[index - 1] if index else ""
        if sep and flag.startswith("-") and looks_like_credential(flag) and _plaintext(value):
            found.append(((spell("args"), index), f"argument {flag!r} carries a plaintext credential; {_ADVICE}"))
        elif _is_credential_flag(previous) and not arg.startswith("-") and _plaintext(arg):
            found.append(((spell("args"), index), f"the value of {previous!r} is a plaintext credential; {_ADVICE}"))
    if config.url and _plaintext(config.url):
        parts = urlsplit(config.url)
        keys = [key for key, _ in parse_qsl(parts.query) if looks_like_credential(key)]
        if parts.password or keys:
            what = "a password" if parts.password else f"query parameter {keys[0]!r}"
            found.append(((spell("url"),), f"the URL holds {what} in plaintext; {_ADVICE}"))
    return found


def _transport_warnings(config: ServerConfig, spell: Callable[[str], str]) -> list[tuple[Loc, str]]:
    kind = config.transport_kind
    declared = config.transport
    if kind == "stdio" and config.url:
        return [((spell("url"),), "both 'command' and 'url' are set; the server runs over stdio and 'url' is ignored")]
    if kind == "stdio" and declared in ("http", "sse"):
        message = f"type {declared!r} is ignored: 'command' is set, so the server runs over stdio"
        return [((spell("transport"),), message)]
    if kind in ("http", "sse") and declared == "stdio":
        return [((spell("transport"),), "type 'stdio' needs a 'command'; connecting to 'url' over Streamable HTTP")]
    return []


def server_warnings(config: ServerConfig, spell: Callable[[str], str]) -> list[tuple[Loc, str]]:
    """Warnings for one valid server, as (location inside its entry, message).

    Args:
        config: The server.
        spell: Maps a field name to the key the user wrote for it (``toolPrefix``
            or ``tool_prefix``), so locations match the file.
    """
    return _transport_warnings(config, spell) + _credential_warnings(config, spell)
