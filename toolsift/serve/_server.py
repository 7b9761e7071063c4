"""``ToolsiftServer``: toolsift's tools and skills behind the SDK's low-level MCP ``Server``.

The low-level ``Server`` serves a tool list that changes at run time, which
the high-level ``MCPServer`` cannot. Three of its habits are corrected here:
it validates no arguments (the pipeline's registry does), it turns handler
exceptions into JSON-RPC errors (every call answers with a ``CallToolResult``,
``isError`` when it failed, unknown tools included), and it does not
advertise ``tools.listChanged`` to handshake-era clients unless told to.
"""

from __future__ import annotations

import logging
import os
import warnings
from collections.abc import Awaitable, Callable, Hashable, Mapping
from contextlib import AsyncExitStack, nullcontext
from dataclasses import dataclass, replace
from functools import partial
from types import TracebackType
from typing import Any, Literal, Self, final
from weakref import WeakKeyDictionary

import anyio
import mcp.types as types
from mcp import MCPError
from mcp.server import ServerRequestContext
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp.types.version import MODERN_PROTOCOL_VERSIONS

from .. import __version__
from .._assembly import Assembly
from .._exceptions import ConfigError
from .._globs import literal_server
from .._names import SEARCH_TOOL_NAME, split_name
from ..builtins import CommandPolicy
from ..config import ToolsiftConfig, TrustedLaunches
from ..config._internal import AgentConfig, ServeSettings
from ..mcp_sessions._internal import guard_result, present_result, server_instructions
from ..mcp_sessions.reload import McpServerManager
from ..pipeline import AuditTrail, Middleware, PermissionFilter, Pipeline, ResultGuard, SecurityGuard
from ..pipeline._internal import profile_scope
from ..registry import CallRecord, Permissions, ToolRegistry, ToolResult, ToolSpec, TurnScope
from ..search import Discovery, SearchIndex
from ..skills import Skill, SkillsReloaded
from ._approval import ClientApprover
from ._cache_hints import CacheHints
from ._catalog import RESERVED_NAMESPACES, ServedTools, ToolSource
from ._endpoints import Endpoint, EndpointKey, EndpointNotFound, Endpoints, LegacyClient
from ._list_changes import ListKind, UpstreamListAnnouncer
from ._meta import (
    META_TOOL,
    META_TOOL_NAME,
    SEARCH_DESCRIPTION,
    MetaCall,
    found_for_meta,
    parse_meta_call,
    with_reach,
)
from ._notify import ToolListAnnouncer
from ._outcome import CapabilityMissing, ClaimedResult, HandedTask, InputRequired
from ._proxy import GatewayProxy
from ._relay import ClientRelay, client_of
from ._replicas import SharedState
from ._sdk_server import SdkServer
from ._skill_extension import SkillPublisher
from ._skills import SKILL_NAMESPACE, skill_tools
from ._state_key import ENV_STATE_KEY, request_state_security
from ._stdio import AnsweringReadStream
from ._tasks import TaskRoutes
from ._upstream import ClientForward
from ._used_approvals import used_approvals

__all__ = ["ToolsiftServer"]

logger = logging.getLogger("toolsift.serve")

INSTRUCTIONS = (
    "toolsift serves builtin tools (builtin__*: files and programs inside one workspace folder), "
    "skills (skill__<name>: call one to get its instructions and the tools it works with) and, as a "
    "gateway, tools of other MCP servers (<server>__<tool>)."
)


def _fence(result: ToolResult, tool: str) -> ToolResult:
    return guard_result(result, server="builtin", tool=tool)


def _turn(skill: Skill) -> TurnScope:
    """The turn scope of ``skill`` active (layer 4), before the profile's layers."""
    return TurnScope(skill_allowed=skill.allowed_tools, skill_disallowed=skill.disallowed_tools, skill=skill.name)


def _stateless(ctx: ServerRequestContext[Any]) -> bool:
    """Whether the request is of MCP 2026-07-28 or later: what it sees may not depend on earlier requests."""
    return ctx.protocol_version in MODERN_PROTOCOL_VERSIONS


def _check_settings(config: ToolsiftConfig, settings: ServeSettings) -> None:
    """Refuse what the settings ask and the config cannot give.

    Raises:
        ConfigError: ``profiles`` names an agent the config lacks, or gateway mode meets a server
            named ``builtin`` or ``skill``.
    """
    unknown = sorted(set(settings.profiles) - set(config.agents))
    if unknown:
        raise ConfigError(
            f"serve.profiles names no configured agent: {', '.join(map(repr, unknown))}; "
            f"the agents are {', '.join(map(repr, sorted(config.agents))) or 'none'}",
            path=config.path,
            field="serve.profiles",
        )
    clash = sorted(RESERVED_NAMESPACES & {server.namespace for server in config.servers.values()})
    if settings.gateway is not False and clash:
        raise ConfigError(
            f"gateway mode cannot serve MCP servers named {', '.join(map(repr, clash))}: "
            "those namespaces are toolsift's own; rename them or set toolPrefix",
            path=config.path,
            field="serve.gateway",
        )


