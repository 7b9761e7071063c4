"""The Typer application, global options, exit codes and error handling."""

from __future__ import annotations

import sys
import traceback
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager, nullcontext
from dataclasses import dataclass
from importlib.metadata import version as _version
from pathlib import Path
from typing import Annotated, NamedTuple, Protocol, TypeVar, cast

import anyio
import click
import typer

from .._exceptions import (
    AgentError,
    ConfigError,
    InvalidArguments,
    PermissionDenied,
    SkillError,
    ToolNotFound,
    ToolsiftError,
)
from ..config import ToolsiftConfig, TrustedLaunches, validate_config
from ..mcp_sessions import ClientCallbacks, SessionState
from ..toolbox import Toolbox, find_config
from ._output import Output, reported_here
from ._trust import TRUST_ENV, ensure_trusted

__all__ = ["EXIT", "Admitted", "app", "main", "open_toolbox", "run_async", "state", "trusted_config"]

T = TypeVar("T")

# Exit codes, documented in the README's CLI reference.
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


app = typer.Typer(
    name="toolsift",
    help="Many MCP servers, one agent: only the tools that matter this turn.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
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


@asynccontextmanager
async def open_toolbox(out: Output, callbacks: ClientCallbacks | None = None) -> AsyncIterator[Toolbox]:
    """Start the configured toolbox, showing progress while servers connect; ``callbacks`` answer the servers."""
    admitted = trusted_config(out)
    box = Toolbox(admitted.config, callbacks=callbacks, trust=admitted.launches)
    box.dropped = admitted.dropped
    count = len([s for s in box.config.servers.values() if s.enabled])
    message = f"Connecting {count} MCP server(s) from {box.config.path} ..."
    # The lines below report every server that failed to start, once; the session layer's own log lines
    # saying the same (in its words, and more than once) are for library users and for --debug.
    with nullcontext() if state.debug else reported_here("toolsift.mcp_sessions"):
        if out.err.is_terminal:
            with out.err.status(message):
                await box.__aenter__()
        else:
            out.note(message)
            await box.__aenter__()
    try:
        for name, reason in box.dropped.items():
            out.note(f"server {name!r} was left out: {reason}", style="yellow")
        for row in box.sessions.status():
            if row.error and row.state is not SessionState.IDLE:  # idle: a lazy server waiting for its first need
                out.note(f"server {row.server!r} is {row.state.value}: {row.error}", style="yellow")
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
