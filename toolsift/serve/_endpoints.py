"""Scopes served at paths of their own: the main endpoint, one per skill, one per agent profile.

For a client of MCP 2026-07-28, what ``tools/list`` returns may depend on the
endpoint and the request's credentials, never on earlier requests of the same
connection. So every scope a client may want is an endpoint of its own:

- ``<path>``: the served profile, narrowed by ``serve.gateway`` (a skill or patterns);
- ``<path>/skills/<name>``: the served profile in a turn with that skill
  active: its allowed-tools and disallowed-tools narrow builtin and gateway
  tools alike, and surface the internal servers it names literally;
- ``<path>/agents/<name>``: that agent profile (allowlist, permissions, plan
  mode, tool discovery) with the server's gateway setting, for the profiles
  ``serve.profiles`` names (a profile broader than the served one widens what
  a client may do, so none is served unless named).

Over stdio there is only the main endpoint. An endpoint is built when first
asked for and kept until the skills or the config it was built from change.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, final

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from .._names import SEARCH_TOOL_NAME
from ..config._internal import AgentConfig
from ..registry import Permissions, TurnScope
from ..search import Discovery
from ..skills import Skill
from ._catalog import ServedTools

__all__ = ["SEGMENTS", "Endpoint", "EndpointKey", "EndpointNotFound", "Endpoints", "LegacyClient", "ScopedEndpoint"]

EndpointKind = Literal["main", "skill", "agent"]
#: The path segment under the main endpoint, and the route parameter, of each kind of scoped endpoint.
SEGMENTS: Mapping[EndpointKind, str] = {"skill": "skills", "agent": "agents"}
_INVALID_REQUEST = -32600


class EndpointNotFound(LookupError):
    """Raised when a request names a skill or agent profile the server does not serve.

    Attributes:
        key: The endpoint asked for.
    """

    def __init__(self, message: str, key: EndpointKey) -> None:
        super().__init__(message)
        self.key = key


@dataclass(frozen=True)
class EndpointKey:
    """Which endpoint a request came to.

    Attributes:
        kind: ``main``, ``skill`` or ``agent``.
        name: The skill's or the profile's name (None for the main endpoint).
    """

    kind: EndpointKind = "main"
    name: str | None = None

    @classmethod
    def of(cls, request: object | None) -> EndpointKey:
        """The endpoint of an MCP request: its HTTP route names a skill or an agent; stdio has only the main one."""
        params: Mapping[str, Any] = getattr(request, "path_params", None) or {}
        for kind in ("skill", "agent"):
            name = params.get(kind)
            if isinstance(name, str):
                return cls(kind, name)
        return cls()

    def path(self, base: str) -> str:
        """The endpoint's path, under the main endpoint's ``base``."""
        return base if self.kind == "main" else f"{base.rstrip('/')}/{SEGMENTS[self.kind]}/{self.name}"


@dataclass
class LegacyClient:
    """What one handshake-era client did at one endpoint: what its searches unlocked, the skills it called.

    Only clients of 2025-11-25 and before have such state: their tool list may
    change per connection, announced with ``tools/list_changed``.

    Attributes:
        discovery: Its tool-search state (None: the endpoint offers no search).
        skills: The skills it called, whose tools are in its list since.
    """

    discovery: Discovery | None
    skills: set[str] = field(default_factory=set)


@final
@dataclass(frozen=True, eq=False)
class Endpoint:
    """One served scope.

    Attributes:
        key: Where it is served.
        profile: The agent profile its calls run as.
        permissions: The profile's permissions (layer 5), asking the calling client where they ask.
        tools: What it lists and where each call goes.
        listing: The pinned tools (and ``search_tools``) of its lists; None
            when it offers no tool search. Nothing is ever unlocked into it.
        skill_scope: The turn scope of a skill under this endpoint's profile.
    """

    key: EndpointKey
    profile: AgentConfig
    permissions: Permissions
    tools: ServedTools
    listing: Discovery | None
    skill_scope: Callable[[Skill], TurnScope]
    # reaches_beyond's answers, one registry state at a time
    _beyond: dict[tuple[object, ...], bool] = field(default_factory=dict, init=False, repr=False)

    @property
    def searches(self) -> bool:
        """Whether the endpoint offers ``search_tools``."""
        return self.listing is not None

    def scope(self) -> TurnScope | None:
        """The gateway scope every client lists with here: the served scope with its pinned tools."""
        base = self.tools.scope_of("gateway")
        return self.listing.scope_for_turn(base) if self.listing is not None and base is not None else base

    def client_scope(self, client: LegacyClient, skills: Iterable[Skill]) -> TurnScope | None:
        """The gateway scope of a handshake-era client: its searches' unlocks and the tools of ``skills`` it called."""
        base = self.tools.scope_of("gateway")
        if base is None:
            return None
        scope = client.discovery.scope_for_turn(base) if client.discovery is not None else base
        reached = [name for skill in skills if skill.name in client.skills for name in self.skill_reach(skill)[1]]
        return scope.with_unlocked(reached) if reached else scope

    def skill_reach(self, skill: Skill) -> tuple[list[str], frozenset[str]]:
        """The served names of ``skill``'s tools, and the canonical names of the gateway tools among them."""
        scope = self.skill_scope(skill)
        served = self.tools.tools_for(skill, scope)
        gateway = frozenset(
            routed[1] for name in served if (routed := self.tools.route(name, scope)) and routed[0].kind == "gateway"
        )
        return served, gateway

    def reaches_beyond(self, skills: Iterable[Skill]) -> bool:
        """Whether a search or a skill reaches tools this endpoint does not list (what ``call_tool`` is for)."""
        if self.tools.scope_of("gateway") is None:
            return False
        skills = list(skills)
        key = (self.tools.generation, *((skill.name, skill.allowed_tools, skill.disallowed_tools) for skill in skills))
        beyond = self._beyond.get(key)
        if beyond is None:
            listed = self.tools.served_names(self.scope())
            beyond = SEARCH_TOOL_NAME in listed or any(
                canonical not in listed for skill in skills for canonical in self.skill_reach(skill)[1]
            )
            self._beyond.clear()
            self._beyond[key] = beyond
        return beyond


