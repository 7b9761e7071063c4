"""The gateway's resources, resource templates, prompts, completions and log level: the upstream servers', proxied.

Which servers: those whose tools the gateway serves, and every
``internalOnly: false`` server; an internal server no gateway rule names
stays hidden, its resources and prompts too.

Names: prompts are namespaced like tools (``<server>__<prompt>``), or keep
their own name when ``serve.prefixNames`` is false and no other served prompt
has it. Resources keep their URIs (a URI names its resource already); a read,
subscription or completion goes to the server that lists the URI, else to the
one whose template matches it, else, when only one server offers resources,
to that one. Results pass through unchanged.
"""

from __future__ import annotations

import logging
import re
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from functools import lru_cache
from typing import Any, final

import mcp.types as types
from mcp import Client, MCPError
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp.types.version import MODERN_PROTOCOL_VERSIONS

from .._exceptions import ServerDraining, ServerUnavailable
from ..mcp_sessions import McpSession
from ._exchange import request_as_client
from ._relay import ClientRelay

__all__ = ["GatewayProxy"]

logger = logging.getLogger("toolsift.serve")

RESOURCE_NOT_FOUND = -32002


@contextmanager
def _legacy_method(client: Client, method: str) -> Iterator[None]:
    """Call a method the SDK deprecates for 2026-07-28, and say so when the connection speaks it.

    Raises:
        MCPError: The connection speaks 2026-07-28, where the method is gone (connect with ``protocol: legacy``).
    """
    if client.protocol_version in MODERN_PROTOCOL_VERSIONS:
        raise MCPError(
            types.METHOD_NOT_FOUND,
            f"{method} does not exist in protocol {client.protocol_version}; "
            "connect to this server with 'protocol: legacy' to use it",
        )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        yield


@lru_cache(maxsize=1024)
def _template_pattern(template: str) -> re.Pattern[str]:
    """A regular expression of the URIs an RFC 6570 template produces (enough to route by)."""
    parts = re.split(r"(\{[^}]*\})", template)
    regex = "".join(
        (".*" if part[1:2] in "+#?&/;." and len(part) > 2 else "[^/?#]+") if part.startswith("{") else re.escape(part)
        for part in parts
    )
    return re.compile(regex + r"\Z")


def _unavailable(exc: Exception) -> MCPError:
    return MCPError(types.INTERNAL_ERROR, str(exc))


