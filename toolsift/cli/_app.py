"""The Typer application, global options, exit codes and error handling."""

from __future__ import annotations

import sys
import traceback
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from importlib import import_module
from importlib.metadata import version as _version
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Protocol, TypeVar, cast

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
from ._output import Output

if TYPE_CHECKING:
    # Typer ships its own click: its groups and commands are of these types, not of the click package's.
    from typer._click import Command as TyperClickCommand
    from typer._click import Context as TyperClickContext

__all__ = [
    "COMMANDS",
    "EXIT",
    "TRUST_ENV",
    "app",
    "load_commands",
    "main",
    "run_async",
    "state",
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
    "check": ("_check", "Validate the config and the skills; print every problem with its file, line and field."),
    "servers": (
        "_inspect",
        "Connect every configured server and show its status (transport, visibility, state, tools).",
    ),
    "tools": (
        "_inspect",
        "Which tools a turn would see (with --skill, after '/use SKILL'), marked internal or global.",
    ),
    "schemas": ("_inspect", "The exact tool payload a turn sends, with its size in bytes and estimated tokens."),
    "call": ("_call", "Call one tool through the five layers, as the model would in the agent's turn."),
    "serve": ("_serve", "Serve toolsift over MCP: `claude mcp add toolsift -- toolsift serve`."),
    "trust": (
        "_trust_command",
        "Trust this folder's config ahead of time; --revoke forgets it, --tools SERVER accepts changed tools.",
    ),
    "auth": ("_auth", "Sign in to OAuth servers, sign out, and see where you are signed in."),
    "mcp": ("_mcp", "Add, list, show and remove MCP servers in the project or user config."),
    "builtins": (
        "_builtins",
        "Switch the workspace tools (read_file, write_file, list_directory, exec_shell) on or off.",
    ),
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
