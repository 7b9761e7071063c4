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
from collections.abc import Callable, Iterator
from contextlib import AsyncExitStack, contextmanager, nullcontext
from dataclasses import replace
from functools import partial
from types import TracebackType
from typing import Any, Self, final
from weakref import WeakKeyDictionary

import anyio
import mcp.types as types
from mcp.server import NotificationOptions, Server, ServerRequestContext
from mcp.server.models import InitializationOptions
from mcp.server.request_state import RequestStateBoundary
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler
from mcp.shared.exceptions import MCPDeprecationWarning

from .. import __version__
from .._assembly import Assembly
from .._exceptions import ConfigError
from ..builtins import CommandPolicy, Workspace, builtin_tools
from ..config import AgentConfig, ServeSettings, ToolsiftConfig, TrustedLaunches
from ..mcp_sessions import McpServerManager, guard_result, server_instructions, verbatim_results
from ..pipeline import (
    AuditTrail,
    Middleware,
    PermissionFilter,
    Pipeline,
    ResultGuard,
    SecurityGuard,
    profile_scope,
)
from ..registry import ToolRegistry, ToolResult, TurnScope, literal_server, split_name
from ..search import Discovery, SearchIndex
from ..skills import SkillsReloaded, user_folders
from ._approval import ENV_STATE_KEY, ClientApprover, request_state_security
from ._catalog import RESERVED_NAMESPACES, ServedTools, ToolSource
from ._notify import ToolListAnnouncer
from ._protection import FollowedProtection
from ._proxy import GatewayProxy
from ._relay import ClientRelay, client_of
from ._replicas import SharedState
from ._skills import SKILL_NAMESPACE, skill_tools
from ._stdio import AnsweringReadStream

__all__ = ["ToolsiftServer"]

logger = logging.getLogger("toolsift.serve")

INSTRUCTIONS = (
    "toolsift serves builtin tools (builtin__*: files and programs inside one workspace folder), "
    "skills (skill__<name>: call one to get its instructions and the tools it works with) and, as a "
    "gateway, tools of other MCP servers (<server>__<tool>)."
)


class _SdkServer(Server[Any]):
    """The SDK server, advertising ``tools.listChanged`` to handshake-era clients too.

    ``streamable_http_app`` and ``InMemoryTransport`` call
    ``create_initialization_options()`` without arguments, so the default has
    to change here rather than at each call site. Its instructions are read
    at each handshake from ``instructions_of``, so a gateway's reflect the
    upstream servers connected then.
    """

    def __init__(self, *args: Any, instructions_of: Callable[[], str], **kwargs: Any) -> None:
        self._instructions_of = instructions_of
        super().__init__(*args, **kwargs)

    @property
    def instructions(self) -> str:
        return self._instructions_of()

    @instructions.setter
    def instructions(self, value: str | None) -> None:
        """``Server.__init__`` sets it; the text comes from ``instructions_of``."""

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        return super().create_initialization_options(
            notification_options or NotificationOptions(tools_changed=True), experimental_capabilities, extensions
        )


