"""One server entry of another client's file, in toolsift's keys, with a warning for each key that means nothing here.

A key another client defines is either translated (``disabled`` ->
``enabled: false``, ``serverUrl``/``httpUrl`` -> ``url`` with its transport,
a token ``auth`` -> an ``Authorization`` header, an OAuth block (``auth`` or
``oauth`` object) -> toolsift's ``auth`` (``_oauth``), a timeout in the
client's unit -> ``toolTimeout``) or dropped with a warning that says why; it never costs the
server its place. Keys no client defines go to validation as written, so a
typo is still reported with its close matches. Each translated key remembers
the key it came from, so problems and warnings point at what the file says.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, final
from urllib.parse import urlsplit

from ..._secrets._resolvers import is_secret_reference
from .._json_lines import Loc
from .._server import SERVER_KEYS
from ._dialect import Dialect
from ._oauth import read_oauth_block
from ._variables import Places, rewrite_variables

__all__ = ["Translation", "translate_entry"]

_STREAMABLE = frozenset({"streamable-http", "streamableHttp", "streamable_http"})
_SSE_PATH = re.compile(r"/sse(/|$)")
# Fields whose strings may hold variables (the Expandable fields of StdioServer and HttpServer).
_EXPANDABLE = frozenset({"command", "args", "env", "cwd", "url", "headers", "env_file", "auth"})
_OAUTH = (
    "this client's OAuth settings are not read: the server is kept and connects without them. Write "
    'toolsift\'s "auth" block instead (clientId, clientSecret, scopes) and sign in once with '
    '\'toolsift auth login <server>\'; for a bearer token write "auth": "${TOKEN}" or a headers.Authorization '
    "value"
)
# Gemini CLI's authProviderType: only its discovery of the server's own OAuth has a toolsift equivalent.
_DISCOVERY = "dynamic_discovery"
_OAUTH_ON = (
    "signs in with OAuth (toolsift's \"auth\": {}): sign in once with 'toolsift auth login <server>'; "
    "the tokens are kept and refreshed"
)
_APPROVE = (
    "ignored: {key!r} lets {client} run these tools without asking. toolsift has no prompts to skip: it "
    "restricts instead; limit what an agent may call with agents.<name>.permissions (denylist, allowlist, "
    "level) and what a turn shows with skills' allowed-tools"
)
_TRUST = (
    "ignored: a true/false 'trust' is Gemini CLI's switch for skipping confirmation prompts, which toolsift does "
    "not have. toolsift's 'trust' is \"untrusted\" (the default: the server's result text is wrapped in "
    'boundary markers) or "trusted" (passed through as is)'
)


@final
@dataclass
class Translation:
    """An entry in toolsift's keys, the warnings about it, and where each translated key came from.

    Attributes:
        entry: The entry to validate as a ``StdioServer`` or an ``HttpServer``.
        notes: Warnings, as (location as written, message).
        origins: Location in ``entry`` -> location in the file, for translated keys.
    """

    entry: dict[str, Any]
    notes: list[tuple[Loc, str]] = field(default_factory=list)
    origins: dict[Loc, Loc] = field(default_factory=dict)

    def written(self, loc: Loc) -> Loc:
        """Where ``loc`` of :attr:`entry` is in the file (``('toolTimeout',)`` -> ``('timeout',)``)."""
        for size in range(len(loc), 0, -1):
            origin = self.origins.get(loc[:size])
            if origin is not None:
                return (*origin, *loc[size:])
        return loc


class _Translator:
    """Builds the :class:`Translation` of one entry."""

    def __init__(self, source: Mapping[str, Any], dialect: Dialect) -> None:
        self.dialect = dialect
        self.spellings = SERVER_KEYS
        self.out = Translation({})
        # Field -> the key that gives it: as written, or as derived from another key.
        self.holders = {self.spellings[key]: key for key in source if key in self.spellings}
        # The keys that say how to authenticate (auth, oauth, authProviderType), as written.
        self.auth: dict[str, object] = {}

    def note(self, key: str, message: str) -> None:
        self.out.notes.append(((key,), message))

    def keep(self, key: str, value: object) -> None:
        self.out.entry[key] = value

    def put(self, target: str, value: object, source: str) -> None:
        """Give toolsift's key ``target`` the value of the client's key ``source``, unless it is given already."""
        name = self.spellings[target]
        holder = self.holders.get(name)
        if holder is not None:
            self.note(source, f"ignored: {source!r} and {holder!r} are both set; {holder!r} is used")
            return
        self.holders[name] = source
        self.out.entry[target] = value
        self.out.origins[(target,)] = (source,)

    def derive(self, target: str, value: object, source: Loc) -> None:
        """Set ``target`` (absent from the entry) as a consequence of ``source``."""
        self.holders[self.spellings[target]] = target
        self.out.entry[target] = value
        self.out.origins[(target,)] = source

    def finish(self, places: Places, disabled: bool) -> Translation:
        self._apply_auth()
        self._bare_url()
        if disabled and "enabled" not in self.holders:
            self.derive("enabled", False, ())
        if self.dialect.variables:
            self._rewrite_variables(places)
        return self.out

    def _apply_auth(self) -> None:
        """Turn the entry's authentication keys into toolsift's: ``auth`` wins, then ``oauth``, then a provider."""
        oauth = self.auth.get("oauth")
        if "auth" in self.auth:
            for other in [key for key in self.auth if key != "auth"]:
                self.note(other, "ignored: 'auth' is set too and is used")
            value = self.auth["auth"]
            if isinstance(value, dict):
                self._oauth_block("auth", value)
            else:
                self._auth_token(value)
        elif isinstance(oauth, dict):
            if self.auth.get("authProviderType", _DISCOVERY) != _DISCOVERY:
                self.note("authProviderType", _OAUTH)
            self._oauth_block("oauth", oauth)
        else:
            for key, value in self.auth.items():
                if value == _DISCOVERY:
                    self.derive("auth", {}, (key,))
                    self.note(key, _OAUTH_ON)
                else:
                    self.note(key, _OAUTH)

    def _oauth_block(self, key: str, block: dict[str, Any]) -> None:
        """Carry an OAuth block into ``auth``, each key remembering where it was written."""
        read = read_oauth_block(block)
        self.out.notes.extend(((key, *where), message) for where, message in read.notes)
        if read.auth is None:
            return  # the block turns OAuth off
        self.derive("auth", read.auth, (key,))
        for target, written in read.origins.items():
            self.out.origins[("auth", target)] = (key, written)

    def _auth_token(self, value: object) -> None:
        """A string ``auth``: ``oauth`` signs in with OAuth, anything else is a bearer token."""
        key = "auth"
        if value == "oauth":
            self.derive("auth", {}, (key,))
            self.note(key, _OAUTH_ON)
            return
        if not isinstance(value, str):
            self.note(key, "ignored: expected an OAuth object or a bearer token string")
            return
        if is_secret_reference(value):
            self.note(
                key,
                "ignored: a secret:// reference must be a whole value, and this one would follow "
                '\'Bearer \'; write "auth": "${TOKEN}", or headers.Authorization with the whole '
                "'Bearer <token>' in the secret",
            )
            return
        headers_key = self.holders.get("headers", "headers")
        headers = self.out.entry.get(headers_key, {})
        if not isinstance(headers, dict):
            return  # validation reports the headers themselves
        if any(name.lower() == "authorization" for name in headers):
            self.note(key, f"ignored: {headers_key}.Authorization is set too and is used")
            return
        self.out.entry[headers_key] = {**headers, "Authorization": f"Bearer {value}"}
        self.out.origins[(headers_key, "Authorization")] = (key,)

    def _bare_url(self) -> None:
        """Give a ``url`` without ``type`` the transport the client means by it."""
        url_key = self.holders.get("url")
        if url_key is None or "transport" in self.holders or "command" in self.holders:
            return
        url = next((v for k, v in self.out.entry.items() if self.spellings.get(k) == "url"), None)
        rule = self.dialect.bare_url
        by_path = isinstance(url, str) and _SSE_PATH.search(_path_of(url)) is not None
        if rule == "sse" or (rule == "by-path" and by_path):
            self.derive("type", "sse", (url_key,))

    def _rewrite_variables(self, places: Places) -> None:
        for key, value in list(self.out.entry.items()):
            if self.spellings.get(key) not in _EXPANDABLE:
                continue
            if isinstance(value, str):
                self.out.entry[key] = self._rewrite(value, (key,), places)
            elif isinstance(value, list):
                self.out.entry[key] = [
                    self._rewrite(v, (key, i), places) if isinstance(v, str) else v for i, v in enumerate(value)
                ]
            elif isinstance(value, dict):
                self.out.entry[key] = {
                    k: self._rewrite(v, (key, k), places) if isinstance(v, str) else v for k, v in value.items()
                }

    def _rewrite(self, value: str, loc: Loc, places: Places) -> str:
        rewritten, notes = rewrite_variables(value, self.dialect.variables, places)
        self.out.notes.extend((self.out.written(loc), note) for note in notes)
        return rewritten


def _path_of(url: str) -> str:
    try:
        return urlsplit(url).path
    except ValueError:  # a malformed URL: validation reports it
        return ""


Rule = Callable[[_Translator, str, Any], None]


def _rename(target: str) -> Rule:
    return lambda t, key, value: t.put(target, value, key)


def _ignore(message: str) -> Rule:
    return lambda t, key, value: t.note(key, f"ignored: {message}")


def _disabled(t: _Translator, key: str, value: Any) -> None:
    t.put("enabled", not value if isinstance(value, bool) else value, key)


def _http_url(t: _Translator, key: str, value: Any) -> None:
    t.put("url", value, key)
    if "transport" not in t.holders:
        t.derive("type", "http", (key,))


def _transport(t: _Translator, key: str, value: Any) -> None:
    t.keep(key, "http" if value in _STREAMABLE else value)


def _timeout(t: _Translator, key: str, value: Any) -> None:
    scale = t.dialect.timeout_scale
    if scale is None:
        t.keep(key, value)
    else:
        numeric = isinstance(value, int | float) and not isinstance(value, bool)
        t.put("toolTimeout", value * scale if numeric else value, key)


def _auth(t: _Translator, key: str, value: Any) -> None:
    t.auth[key] = value


def _approve(t: _Translator, key: str, value: Any) -> None:
    t.note(key, _APPROVE.format(key=key, client=t.dialect.client))


def _trust(t: _Translator, key: str, value: Any) -> None:
    if isinstance(value, bool):
        t.note(key, _TRUST)
    else:
        t.keep(key, value)


_RULES: dict[str, Rule] = {
    "disabled": _disabled,
    "disabledTools": _rename("excludeTools"),
    "serverUrl": _rename("url"),
    "httpUrl": _http_url,
    "type": _transport,
    "transport": _transport,
    "timeout": _timeout,
    "auth": _auth,
    "oauth": _auth,
    "authProviderType": _auth,
    "autoApprove": _approve,
    "alwaysAllow": _approve,
    "trust": _trust,
    "authentication": lambda t, key, value: t.note(key, _OAUTH),
    "description": _ignore("toolsift does not use a server's description"),
    "icon": _ignore("toolsift does not show icons"),
    "dev": _ignore("VS Code's settings for developing a server (watch, debug) have no meaning here"),
    "sse_read_timeout": _ignore("toolsift keeps the MCP SDK's SSE read timeout"),
}


def translate_entry(
    entry: Mapping[str, Any], dialect: Dialect, places: Places, *, disabled: bool = False
) -> Translation:
    """Translate one server entry of a file in ``dialect``.

    Args:
        entry: The entry as decoded.
        dialect: The file's dialect; toolsift's own files come back unchanged.
        places: What the dialect's folder variables stand for.
        disabled: The file turns the server off elsewhere (Gemini CLI's ``mcp.excluded``).
    """
    if not dialect.translate:
        return Translation(dict(entry))
    translator = _Translator(entry, dialect)
    for key, value in entry.items():
        _RULES.get(key, _Translator.keep)(translator, key, value)
    return translator.finish(places, disabled)
