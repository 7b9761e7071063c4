"""``toolsift demo``: the offline, scripted tour over the repository's examples.

It starts the example servers (a 214-tool orchestration server kept internal,
a small global one, and a notes server over HTTP on 127.0.0.1), loads the
example skills, shows side by side what the model would see with no skill,
after ``/use flow-memory``, after ``/use code-assist`` and with everything
registered, makes a permitted call and two denied ones, and shuts down.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import typer

from .._exceptions import ConfigError, PermissionDenied
from .._fence import split_fence
from .._tokens import estimated_tokens
from ..agent import result_text
from ..registry import TurnScope
from ..toolbox import Toolbox
from ._app import EXIT, run_async
from ._output import Output

# Registered on the root app when a command of this module runs (see _app.COMMANDS).
commands = typer.Typer(add_completion=False, rich_markup_mode=None)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
# The notes server's start is the event waited for: a child process that imports the MCP SDK, which on a
# loaded machine takes many times its usual second or two. Only a server that never comes up meets this.
READY_SECONDS = 180


@asynccontextmanager
async def notes_server(out: Output) -> AsyncIterator[str]:
    """Start the example notes server over HTTP on a free loopback port; yield its URL."""
    with tempfile.TemporaryDirectory(prefix="toolsift-demo-") as folder:
        ready = Path(folder) / "url"
        command = [sys.executable, str(EXAMPLES / "servers" / "notes_http.py"), "--ready-file", str(ready)]
        async with await anyio.open_process(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) as process:
            try:
                with anyio.move_on_after(READY_SECONDS):
                    while not ready.exists():
                        if process.returncode is not None:
                            raise ConfigError(f"the example notes server exited with code {process.returncode}")
                        await anyio.sleep(0.05)
                if not ready.exists():
                    raise ConfigError(f"the example notes server did not start within {READY_SECONDS} s")
                url = ready.read_text().strip()
                out.note(f"notes server listening on {url}")
                yield url
            finally:
                if process.returncode is None:
                    with contextlib.suppress(ProcessLookupError):  # it may exit between the check and the signal
                        process.terminate()
                with anyio.move_on_after(5):
                    await process.wait()


def _footprint(schemas: list[dict[str, object]]) -> tuple[int, int, int]:
    text = json.dumps(schemas, ensure_ascii=False)
    return len(schemas), len(text.encode()), estimated_tokens(text)


@commands.command()
def demo() -> None:
    """Offline tour: a 200-tool server kept out of the context, skills, the five layers."""
    out = Output()
    config = EXAMPLES / "toolsift.json"
    if not config.is_file():
        raise ConfigError(
            "the demo needs the repository's examples/ folder: run it from a source checkout "
            "installed with pip install -e .",
            path=config,
        )

    async def body() -> None:
        async with notes_server(out) as url:
            os.environ["TOOLSIFT_NOTES_URL"] = url
            os.environ.setdefault("TOOLSIFT_PYTHON", sys.executable)
            box = Toolbox.from_config(config)
            out.note(f"starting {len(box.config.servers)} MCP servers from {config}")
            async with box:
                await _tour(out, box)

    run_async(body)
    raise typer.Exit(EXIT["ok"])


async def _tour(out: Output, box: Toolbox) -> None:
    rows = box.sessions.status()
    out.table(
        "1. Every configured server has a session",
        ["server", "transport", "visibility", "state", "tools"],
        [(r.server, r.transport, r.visibility, r.state.value, r.tools) for r in rows],
    )
    down = [r for r in rows if r.error]
    if down:
        raise ConfigError("example server(s) failed to start: " + "; ".join(f"{r.server}: {r.error}" for r in down))

    chat = box.conversation()

    def scoped() -> tuple[int, int, int]:
        # The turn's scope: what a conversation starting here is shown (a running one keeps earlier tools declared).
        return _footprint(box.registry.schemas_for_tools(chat.turn().scope, "openai"))

    views: list[tuple[str, tuple[int, int, int]]] = [("no skill", scoped())]
    await chat.handle_command("/use flow-memory")
    memory_scope = chat.scope()
    views.append(("/use flow-memory", scoped()))
    await chat.handle_command("/use code-assist Refactor the auth module")
    views.append(("/use code-assist", scoped()))
    everything = TurnScope(skill_allowed=("*", *(f"{server}__*" for server in box.registry.servers())))
    views.append(("everything registered", _footprint(box.registry.schemas_for_tools(everything, "openai"))))
    baseline = views[-1][1][1]
    out.line()
    out.table(
        "2. What the model sees (OpenAI format)",
        ["turn", "tools", "bytes", "~tokens", "share"],
        [(name, count, f"{size:,}", f"{tokens:,}", f"{size / baseline:.1%}") for name, (count, size, tokens) in views],
    )

    out.line()
    out.line("3. Calls pass the five layers", style="bold")
    permitted = await box.registry.execute(
        "claude-flow__memory_store", {"key": "demo/greeting", "value": "hello from toolsift"}, memory_scope
    )
    text = result_text(permitted)
    fenced = split_fence(text)
    first = (fenced[1] if fenced is not None else text).partition("\n")[0]
    shown = f"(fenced as untrusted) {first}" if fenced is not None else first
    out.line(f"  permitted  claude-flow__memory_store under /use flow-memory -> {shown[:140]}")
    for name, scope, label in (
        ("general__echo", memory_scope, "under /use flow-memory"),
        ("claude-flow__swarm_init", TurnScope(), "with no skill"),
    ):
        try:
            await box.registry.execute(name, {"text": "hi"} if name == "general__echo" else {}, scope)
        except PermissionDenied as exc:
            out.line(f"  denied     {name} {label} -> layer {exc.layer}: {exc.reason}")
    out.line()
    out.line("Shutting down: every session closes and every child process is reaped.", style="dim")
