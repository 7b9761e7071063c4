"""The Typer application, global options, exit codes and error handling."""

from __future__ import annotations

import sys
import traceback
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Mapping
from contextlib import asynccontextmanager, nullcontext
from dataclasses import dataclass
from importlib import import_module
from importlib.metadata import version as _version
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NamedTuple, Protocol, TypeVar, cast

import anyio
import click
import typer
from typer.core import TyperCommand, TyperGroup

from .._exceptions import (
    AgentError,
    ConfigError,
    InvalidArguments,
    PermissionDenied,
    SkillError,
    ToolNotFound,
    ToolsiftError,
)
from ._output import Output, reported_here

if TYPE_CHECKING:
    # Typer ships its own click: its groups and commands are of these types, not of the click package's.
    from typer._click import Command as TyperClickCommand
    from typer._click import Context as TyperClickContext

    from ..config import ToolsiftConfig, TrustedLaunches
    from ..mcp_sessions import ClientCallbacks
    from ..toolbox import Toolbox

__all__ = [
    "COMMANDS",
    "EXIT",
    "TRUST_ENV",
    "Admitted",
    "app",
    "load_commands",
    "main",
    "open_toolbox",
    "run_async",
    "state",
    "trusted_config",
]

T = TypeVar("T")

TRUST_ENV = "TOOLSIFT_TRUST_PROJECT"  # what --trust-project reads from the environment

# Exit codes, documented in docs/cli.md.
EXIT = {
    "ok": 0,  # done
    "failed": 1,  # a tool returned an error, check found problems, a server is down
    "usage": 2,  # bad command line or malformed JSON argument
    "refused": 3,  # unknown tool or skill, permission denied, arguments that fail the schema
    "config": 4,  # no config, an invalid one, or (servers) a server left out for a problem in its entry
    "provider": 5,  # the LLM provider failed or is not set up
}

