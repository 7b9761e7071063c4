"""The config a command acts on, passed through the trust rule, and the toolbox started from it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Collection, Mapping
from contextlib import asynccontextmanager, nullcontext
from typing import TYPE_CHECKING, NamedTuple

from .._folders import find_config
from ..config import ToolsiftConfig, TrustedLaunches, validate_config
from ..mcp_sessions import ClientCallbacks
from ._app import state
from ._output import Output, reported_here
from ._trust import ensure_trusted

if TYPE_CHECKING:
    from ..toolbox import Toolbox

__all__ = ["Admitted", "open_toolbox", "trusted_config"]


class Admitted(NamedTuple):
    """A config that passed the trust rule.

    Attributes:
        config: The usable config.
        dropped: Servers left out for a problem in their entry, with why.
        launches: What the file may launch from now on (None: anything, the person chose the file).
    """

    config: ToolsiftConfig
    dropped: Mapping[str, str]
    launches: TrustedLaunches | None


def _always(config: ToolsiftConfig) -> bool:
    return True


def trusted_config(
    out: Output, *, interactive: bool | None = None, starts_servers: Callable[[ToolsiftConfig], bool] = _always
) -> Admitted:
    """The config to use, loaded once and passed through the trust rule; every command that acts on it comes here.

    Commands that only show or check a file (``check``, ``skills``, ``trust``)
    read it without this: they start nothing and give no model anything.

    Args:
        out: Where a question or note goes.
        interactive: Ask at the terminal (default: when stdin is one).
        starts_servers: Whether the command starts the file's servers, given the file (no: only its other
            settings need trust).

    Raises:
        ConfigError: No usable file, or not trusted (see ``ensure_trusted``).
    """
    report = validate_config(find_config(state.config))
    config = report.usable()
    launches = ensure_trusted(
        config,
        out,
        named=state.config is not None,
        assume=state.trust_project,
        interactive=interactive,
        servers=starts_servers(config),
    )
    return Admitted(config, report.dropped, launches)


Needs = Callable[[ToolsiftConfig], Collection[str] | None]


def _everything(config: ToolsiftConfig) -> None:
    return None


def _started_only(config: ToolsiftConfig, namespaces: Collection[str]) -> ToolsiftConfig:
    """``config`` with the servers outside ``namespaces`` made lazy: known, but started only once needed."""
    servers = {
        name: server if server.namespace in namespaces else server.model_copy(update={"lazy": True})
        for name, server in config.servers.items()
    }
    return config.model_copy(update={"tools": config.tools.model_copy(update={"mcp_servers": servers})})


@asynccontextmanager
async def open_toolbox(
    out: Output, callbacks: ClientCallbacks | None = None, needs: Needs = _everything, *, report_failures: bool = True
) -> AsyncIterator[Toolbox]:
    """Start the configured toolbox, showing progress while servers connect; ``callbacks`` answer the servers.

    ``report_failures`` notes each server that did not start; a command that shows every server's state
    (``servers``) turns it off, so as not to say it twice.

    ``needs`` names, given the config, the namespaces of the servers the command needs: only those start (lazy
    ones included), the others stay idle until a call or ``/use`` needs them. None starts what the config
    starts: every server not marked lazy.
    """
    # Imported here: the commands that only read the config (``auth``) do not load the session layer.
    from ..mcp_sessions._internal import SessionState
    from ..toolbox import Toolbox

    admitted = trusted_config(out)
    config = admitted.config
    wanted = needs(config)
    if wanted is not None:
        config = _started_only(config, wanted)
    box = Toolbox(config, callbacks=callbacks, trust=admitted.launches)
    box.dropped = admitted.dropped
    starting = sorted(
        name
        for name, server in config.servers.items()
        if server.enabled and (server.namespace in wanted if wanted is not None else not server.lazy)
    )
    message = f"Connecting {len(starting)} MCP server(s) from {config.path}: {', '.join(starting) or 'none'} ..."
    # The lines below report every server that failed to start, once; the session layer's own log lines
    # saying the same (in its words, and more than once) are for library users and for --debug.
    if not out.err.is_terminal:
        out.note(message)
    with (
        nullcontext() if state.debug else reported_here("toolsift.mcp_sessions"),
        out.err.status(message) if out.err.is_terminal else nullcontext(),
    ):
        await box.__aenter__()
        try:
            await box.sessions.start_lazy(wanted or ())
        except BaseException:
            await box.__aexit__(None, None, None)
            raise
    try:
        for name, reason in box.dropped.items():
            out.note(f"server {name!r} was left out: {reason}", style="yellow")
        for row in box.sessions.status() if report_failures else ():
            if row.error and row.state is not SessionState.IDLE:  # idle: a lazy server waiting for its first need
                state_ = "down" if row.state is SessionState.ERROR else row.state.value
                out.note(f"server {row.server!r} is {state_}: {row.error}", style="yellow")
        yield box
    finally:
        await box.__aexit__(None, None, None)