@final
class Endpoints:
    """The endpoints of one server, built when first asked for.

    Args:
        build: Builds the endpoint of a key that names something served.
        base: The main endpoint's path.
        skills: The names of the skills with an endpoint, now.
        agents: The names of the agent profiles with an endpoint, now.
    """

    def __init__(
        self,
        build: Callable[[EndpointKey], Endpoint],
        *,
        base: str,
        skills: Callable[[], list[str]],
        agents: Callable[[], list[str]],
    ) -> None:
        self._build = build
        self.base = base
        self._names: Mapping[EndpointKind, Callable[[], list[str]]] = {"skill": skills, "agent": agents}
        self._built: dict[EndpointKey, Endpoint] = {}

    def missing(self, key: EndpointKey) -> str | None:
        """Why nothing is served at ``key``, naming what is; None when something is."""
        if key.kind == "main":
            return None
        names = sorted(self._names[key.kind]())
        if key.name in names:
            return None
        what = "skill" if key.kind == "skill" else "agent profile"
        pattern = EndpointKey(key.kind, "<name>").path(self.base)
        served = f"{pattern} serves {', '.join(map(repr, names))}" if names else f"no {what} is served at {pattern}"
        return f"No {what} {key.name!r} here: {served}"

    def get(self, key: EndpointKey) -> Endpoint:
        """The endpoint at ``key``.

        Raises:
            EndpointNotFound: When ``key`` names a skill or profile that is not served.
        """
        endpoint = self._built.get(key)
        if endpoint is None:
            reason = self.missing(key)
            if reason is not None:
                raise EndpointNotFound(reason, key)
            endpoint = self._built[key] = self._build(key)
        return endpoint

    def built(self) -> list[Endpoint]:
        """The endpoints built so far, the main one first."""
        return list(self._built.values())

    def forget(self, kind: EndpointKind) -> None:
        """Drop the endpoints of one kind (their skills or profiles changed); they are built again when asked for."""
        self._built = {key: endpoint for key, endpoint in self._built.items() if key.kind != kind}


@final
class ScopedEndpoint:
    """The MCP endpoint of a skill or agent route: a 404 naming what is served, when its name is not.

    Args:
        app: The MCP endpoint (the session manager's ASGI app).
        endpoints: What is served.
    """

    def __init__(self, app: ASGIApp, endpoints: Endpoints) -> None:
        self._app = app
        self._endpoints = endpoints

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        key = EndpointKey.of(_PathParams(scope.get("path_params") or {}))
        reason = self._endpoints.missing(key)
        if reason is None:
            await self._app(scope, receive, send)
            return
        body = {"jsonrpc": "2.0", "id": None, "error": {"code": _INVALID_REQUEST, "message": reason}}
        await JSONResponse(body, status_code=404)(scope, receive, send)


@dataclass(frozen=True)
class _PathParams:
    path_params: Mapping[str, Any]