# Typer may bring its own copy of click, whose exceptions are not click's: take both, the copy's through a
# public name (typer.BadParameter derives from its ClickException).
_USAGE_ERRORS: tuple[type[Exception], ...] = tuple(
    {click.ClickException, *(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")}
)
_EXITS: tuple[type[Exception], ...] = tuple({click.exceptions.Exit, typer.Exit})
_INTERRUPTED: tuple[type[BaseException], ...] = tuple({click.exceptions.Abort, typer.Abort, KeyboardInterrupt})


class _ClickError(Protocol):
    exit_code: int

    def show(self) -> None: ...


# Every command: the module that defines it (on its own ``commands`` app) and the line ``toolsift --help`` shows.
# The modules pull in the MCP SDK, the config models, search or an LLM client: a command's module is imported
# when that command runs or shows its help, never for ``--help`` or ``--version`` (tests/cli pins each line to
# its command's own help).
COMMANDS: dict[str, tuple[str, str]] = {
    "chat": ("_chat", "The agent REPL: /use, /unuse, /skills and /tools work; without --model you play the model."),
    "demo": ("_demo", "Offline tour: a 200-tool server kept out of the context, skills, the five layers."),
    "check": ("_inspect", "Validate the config and the skills; print every problem with its file, line and field."),
    "servers": (
        "_inspect",
        "Connect every configured server and show its status (transport, visibility, state, tools).",
    ),
    "tools": (
        "_inspect",
        "Which tools a turn would see (with --skill, after '/use SKILL'), marked internal or global.",
    ),
    "schemas": ("_inspect", "The exact tool payload a turn sends, with its size in bytes and estimated tokens."),
    "call": ("_inspect", "Call one tool through the five layers, as the model would in the agent's turn."),
    "serve": ("_serve", "Serve toolsift over MCP: `claude mcp add toolsift -- toolsift serve`."),
    "trust": (
        "_trust_command",
        "Trust this folder's config ahead of time; --revoke forgets it, --tools SERVER accepts changed tools.",
    ),
    "auth": ("_auth", "Sign in to OAuth servers, sign out, and see where you are signed in."),
    "mcp": ("_mcp", "Add, list, show and remove MCP servers in the project or user config."),
    "skills": (
        "_skills",
        "List, show and create skills; see and approve the tools skills from MCP servers ask for.",
    ),
}


def load_commands(module: str) -> dict[str, TyperClickCommand]:
    """The commands a command module defines, by name (importing the module)."""
    built = typer.main.get_command(import_module(f"{__package__}.{module}").commands)
    # Several commands come as a group of them, one as itself.
    return dict(built.commands) if isinstance(built, TyperGroup) else {cast("str", built.name): built}


class _LazyGroup(TyperGroup):
    """The root group: lists every command from :data:`COMMANDS`, imports a command's module only to run it."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.loaded: set[str] = set()
        for name, (_, line) in COMMANDS.items():  # stand-ins for listing; resolve_command swaps in the real one
            self.commands.setdefault(name, TyperCommand(name, short_help=line, help=line))

    def resolve_command(
        self, ctx: TyperClickContext, args: list[str]
    ) -> tuple[str | None, TyperClickCommand | None, list[str]]:
        module = COMMANDS[args[0]][0] if args and args[0] in COMMANDS else None
        if module is not None and module not in self.loaded:
            self.commands.update(load_commands(module))
            self.loaded.add(module)
        return super().resolve_command(ctx, args)


# Plain click help: the rich panels would label every flag <bool>.
app = typer.Typer(
    name="toolsift",
    cls=_LazyGroup,
    help="Many MCP servers, one agent: only the tools that matter this turn.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


@dataclass
class _State:
    config: Path | None = None
    debug: bool = False
    trust_project: bool = False


state = _State()


def _show_version(value: bool) -> None:
    if value:
        typer.echo(f"toolsift {_version('toolsift')}")
        raise typer.Exit()


@app.callback()
def _root(
    config: Annotated[
        Path | None,
        typer.Option(
            "--config",
            "-c",
            envvar="TOOLSIFT_CONFIG",
            help="Config file (default ./toolsift.json, ./.mcp.json, "
            "./.vscode/mcp.json, ./.cursor/mcp.json, then the user "
            "config).",
        ),
    ] = None,
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks of errors.")] = False,
    trust_project: Annotated[
        bool,
        typer.Option(
            "--trust-project",
            envvar=TRUST_ENV,
            help="Start the servers of this folder's config without asking (for CI; see 'toolsift trust').",
        ),
    ] = False,
    version: Annotated[
        bool, typer.Option("--version", callback=_show_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    state.config = config
    state.debug = debug
    state.trust_project = trust_project


def run_async(function: Callable[[], Awaitable[T]]) -> T:
    """Run a command's async body on asyncio."""
    return anyio.run(function)


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
    from .._folders import find_config
    from ..config import validate_config
    from ._trust import ensure_trusted

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


Needs = Callable[["ToolsiftConfig"], "Collection[str] | None"]


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


def _exit_code(error: ToolsiftError) -> int:
    if isinstance(error, ConfigError):
        return EXIT["config"]
    if isinstance(error, ToolNotFound | PermissionDenied | InvalidArguments | SkillError):
        return EXIT["refused"]
    if isinstance(error, AgentError):
        return EXIT["provider"]
    return EXIT["failed"]


def main(argv: list[str] | None = None) -> None:
    """The ``toolsift`` console script: one clear line per error, meaningful exit codes."""
    try:
        # Without standalone mode click returns the code of a typer.Exit instead of raising it.
        returned = app(args=argv, prog_name="toolsift", standalone_mode=False)
        code = returned if isinstance(returned, int) else 0
    except _EXITS as exc:
        code = cast("_ClickError", exc).exit_code
    except _USAGE_ERRORS as exc:
        cast("_ClickError", exc).show()  # click's own "Usage: ... Error: ..." text
        code = cast("_ClickError", exc).exit_code  # 2 for a bad command line
    except _INTERRUPTED:
        code = 130
    except ToolsiftError as exc:
        if state.debug:
            traceback.print_exc()
        Output().error(str(exc))
        code = _exit_code(exc)
    except Exception as exc:
        if state.debug:
            traceback.print_exc()
        Output().error(f"{type(exc).__name__}: {exc} (run with --debug for the traceback)")
        code = EXIT["failed"]
    sys.exit(code)