def _fence(result: ToolResult, tool: str) -> ToolResult:
    return guard_result(result, server="builtin", tool=tool)


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
        ConfigError: When the profile is not a configured agent, the workspace
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
        gateway = settings.gateway is not False
        if gateway:
            clash = sorted(RESERVED_NAMESPACES & {server.namespace for server in config.servers.values()})
            if clash:
                raise ConfigError(
                    f"gateway mode cannot serve MCP servers named {', '.join(map(repr, clash))}: "
                    "those namespaces are toolsift's own; rename them or set toolPrefix",
                    path=config.path,
                    field="serve.gateway",
                )
        self.relay = ClientRelay()
        # Replicas may die mid-call: each call's start is audited (and in Redis) before it runs.
        # Rules match every name a tool is known by; served unprefixed, an MCP tool is known by its own name too.
        # Whatever upstream servers ask during a call goes to the client that made the call.
        # search_tools reaches internal servers' tools; each client's unlocks are its own. A gateway
        # narrowed by a skill or patterns has chosen its tools already.
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
        protection = FollowedProtection(
            self._config_in_force, user_skill_folders=user_folders(config.skills.user_skills, user_skills_dir)
        )
        self.registry.register_many(
            builtin_tools(
                Workspace(settings.workspace or config.workspace, protected=protection), commands=self.commands
            )
        )
        self.skill_registry = ToolRegistry(audit=self.registry.audit)
        self.approver = ClientApprover(mask=self._mask_secrets)
        self._discoveries: WeakKeyDictionary[Any, Discovery] = WeakKeyDictionary()
        self.tools = ServedTools(
            self._sources(), timeout=self.profile.limits.call_timeout, prefix=settings.prefix_names
        )
        bus = InMemorySubscriptionBus()
        self._listen = ListenHandler(bus)
        self.announcer = ToolListAnnouncer(bus, self.tools.signature)
        # Several replicas serving one set of sessions keep what they share in Redis.
        self.shared = SharedState(settings.shared, self.registry.audit) if settings.shared is not None else None
        self.sdk = self._sdk_server()
        # requestState is sealed and bound to its call: an approval answer counts only for the question asked.
        self.sdk.middleware.append(RequestStateBoundary(request_state_security(), default_audience="toolsift"))
        asks = bool(self._permissions.ask or self._permissions.ask_destructive)
        if self.shared is not None and asks and not os.environ.get(ENV_STATE_KEY):
            logger.warning(
                "serve.shared: set $%s to one secret on every replica, or a 2026-07-28 client's "
                "answer to an approval is accepted only by the replica that asked",
                ENV_STATE_KEY,
            )
        self.sdk.middleware.append(self.announcer.track)
        self._stack: AsyncExitStack | None = None
        self._entered = False

    def __repr__(self) -> str:
        return f"ToolsiftServer(profile={self.profile.name!r}, settings={self.settings!r})"

    # -- what is served ------------------------------------------------------------------------

    def _config_in_force(self) -> ToolsiftConfig:
        """The loaded config, or the one the last reload applied (gateway mode)."""
        applied = self.sessions.config if self.sessions is not None else None
        return applied if applied is not None else self.config

    def _sdk_server(self) -> _SdkServer:
        handlers: dict[str, Any] = {}
        if self.sessions is not None:
            proxy = GatewayProxy(self.sessions, self._proxied_servers, self.relay, prefix=self.settings.prefix_names)
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
            return _SdkServer(
                "toolsift",
                version=__version__,
                instructions_of=self._instructions,
                on_list_tools=self._list_tools,
                on_call_tool=self._call_tool,
                on_subscriptions_listen=self._listen,
                **handlers,
            )

    def _mask_secrets(self, text: str) -> str:
        """``text`` with the secrets the gateway's sessions resolved masked (what an approver must not see)."""
        return self.sessions.mask_secrets(text) if self.sessions is not None else text

    def _discovery(self, ctx: ServerRequestContext[Any]) -> Discovery | None:
        """The tool-search state of the client of this request (None: the gateway offers no search)."""
        if self.index is None:
            return None
        client = client_of(ctx.session)
        discovery = self._discoveries.get(client)
        if discovery is None:
            discovery = self._discoveries[client] = self.parts.discovery(self.profile, self._permissions)
        return discovery

    def _gateway_for(self, discovery: Discovery | None) -> TurnScope | None:
        """The gateway scope of a client: the served one, with what its searches unlocked."""
        base = self.tools.scope_of("gateway")
        return discovery.scope_for_turn(base) if discovery is not None and base is not None else None

    async def repeatable(self, name: str) -> bool:
        """Whether served tool ``name`` may run a call again without more effect (read-only or idempotent).

        A tool of a lazy server is known once its server runs, so asking starts it.
        """
        routed = await self._route(name, self.tools.scope_of("gateway"))
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

    def _sources(self) -> list[ToolSource]:
        settings, profile = self.settings, self.profile
        # A call the profile's ask rules hold back is put to the client that made it.
        permissions = self._permissions = replace(profile.permissions.to_permissions(), approver=self.approver)
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
        sources = []
        if settings.builtins:
            sources.append(ToolSource("builtin", self.registry, main, self._profiled(TurnScope()), permissions))
        if settings.skills:
            sources.append(ToolSource(SKILL_NAMESPACE, self.skill_registry, skills, TurnScope(agent=profile.name)))
        if settings.gateway is not False:
            sources.append(ToolSource("gateway", self.registry, main, self._gateway_scope(), permissions))
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
            Middleware(
                ResultGuard, max_bytes=settings.max_result_bytes, untrusted=settings.untrusted_tools, fence=_fence
            ),
        ]

    def _profiled(self, scope: TurnScope) -> TurnScope:
        # The same function the pipeline's PermissionFilter applies to every call.
        profile = self.profile
        return profile_scope(
            scope, agent=profile.name, allowed_tools=profile.allowed_tools, plan_mode=profile.plan_mode
        )

    def _gateway_scope(self) -> TurnScope:
        gateway = self.settings.gateway
        if isinstance(gateway, str):
            skill = self.skills.get(gateway)
            return self._profiled(
                TurnScope(skill_allowed=skill.allowed_tools, skill_disallowed=skill.disallowed_tools, skill=skill.name)
            )
        return self._profiled(TurnScope(skill_allowed=gateway if isinstance(gateway, tuple) else ()))

    def _gateway_named(self) -> set[str]:
        """The servers the gateway's skill or patterns name literally: lazy ones among them start with it."""
        scope = self._gateway_scope()
        return {server for pattern in scope.skill_allowed if (server := literal_server(pattern))}

    def _skills_reloaded(self, event: SkillsReloaded) -> None:
        tools = skill_tools(event.skills, self.tools.tools_for) if self.settings.skills else []
        self.skill_registry.replace_server(SKILL_NAMESPACE, tools, internal=False)
        if isinstance(self.settings.gateway, str) and self.settings.gateway in event.skills:
            self.tools.set_scope("gateway", self._gateway_scope())
        self.announcer.changed()

    # -- MCP handlers ----------------------------------------------------------------------------

    async def _list_tools(
        self,
        ctx: ServerRequestContext[Any],
        params: types.PaginatedRequestParams | None,
    ) -> types.ListToolsResult:
        discovery = await self._synced_discovery(ctx)
        return types.ListToolsResult(tools=self.tools.list_tools(self._gateway_for(discovery)))

    async def _route(self, name: str, gateway: TurnScope | None) -> tuple[ToolSource, str] | None:
        """The source and canonical name of served tool ``name``: the one routing of a served call.

        A tool of a lazy server is there once its server runs: needing the tool starts the server.
        """
        routed = self.tools.route(name, gateway)
        if routed is None and self.sessions is not None:
            await self.sessions.start_lazy([split_name(name)[0] or ""])
            routed = self.tools.route(name, gateway)
        return routed

    @staticmethod
    def _session_id(ctx: ServerRequestContext[Any]) -> str | None:
        """The MCP session of the request (None on connections without one)."""
        return getattr(client_of(ctx.session), "session_id", None)

    async def _synced_discovery(self, ctx: ServerRequestContext[Any]) -> Discovery | None:
        """The client's tool-search state; with shared sessions, as the last replica to serve it left it."""
        discovery = self._discovery(ctx)
        session_id = self._session_id(ctx)
        if discovery is not None and self.shared is not None and session_id is not None:
            discovery.restore(await self.shared.unlocked(session_id))
        return discovery

    async def _call_tool(
        self,
        ctx: ServerRequestContext[Any],
        params: types.CallToolRequestParams,
    ) -> types.CallToolResult | types.InputRequiredResult:
        discovery = await self._synced_discovery(ctx)
        routed = await self._route(params.name, self._gateway_for(discovery))
        unlocked = discovery.unlocked if discovery is not None else frozenset()
        with (
            self.approver.asking(ctx, params) as asking,
            self._relaying(routed, ctx),
            discovery.bound() if discovery is not None else nullcontext(),
        ):
            try:
                result = await self.tools.call(
                    params.name, params.arguments, progress=ctx.session.report_progress, routed=routed
                )
            except Exception:
                # The pipeline answers every failure with a result; this is the last line, not the plan.
                logger.exception("serving a call of %r failed", params.name)
                result = ToolResult.error(f"Tool {params.name!r} failed with an internal error; see the server log")
        if asking.pending is not None:  # an approval to ask for: the client calls again with the answer
            return asking.pending
        if discovery is not None and discovery.unlocked != unlocked:
            # Its search changed what this client may see; other clients' lists are as they were.
            session_id = self._session_id(ctx)
            if self.shared is not None and session_id is not None:
                await self.shared.save_unlocked(session_id, discovery.recent)
            await ctx.session.send_tool_list_changed()
        return result.to_mcp()

    @contextmanager
    def _relaying(self, routed: tuple[ToolSource, str] | None, ctx: ServerRequestContext[Any]) -> Iterator[None]:
        """While a gateway call runs, its server's requests go to this client; its result passes verbatim."""
        server = (
            routed[0].registry.spec(routed[1]).server if routed is not None and routed[0].kind == "gateway" else None
        )
        if server is None:
            yield
            return
        with (
            self.relay.calling(server, ctx),
            nullcontext() if self.settings.fence_gateway_results else verbatim_results(),
        ):
            yield

    # -- lifecycle -------------------------------------------------------------------------------

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