@final
class GatewayProxy:
    """Answers the gateway's non-tool requests from the upstream sessions.

    Args:
        sessions: The running sessions by server name (an ``McpServerManager``).
        servers: The names of the servers proxied now, in config order.
        relay: Where subscriptions and log levels of downstream clients are kept.
        prefix: Namespace prompt names with ``<server>__`` even where they are unique.
    """

    def __init__(
        self,
        sessions: Mapping[str, McpSession],
        servers: Callable[[], Iterable[str]],
        relay: ClientRelay,
        *,
        prefix: bool = True,
    ) -> None:
        self._sessions = sessions
        self._servers = servers
        self._relay = relay
        self._prefix = prefix

    def _proxied(self) -> list[McpSession]:
        return [self._sessions[name] for name in self._servers() if name in self._sessions]

    def prompt_signature(self) -> tuple[str, ...]:
        """What differs whenever the served prompt list does (names and definitions)."""
        return tuple(f"{name}={prompt.model_dump_json()}" for name, (_, prompt) in self._prompts().items())

    def resource_signature(self) -> tuple[str, ...]:
        """What differs whenever the served resource or template list does."""
        return tuple(
            item.model_dump_json()
            for session in self._proxied()
            for item in (*session.catalog.resources, *session.catalog.resource_templates)
        )

    # -- prompts -----------------------------------------------------------------------------

    def _prompts(self) -> dict[str, tuple[McpSession, types.Prompt]]:
        """Served prompt name -> (session, the upstream prompt)."""
        entries = [(session, prompt) for session in self._proxied() for prompt in session.catalog.prompts]
        bare_counts: dict[str, int] = {}
        for _, prompt in entries:
            bare_counts[prompt.name] = bare_counts.get(prompt.name, 0) + 1
        served: dict[str, tuple[McpSession, types.Prompt]] = {}
        for session, prompt in entries:
            bare = not self._prefix and bare_counts[prompt.name] == 1
            served[prompt.name if bare else f"{session.config.namespace}__{prompt.name}"] = (session, prompt)
        return served

    async def list_prompts(
        self,
        ctx: ServerRequestContext[Any],
        params: types.PaginatedRequestParams | None,
    ) -> types.ListPromptsResult:
        return types.ListPromptsResult(
            prompts=[prompt.model_copy(update={"name": name}) for name, (_, prompt) in self._prompts().items()]
        )

    def _prompt(self, name: str) -> tuple[McpSession, types.Prompt]:
        found = self._prompts().get(name)
        if found is None:
            raise MCPError(types.INVALID_PARAMS, f"Unknown prompt {name!r}; list the prompts to see their names")
        return found

    async def get_prompt(
        self,
        ctx: ServerRequestContext[Any],
        params: types.GetPromptRequestParams,
    ) -> types.GetPromptResult | types.InputRequiredResult:
        session, prompt = self._prompt(params.name)
        named = types.GetPromptRequestParams(
            name=prompt.name,
            arguments=params.arguments,
            input_responses=params.input_responses,
            request_state=params.request_state,
        )
        try:
            return await request_as_client(
                session,
                ctx,
                "prompts/get",
                named,
                lambda client: client.get_prompt(prompt.name, params.arguments),
                types.GetPromptResult,
                types.GetPromptResult(messages=[]),
            )
        except (ServerUnavailable, ServerDraining) as exc:
            raise _unavailable(exc) from exc

    # -- resources ---------------------------------------------------------------------------

    async def list_resources(
        self,
        ctx: ServerRequestContext[Any],
        params: types.PaginatedRequestParams | None,
    ) -> types.ListResourcesResult:
        return types.ListResourcesResult(
            resources=[resource for session in self._proxied() for resource in session.catalog.resources]
        )

    async def list_resource_templates(
        self,
        ctx: ServerRequestContext[Any],
        params: types.PaginatedRequestParams | None,
    ) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(
            resource_templates=[
                template for session in self._proxied() for template in session.catalog.resource_templates
            ]
        )

    def owner(self, uri: str) -> McpSession:
        """The session a resource URI goes to.

        Raises:
            MCPError: No proxied server offers it (resource not found).
        """
        proxied = self._proxied()
        for session in proxied:
            if any(str(resource.uri) == uri for resource in session.catalog.resources):
                return session
        for session in proxied:
            if any(_template_pattern(t.uri_template).match(uri) for t in session.catalog.resource_templates):
                return session
        offering = [session for session in proxied if session.catalog.resources or session.catalog.resource_templates]
        if len(offering) == 1:
            return offering[0]
        raise MCPError(
            RESOURCE_NOT_FOUND,
            f"Resource {uri!r} not found: no server behind this gateway lists it or a template that matches it",
            data={"uri": uri},
        )

    async def read_resource(
        self,
        ctx: ServerRequestContext[Any],
        params: types.ReadResourceRequestParams,
    ) -> types.ReadResourceResult | types.InputRequiredResult:
        uri = str(params.uri)
        try:
            return await request_as_client(
                self.owner(uri),
                ctx,
                "resources/read",
                types.ReadResourceRequestParams(
                    uri=uri, input_responses=params.input_responses, request_state=params.request_state
                ),
                lambda client: client.read_resource(uri),
                types.ReadResourceResult,
                types.ReadResourceResult(contents=[]),
            )
        except (ServerUnavailable, ServerDraining) as exc:
            raise _unavailable(exc) from exc

    async def subscribe(
        self,
        ctx: ServerRequestContext[Any],
        params: types.SubscribeRequestParams,
    ) -> types.EmptyResult:
        uri = str(params.uri)
        try:
            client = await self.owner(uri).client("handshake")
            with _legacy_method(client, "resources/subscribe"):
                await client.subscribe_resource(uri)
        except (ServerUnavailable, ServerDraining) as exc:
            raise _unavailable(exc) from exc
        self._relay.subscribe(ctx, uri)
        return types.EmptyResult()

    async def unsubscribe(
        self,
        ctx: ServerRequestContext[Any],
        params: types.UnsubscribeRequestParams,
    ) -> types.EmptyResult:
        uri = str(params.uri)
        if self._relay.unsubscribe(ctx, uri):
            try:
                client = await self.owner(uri).client("handshake")
                with _legacy_method(client, "resources/unsubscribe"):
                    await client.unsubscribe_resource(uri)
            except (ServerUnavailable, ServerDraining) as exc:
                raise _unavailable(exc) from exc
        return types.EmptyResult()

    # -- completion and logging --------------------------------------------------------------

    async def complete(
        self,
        ctx: ServerRequestContext[Any],
        params: types.CompleteRequestParams,
    ) -> types.CompleteResult:
        ref = params.ref
        if isinstance(ref, types.PromptReference):
            session, prompt = self._prompt(ref.name)
            ref = ref.model_copy(update={"name": prompt.name})
        else:
            session = self.owner(ref.uri)
        context = params.context.arguments if params.context is not None else None
        try:
            client = await session.client()
            return await client.complete(ref, {"name": params.argument.name, "value": params.argument.value}, context)
        except (ServerUnavailable, ServerDraining) as exc:
            raise _unavailable(exc) from exc

    async def set_level(
        self,
        ctx: ServerRequestContext[Any],
        params: types.SetLevelRequestParams,
    ) -> types.EmptyResult:
        self._relay.listen(ctx, params.level)
        for session in self._proxied():
            try:
                # 2026-07-28 has no such request: log messages are asked for per request (ClientCallbacks.log_level).
                client = await session.client("handshake")
                if client.protocol_version not in MODERN_PROTOCOL_VERSIONS:
                    with _legacy_method(client, "logging/setLevel"):
                        await client.set_logging_level(params.level)
            except (MCPError, ServerUnavailable, ServerDraining) as exc:
                logger.info("MCP server %r did not take log level %r: %s", session.name, params.level, exc)
        return types.EmptyResult()