@dataclass(frozen=True, slots=True)
class _Served:
    """A served call made ready for its client's era: what to run, and what to make of its result after."""

    params: types.CallToolRequestParams
    routed: tuple[ToolSource, str] | None
    discovery: Discovery | None
    finish: Callable[[ToolResult], Awaitable[ToolResult]]


@final
class ToolsiftServer:
    """A config's builtin tools, skills and (as a gateway) MCP tools, served over MCP.

    Enter it (``async with``) to start what it runs: the skill watcher, the
    change announcer and, in gateway mode, a session per configured MCP
    server, under an ``McpServerManager`` that follows the config file (when
    the config came from one) as a Toolbox does: added, removed and changed
    servers apply while serving, and clients hear ``tools/list_changed``.
    :func:`serve_stdio`, :func:`serve_http` and the app of
    :func:`create_http_app` do that for you. A server is entered once.

    What a client lists depends on its endpoint (the main one, a skill's, an
    agent profile's: see ``_endpoints``) and on its MCP era: a 2026-07-28
    client's list never changes through its own calls, and what a search or a
    skill finds runs through ``call_tool`` (see ``_meta``); a handshake-era
    client's list grows with what its searches unlock and the skills it calls.

    Args:
        config: The loaded config (servers, agents, skills, tool rules, audit).
        settings: How to serve; defaults to ``ServeSettings()``.
        user_skills_dir: The user's skill folder, used when the config's
            ``skills.userSkills`` is true (default ``~/.toolsift/skills``).
        trust: What an edit of a project's config may launch while served
            (see :class:`~toolsift.config.TrustedLaunches`); None starts
            whatever the file says, for a file the caller chose.
        settle_heap: Freeze the process's heap after large registrations
            (see :class:`~toolsift.registry.ToolRegistry`): for a process that
            serves and nothing else, as ``toolsift serve`` runs it.

    Attributes:
        parts: What the config describes, built in one place (the same
            assembly a ``Toolbox`` is built with): ``registry``, ``skills``,
            ``sessions`` and ``index`` are its parts.

    Raises:
        ConfigError: When the profile, or one of ``profiles``, is not a configured agent, the workspace
            is not a directory, gateway mode meets a server named ``builtin``
            or ``skill``, a command rule names an unknown built-in policy, or
            ``$TOOLSIFT_REQUEST_STATE_KEY`` is set but shorter than 32 bytes.
        InvalidPattern: When a policy glob is invalid.
    """

    def __init__(
        self,
        config: ToolsiftConfig,
        settings: ServeSettings | None = None,
        *,
        user_skills_dir: str | os.PathLike[str] | None = None,
        trust: TrustedLaunches | None = None,
        settle_heap: bool = False,
    ) -> None:
        self.config = config
        self.settings = settings = settings if settings is not None else ServeSettings()
        self.profile: AgentConfig = config.agent(settings.profile)
        _check_settings(config, settings)
        gateway = settings.gateway is not False
        self.relay = ClientRelay()
        # Upstream servers' requests go to the calling client (the relay); search_tools reaches internal servers'
        # tools unless a skill or patterns chose them; replicas audit each start before the call runs.
        self.parts = Assembly(
            config,
            user_skills_dir=user_skills_dir,
            servers=gateway,
            callbacks=self.relay.callbacks(),
            trust=trust,
            search=settings.gateway is True and self.profile.tool_discovery != "skills",
            search_skills=False,
            record_starts=settings.shared is not None,
            upstream_names=gateway and not settings.prefix_names,
            settle_heap=settle_heap,
        )
        self.registry = self.parts.registry
        self.skills = self.parts.skills
        self.sessions: McpServerManager | None = self.parts.manager
        self.index: SearchIndex | None = self.parts.index
        self.commands = CommandPolicy.from_settings(settings.commands)
        # What configures toolsift is out of the builtins' reach, following the servers a reload puts in force.
        self.parts.register_workspace_tools(settings.workspace or config.workspace, self.commands)
        self.skill_registry = ToolRegistry(audit=self.registry.audit)
        # Several replicas serving one set of sessions keep what they share in Redis.
        self.shared = SharedState(settings.shared, self.registry.audit) if settings.shared is not None else None
        # Used approvals are recorded as far as the requestState key reaches: one yes, one call.
        used = used_approvals(settings, self.shared.redis if self.shared is not None else None)
        self.approver = ClientApprover(used, mask=self._mask_secrets)
        # Handshake-era clients' own state (what they unlocked, skills they called), per endpoint they use.
        self._clients: WeakKeyDictionary[Any, dict[EndpointKey, LegacyClient]] = WeakKeyDictionary()
        self.endpoints = Endpoints(
            self._build_endpoint,
            base=settings.path,
            skills=self._skill_endpoints,
            agents=lambda: list(settings.profiles),
        )
        main = self.endpoints.get(EndpointKey())
        self.tools, self._permissions = main.tools, main.permissions
        self.proxy: GatewayProxy | None = None
        self._listen, self.announcer, self.upstream_lists = self._announcers(InMemorySubscriptionBus())
        security = request_state_security()
        # Tasks of upstream servers: their ids are sealed with the same key, so any replica routes them.
        self.tasks = TaskRoutes(security.codec, self.sessions, self._task_result) if self.sessions is not None else None
        self.sdk = self._sdk_server(security)
        self._stack: AsyncExitStack | None = None
        self._entered = False

    def __repr__(self) -> str:
        return f"ToolsiftServer(profile={self.profile.name!r}, settings={self.settings!r})"

    def _announcers(
        self, bus: InMemorySubscriptionBus
    ) -> tuple[ListenHandler, ToolListAnnouncer, UpstreamListAnnouncer]:
        """Who tells subscribed clients of list changes: the listen streams, the tools, upstream prompts and resources
        (compared by what they look like now, to tell a change from a repeat)."""
        announcer = ToolListAnnouncer(bus, self._signature)
        signatures: dict[ListKind, Callable[[], Hashable]] = {
            "prompts": lambda: self.proxy.prompt_signature() if self.proxy else (),
            "resources": lambda: self.proxy.resource_signature() if self.proxy else (),
        }
        return ListenHandler(bus), announcer, UpstreamListAnnouncer(bus, announcer.tracked, signatures)

    # -- what is served ------------------------------------------------------------------------

    def _sdk_server(self, security: RequestStateSecurity) -> SdkServer:
        """The SDK server, with the handlers, extensions and middleware of what is served."""
        sdk = self._bare_sdk_server()
        if self.tasks is not None:
            self.tasks.register(sdk)
        if self.settings.skills:  # beside skill__<name>, for clients of the MCP Skills extension
            SkillPublisher(self._served_skills, self.parts.skill_files).install(sdk)
        # requestState is sealed and bound to its call: an approval answer counts only for the question asked.
        sdk.middleware.append(RequestStateBoundary(security, default_audience="toolsift"))
        sdk.middleware.append(CacheHints(guarded=self.settings.token is not None))
        asks = bool(self._permissions.ask or self._permissions.ask_destructive)
        if self.shared is not None and asks and not os.environ.get(ENV_STATE_KEY):
            logger.warning(
                "serve.shared: set $%s to one secret on every replica, or a 2026-07-28 client's "
                "answer to an approval is accepted only by the replica that asked",
                ENV_STATE_KEY,
            )
        if asks and self.approver.used.unkept is not None:
            logger.warning("%s", self.approver.used.unkept)
        sdk.middleware.append(self.announcer.track)
        return sdk

    def _bare_sdk_server(self) -> SdkServer:
        handlers: dict[str, Any] = {}
        if self.sessions is not None:
            self.proxy = proxy = GatewayProxy(
                self.sessions, self._proxied_servers, self.relay, prefix=self.settings.prefix_names
            )
            handlers = dict(
                on_list_resources=proxy.list_resources,
                on_list_resource_templates=proxy.list_resource_templates,
                on_read_resource=proxy.read_resource,
                on_subscribe_resource=proxy.subscribe,
                on_unsubscribe_resource=proxy.unsubscribe,
                on_list_prompts=proxy.list_prompts,
                on_get_prompt=proxy.get_prompt,
                on_completion=proxy.complete,
                on_set_logging_level=proxy.set_level,
            )
        with warnings.catch_warnings():  # the SDK deprecates serving the handshake era's subscribe and logging
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            return SdkServer(
                "toolsift",
                version=__version__,
                instructions_of=self._instructions,
                passed_through=partial(TaskRoutes.advertised, self.sessions) if self.sessions is not None else dict,
                core_tasks=partial(TaskRoutes.core_capability, self.sessions if self.sessions is not None else {}),
                on_list_tools=self._list_tools,
                on_call_tool=self._call_tool,
                on_subscriptions_listen=self._listen,
                **handlers,
            )

    def _mask_secrets(self, text: str) -> str:
        """``text`` with the secrets the gateway's sessions resolved masked (what an approver must not see)."""
        return self.sessions.mask_secrets(text) if self.sessions is not None else text

    def _build_endpoint(self, key: EndpointKey) -> Endpoint:
        """The endpoint of a served skill or profile (or the main one): its sources, pipeline and pinned tools."""
        profile = self.config.agent(key.name) if key.kind == "agent" else self.profile
        skill = self.skills.get(key.name) if key.kind == "skill" and key.name is not None else None
        # A call the profile's ask rules hold back is put to the client that made it.
        permissions = replace(profile.permissions.to_permissions(), approver=self.approver)
        searches = self.index is not None and skill is None and profile.tool_discovery != "skills"
        tools = ServedTools(
            self._sources(profile, permissions, skill),
            timeout=profile.limits.call_timeout,
            prefix=self.settings.prefix_names,
        )
        listing = self.parts.discovery(profile, permissions) if searches else None
        return Endpoint(key, profile, permissions, tools, listing, partial(self._skill_scope, profile))

    def _skill_endpoints(self) -> list[str]:
        """The skills served at endpoints of their own: none when ``serve.gateway`` narrows the gateway."""
        narrowed = isinstance(self.settings.gateway, str | tuple)
        return [] if narrowed else [skill.name for skill in self.skills.invocable()]

    def _served_skills(self) -> list[Skill]:
        """The skills clients may call (``skill__<name>``), whose tools they may then reach."""
        return self.skills.invocable() if self.settings.skills else []

    def _signature(self) -> tuple[str, ...]:
        """What changes whenever the list of any endpoint built so far does."""
        return tuple(line for endpoint in self.endpoints.built() for line in endpoint.tools.signature())

    async def repeatable(self, name: str) -> bool:
        """Whether served tool ``name`` may run a call again without more effect (read-only or idempotent).

        A tool of a lazy server is known once its server runs, so asking starts it.
        """
        routed = await self._route(name, self.tools.scope_of("gateway"), self.tools)
        return routed is not None and routed[0].registry.spec(routed[1]).repeatable

    def _instructions(self) -> str:
        """toolsift's own, then those of the proxied upstream servers (fenced unless trusted)."""
        if self.sessions is None:
            return INSTRUCTIONS
        proxied = set(self._proxied_servers())
        upstream = server_instructions({name: session for name, session in self.sessions.items() if name in proxied})
        return "\n\n".join([INSTRUCTIONS, *(f"# MCP server {name}\n\n{text}" for name, text in upstream.items())])

    def _proxied_servers(self) -> list[str]:
        """Servers whose resources and prompts the gateway passes on: served tools, or not internal."""
        served = self.tools.gateway_servers()
        return [name for name, server in self.config.servers.items() if name in served or not server.internal_only]

    def _sources(self, profile: AgentConfig, permissions: Permissions, skill: Skill | None) -> list[ToolSource]:
        """What ``profile`` is served; with ``skill``, builtin and gateway tools in that skill's turn scope."""
        settings = self.settings
        main = Pipeline.for_registry(
            self.registry,
            [
                Middleware(
                    PermissionFilter,
                    agent=profile.name,
                    allowed_tools=profile.allowed_tools,
                    permissions=permissions,
                    plan_mode=profile.plan_mode,
                ),
                *self._guards(),
            ],
        )
        # Skills run no action, so no profile limits them; their calls are still guarded and audited.
        skills = Pipeline.for_registry(self.skill_registry, self._guards())
        turn = self._profiled(_turn(skill), profile) if skill is not None else None
        sources = []
        if settings.builtins:
            builtins = turn if turn is not None else self._profiled(TurnScope(), profile)
            sources.append(ToolSource("builtin", self.registry, main, builtins, permissions))
        if settings.skills:
            sources.append(ToolSource(SKILL_NAMESPACE, self.skill_registry, skills, TurnScope(agent=profile.name)))
        if settings.gateway is not False:
            gateway = turn if turn is not None else self._gateway_scope(profile)
            sources.append(ToolSource("gateway", self.registry, main, gateway, permissions))
        return sources

    def _guards(self) -> list[Middleware[Any]]:
        settings = self.settings
        return [
            Middleware(AuditTrail, audit=self.registry.audit),
            Middleware(
                SecurityGuard,
                max_argument_bytes=settings.max_argument_bytes,
                arguments=settings.argument_policies,
                commands=self.commands,
                command_arguments=settings.command_arguments,
                urls=settings.urls,
            ),
            self._result_stage(),
        ]

    def _result_stage(self) -> Middleware[Any]:
        """The stage a result passes on its way to the client: the fence of untrusted tools, the size rule."""
        settings = self.settings
        return Middleware(
            ResultGuard, max_bytes=settings.max_result_bytes, untrusted=settings.untrusted_tools, fence=_fence
        )

    async def _task_result(self, server: str, tool: str, called: str, result: ToolResult) -> ToolResult:
        """A task's result (masked by its session) as the call that made the task would have returned it."""
        session = self.sessions.get(server) if self.sessions is not None else None
        if self.settings.fence_gateway_results and session is not None:
            result = present_result(session.config, tool, result)

        async def finished(call: CallRecord) -> ToolResult:
            return result

        return await Pipeline(finished, [self._result_stage()]).handle(CallRecord(called))

    @staticmethod
    def _profiled(scope: TurnScope, profile: AgentConfig) -> TurnScope:
        # The same function the pipeline's PermissionFilter applies to every call.
        return profile_scope(
            scope, agent=profile.name, allowed_tools=profile.allowed_tools, plan_mode=profile.plan_mode
        )

    def _gateway_scope(self, profile: AgentConfig) -> TurnScope:
        gateway = self.settings.gateway
        if isinstance(gateway, str):
            return self._profiled(_turn(self.skills.get(gateway)), profile)
        return self._profiled(TurnScope(skill_allowed=gateway if isinstance(gateway, tuple) else ()), profile)

    def _skill_scope(self, profile: AgentConfig, skill: Skill) -> TurnScope:
        """The gateway scope ``skill__<name>`` puts in reach; one narrowed by ``serve.gateway`` keeps its own."""
        if isinstance(self.settings.gateway, str | tuple):
            return self._gateway_scope(profile)
        return self._profiled(_turn(skill), profile)

    def _gateway_named(self) -> set[str]:
        """The servers the gateway's skill or patterns name literally: lazy ones among them start with it."""
        scope = self._gateway_scope(self.profile)
        return {server for pattern in scope.skill_allowed if (server := literal_server(pattern))}

    def _skills_reloaded(self, event: SkillsReloaded) -> None:
        main = self.endpoints.get(EndpointKey())
        reach = main.skill_reach
        tools = skill_tools(event.skills, lambda s: reach(s)[0], self.parts.skill_files) if self.settings.skills else []
        self.skill_registry.replace_server(SKILL_NAMESPACE, tools, internal=False)
        self.endpoints.forget("skill")
        if isinstance(self.settings.gateway, str) and self.settings.gateway in event.skills:
            self.tools.set_scope("gateway", self._gateway_scope(self.profile))
            self.endpoints.forget("agent")
        self.announcer.changed()

    # -- MCP handlers ----------------------------------------------------------------------------

    def _endpoint(self, ctx: ServerRequestContext[Any]) -> Endpoint:
        """The endpoint the request came to (over stdio, the main one).

        Raises:
            EndpointNotFound: When its skill or profile is no longer served (the route checked it on arrival).
        """
        return self.endpoints.get(EndpointKey.of(ctx.request))

    def _offers_meta(self, endpoint: Endpoint) -> bool:
        """Whether 2026-07-28 clients of ``endpoint`` get ``call_tool``: a search or a skill reaches unlisted tools."""
        listed = endpoint.tools.served_names(endpoint.scope())
        return META_TOOL_NAME not in listed.values() and endpoint.reaches_beyond(self._served_skills())

    async def _list_tools(
        self,
        ctx: ServerRequestContext[Any],
        params: types.PaginatedRequestParams | None,
    ) -> types.ListToolsResult:
        try:
            endpoint = self._endpoint(ctx)
        except EndpointNotFound as exc:
            raise MCPError(types.INVALID_REQUEST, str(exc)) from None
        if not _stateless(ctx):
            client = await self._synced_client(ctx, endpoint)
            reach = endpoint.client_scope(client, self._served_skills())
            listed = endpoint.tools.list_tools(reach)
            if self.tasks is not None:  # 2025-11-25: the tools a client may ask to run as tasks say so
                listed = self.tasks.with_task_support(listed, partial(self._gateway_tool, endpoint.tools, reach))
            return types.ListToolsResult(tools=listed)
        # The same list for every request to this endpoint, whatever the connection did before.
        tools = [
            tool.model_copy(update={"description": SEARCH_DESCRIPTION}) if tool.name == SEARCH_TOOL_NAME else tool
            for tool in endpoint.tools.list_tools(endpoint.scope())
        ]
        if self._offers_meta(endpoint):
            tools.append(META_TOOL)
        # The list follows config and skill edits, announced on listen streams; a token guards it.
        scope: Literal["public", "private"] = "private" if self.settings.token is not None else "public"
        return types.ListToolsResult(tools=tools, ttl_ms=0, cache_scope=scope)

    async def _route(self, name: str, gateway: TurnScope | None, tools: ServedTools) -> tuple[ToolSource, str] | None:
        """The source and canonical name of served tool ``name``: the one routing of a served call.

        A tool of a lazy server is there once its server runs: needing the tool starts the server.
        """
        routed = tools.route(name, gateway)
        if routed is None and self.sessions is not None:
            await self.sessions.start_lazy([split_name(name)[0] or ""])
            routed = tools.route(name, gateway)
        return routed

    @staticmethod
    def _session_id(ctx: ServerRequestContext[Any]) -> str | None:
        """The MCP session of the request (None on connections without one)."""
        return getattr(client_of(ctx.session), "session_id", None)

    async def _synced_client(self, ctx: ServerRequestContext[Any], endpoint: Endpoint) -> LegacyClient:
        """A handshake-era client's state; with shared sessions, its unlocks as the last replica left them."""
        clients = self._clients.setdefault(client_of(ctx.session), {})
        client = clients.get(endpoint.key)
        if client is None:
            discovery = self.parts.discovery(endpoint.profile, endpoint.permissions) if endpoint.searches else None
            client = clients[endpoint.key] = LegacyClient(discovery)
        session_id = self._session_id(ctx)
        if client.discovery is not None and self.shared is not None and session_id is not None:
            client.discovery.restore(await self.shared.unlocked(session_id))
        return client

    async def _call_tool(
        self,
        ctx: ServerRequestContext[Any],
        params: types.CallToolRequestParams,
    ) -> types.CallToolResult | types.InputRequiredResult | dict[str, Any]:
        """One ``tools/call``: made ready as the client's era has it, run (:meth:`_run`), then finished."""
        try:
            endpoint = self._endpoint(ctx)
        except EndpointNotFound as exc:
            return ToolResult.error(str(exc)).to_mcp()
        ready = self._stateless_call if _stateless(ctx) else self._legacy_call
        served = await ready(ctx, params, endpoint)
        if isinstance(served, ToolResult):
            return served.to_mcp()
        result = await self._run(ctx, served.params, served.routed, endpoint.tools, served.discovery)
        if not isinstance(result, ToolResult):
            return result
        return (await served.finish(result)).to_mcp()

    async def _legacy_call(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams, endpoint: Endpoint
    ) -> _Served:
        """A handshake-era call: what its search unlocks and the skills it calls join this client's list."""
        client = await self._synced_client(ctx, endpoint)
        discovery = client.discovery
        routed = await self._route(params.name, endpoint.client_scope(client, self._served_skills()), endpoint.tools)
        unlocked = discovery.unlocked if discovery is not None else frozenset()
        return _Served(params, routed, discovery, partial(self._legacy_finish, ctx, endpoint, client, routed, unlocked))

    async def _legacy_finish(
        self,
        ctx: ServerRequestContext[Any],
        endpoint: Endpoint,
        client: LegacyClient,
        routed: tuple[ToolSource, str] | None,
        unlocked: frozenset[str],
        result: ToolResult,
    ) -> ToolResult:
        discovery = client.discovery
        changed = discovery is not None and discovery.unlocked != unlocked
        if changed and discovery is not None:
            session_id = self._session_id(ctx)
            if self.shared is not None and session_id is not None:
                await self.shared.save_unlocked(session_id, discovery.recent)
        skill = self._skill_answered(routed, result)
        if skill is not None:
            # The skill's tools join this client's list (within the endpoint's scope), as a search's finds do.
            before = endpoint.tools.served_names(endpoint.client_scope(client, self._served_skills()))
            client.skills.add(skill.name)
            after = endpoint.tools.served_names(endpoint.client_scope(client, self._served_skills()))
            added = after.keys() != before.keys()
            changed = changed or added
            result = with_reach(result, run_with=None, endpoint=self._skill_path(ctx, skill), listed_from_now=added)
        if changed:
            # What this client may see changed; other clients' lists are as they were.
            await ctx.session.send_tool_list_changed()
        return result

    async def _stateless_call(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams, endpoint: Endpoint
    ) -> _Served | ToolResult:
        """A 2026-07-28 call: nothing it does changes what the client lists; found tools run through ``call_tool``."""
        scope = endpoint.scope()
        if params.name == META_TOOL_NAME and self._offers_meta(endpoint):
            call = parse_meta_call(params.arguments)
            if isinstance(call, str):
                return ToolResult.error(call)
            widened = await self._meta_scope(endpoint, call)
            if isinstance(widened, str):
                return ToolResult.error(widened)
            scope = widened
            # Approval, audit and relaying see the call of the tool itself.
            params = params.model_copy(update={"name": call.name, "arguments": call.arguments})
        routed = await self._route(params.name, scope, endpoint.tools)
        return _Served(params, routed, None, partial(self._stateless_finish, ctx, endpoint, routed))

    async def _stateless_finish(
        self,
        ctx: ServerRequestContext[Any],
        endpoint: Endpoint,
        routed: tuple[ToolSource, str] | None,
        result: ToolResult,
    ) -> ToolResult:
        if routed is not None and routed[0].kind == "gateway" and routed[1] == SEARCH_TOOL_NAME:
            return found_for_meta(
                result, listed=endpoint.tools.served_names(endpoint.scope()), schema_of=self._input_schema
            )
        if (skill := self._skill_answered(routed, result)) is not None:
            listed = endpoint.tools.served_names(endpoint.scope())
            beyond = any(name not in listed for name in endpoint.skill_reach(skill)[1])
            run_with = skill.name if beyond and self._offers_meta(endpoint) else None
            result = with_reach(result, run_with=run_with, endpoint=self._skill_path(ctx, skill), listed_from_now=False)
        return result

    async def _meta_scope(self, endpoint: Endpoint, call: MetaCall) -> TurnScope | str | None:
        """The gateway scope a ``call_tool`` runs in, or why the call cannot be made.

        The endpoint's scope, widened only by the named skill's scope or by the one
        tool named when this endpoint's search finds it; the pipeline checks the rest.
        """
        if call.skill is not None:
            skills = self._served_skills()
            skill = next((skill for skill in skills if skill.name == call.skill), None)
            if skill is None:
                names = ", ".join(sorted(repr(skill.name) for skill in skills)) or "none"
                return f"No skill {call.skill!r} to run {call.name!r} with; the skills here: {names}"
            return endpoint.skill_scope(skill)
        scope = endpoint.scope()
        if scope is None or self.index is None or not endpoint.searches:
            return scope
        await self._route(call.name, scope, endpoint.tools)  # a lazy server's tools are indexed once it runs
        found = await self.index.indexed(call.name)
        return scope.with_unlocked([found]) if found is not None and found != SEARCH_TOOL_NAME else scope

    def _input_schema(self, name: str) -> Mapping[str, Any] | None:
        """The input schema of registry tool ``name``, or None when it is gone."""
        return self.registry.spec(name).input_schema if name in self.registry else None

    def _skill_answered(self, routed: tuple[ToolSource, str] | None, result: ToolResult) -> Skill | None:
        """The skill a successful ``skill__<name>`` call answered with, or None for any other call."""
        if routed is None or routed[0].kind != SKILL_NAMESPACE or result.is_error:
            return None
        name = split_name(routed[1])[1]
        return next((skill for skill in self._served_skills() if skill.name == name), None)

    def _skill_path(self, ctx: ServerRequestContext[Any], skill: Skill) -> str | None:
        """The path of ``skill``'s endpoint, for a client that came over HTTP and where skills have endpoints."""
        key = EndpointKey("skill", skill.name)
        return key.path(self.settings.path) if ctx.request is not None and not self.endpoints.missing(key) else None

    async def _run(
        self,
        ctx: ServerRequestContext[Any],
        params: types.CallToolRequestParams,
        routed: tuple[ToolSource, str] | None,
        tools: ServedTools,
        discovery: Discovery | None,
    ) -> ToolResult | types.InputRequiredResult | dict[str, Any]:
        """One served call as routed: its result, or what only the client can act on (see :meth:`_answer`).

        The call's approver asks the client of this request; an upstream tool is called as that client would.
        """
        server = self._gateway_server(routed)
        forward = (
            ClientForward(ctx, params, fence=self.settings.fence_gateway_results, tasks=self.tasks is not None)
            if server is not None
            else None
        )
        approver = self.approver.for_request(ctx, params)
        with self.relay.calling(server, ctx) if server is not None else nullcontext():
            try:
                call = tools.record(
                    params.name,
                    params.arguments,
                    routed,
                    progress=ctx.session.report_progress,
                    discovery=discovery,
                    approver=approver,
                    forward=forward,
                )
                result = call if isinstance(call, ToolResult) else await call[0].handle(call[1])
            except Exception:
                # The pipeline answers every failure with a result; this is the last line, not the plan.
                logger.exception("serving a call of %r failed", params.name)
                result = ToolResult.error(f"Tool {params.name!r} failed with an internal error; see the server log")
        return self._answer(ctx, params.name, result)

    def _answer(
        self, ctx: ServerRequestContext[Any], called: str, result: ToolResult
    ) -> ToolResult | types.InputRequiredResult | dict[str, Any]:
        """What the client gets of how its call ended: the one place the outcomes are told apart.

        Raises:
            MCPError: The upstream server refused for want of a capability only the client can declare.
        """
        match result:
            case InputRequired():  # a question (the approval's, the upstream server's): the client calls again
                return result.request
            case CapabilityMissing():
                raise result.refusal
            case HandedTask() if self.tasks is not None:  # a handshake-era client's task, which it follows itself
                return self.tasks.handed(ctx, result.server, result.created, tool=result.tool, called=called)
            case ClaimedResult() if self.tasks is not None:  # an extension's result (a task) for a 2026-07-28 client
                return self.tasks.outward(result.server, result.wire, tool=result.tool, called=called)
        return result

    @classmethod
    def _gateway_server(cls, routed: tuple[ToolSource, str] | None) -> str | None:
        """The upstream server of a gateway tool (its requests go to the calling client), else None."""
        spec = cls._gateway_spec(routed)
        return spec.server if spec is not None else None

    @staticmethod
    def _gateway_spec(routed: tuple[ToolSource, str] | None) -> ToolSpec | None:
        """The registry spec of a gateway tool as routed, else None."""
        return routed[0].registry.spec(routed[1]) if routed is not None and routed[0].kind == "gateway" else None

    @classmethod
    def _gateway_tool(cls, tools: ServedTools, scope: TurnScope | None, name: str) -> ToolSpec | None:
        """The registry spec of served tool ``name`` when it is a gateway tool, else None."""
        return cls._gateway_spec(tools.route(name, scope))

    async def __aenter__(self) -> Self:
        """Start the skill watcher, the announcer and (gateway mode) the MCP sessions and their config watch.

        Raises:
            RuntimeError: When the server was entered before.
            SkillNotFound: When the gateway skill is not loaded.
        """
        if self._entered:
            raise RuntimeError("A ToolsiftServer can be entered once; build a new one to serve again")
        self._entered = True
        async with AsyncExitStack() as stack:
            if self.shared is not None:
                await stack.enter_async_context(self.shared.running())
            await stack.enter_async_context(self.parts.running())
            group = await stack.enter_async_context(anyio.create_task_group())
            stack.callback(group.cancel_scope.cancel)
            stack.callback(self._listen.close)
            stack.callback(self.registry.subscribe(self.announcer.changed))
            stack.callback(self.skills.subscribe(self._skills_reloaded))
            if self.settings.watch_skills:
                await group.start(self.skills.watch)
            else:
                await self.skills.areload()
            self._skills_reloaded(SkillsReloaded(self.skills.skills))
            await group.start(self.announcer.run)
            if self.sessions is not None:
                await self.sessions.start_lazy(self._gateway_named())
                await group.start(self.upstream_lists.run, self.sessions)
            # Log the served profile's permission globs that match no tool, once the catalogue is listed.
            self.parts.warn_unmatched_globs(
                agents=[self.profile.name],
                upstream=self.settings.gateway is not False and not self.settings.prefix_names,
            )
            # The same hot reload as a Toolbox's: edited servers reach clients as tools/list_changed.
            await group.start(partial(self.parts.watch, skills=False))
            self._stack = stack.pop_all()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        """Stop everything started on entry; MCP sessions are closed and their processes reaped."""
        stack, self._stack = self._stack, None
        if stack is not None:
            await stack.aclose()

    def check_stdio(self) -> None:
        """Refuse to serve over stdio what only HTTP serves.

        Raises:
            ConfigError: When the settings share sessions (``shared``).
        """
        if self.shared is not None:
            raise ConfigError(
                "shared sessions are served over HTTP: use --transport http, or remove serve.shared",
                path=self.config.path,
                field="serve.shared",
            )

    async def run_stdio(self) -> None:
        """Serve one client over this process's stdin/stdout until it disconnects.

        The server must be entered. Logging must go to stderr: stdout is the wire.
        If cancelled, the connection is closed.

        Raises:
            ConfigError: When the settings share sessions (``shared``), which only HTTP serves.
        """
        self.check_stdio()
        async with stdio_server() as (read, write):
            await self.sdk.run(AnsweringReadStream(read, write), write, self.sdk.create_initialization_options())
