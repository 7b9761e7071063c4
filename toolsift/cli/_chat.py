"""``toolsift chat``: the agent REPL, with an LLM or with a person playing the model."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Annotated

import anyio
import typer

from .._exceptions import AgentError, ConfigError
from .._files import write_atomically
from .._folders import user_folder
from ..agent import ChatModel, Conversation, ToolCall, model_sampler, result_text
from ..agent.llm import load_model
from ..mcp_sessions import ClientCallbacks
from ._app import run_async, state
from ._approve import TerminalApprover
from ._elicit import TerminalElicitor, log_printer
from ._hints import internal_hint
from ._interrupt import interruptible
from ._output import Output, progress_printer
from ._toolbox import open_toolbox

if TYPE_CHECKING:
    from ..skills import SkillsReloaded

# Registered on the root app when a command of this module runs (see _app.COMMANDS).
commands = typer.Typer(add_completion=False, rich_markup_mode=None)

MANUAL_HELP = """Manual mode: you play the model. Type
  call TOOL {"json": "arguments"}   to call a tool in the current turn's scope
  /use SKILL [args], /unuse, /skills, /tools, /instructions, /help, /quit
Ctrl-C while a call or an answer runs cancels it; at the prompt it leaves."""

# What /help adds to the conversation's own commands: the chat's.
CHAT_HELP = """  call TOOL {"json": "args"}  call a tool yourself (manual mode, without --model)
  /quit                     leave the chat (Ctrl-D too)"""

HISTORY_FILE = "chat_history"  # in the user folder: the lines typed at the prompt, for the arrow keys
HISTORY_LENGTH = 1000


@commands.command()
def chat(
    model: Annotated[
        str | None,
        typer.Option(
            "--model",
            "-m",
            help="provider:model, e.g. openai:gpt-4.1-mini; scripted:FILE answers from a script, offline."
            " Default: the agent profile's model.",
        ),
    ] = None,
    base_url: Annotated[str | None, typer.Option("--base-url", help="OpenAI-compatible endpoint.")] = None,
    agent: Annotated[str | None, typer.Option("--agent", "-a", help="Agent profile from the config.")] = None,
) -> None:
    """The agent REPL: /use, /unuse, /skills and /tools work; without --model you play the model.

    Edits of the config and the skills apply from the next input, and are reported on stderr.
    """
    out = Output()
    model = model or _profile_model(agent)
    chat_model = load_model(model, base_url=base_url) if model else None

    # Servers may ask the person (elicitation) and the model (sampling, with --model); their logs are shown.
    callbacks = ClientCallbacks(
        sampling=model_sampler(chat_model) if chat_model is not None else None,
        elicitation=TerminalElicitor(out, interactive=True),
        logging=log_printer(out),
        log_level="info",
    )

    async def body() -> None:
        async with open_toolbox(out, callbacks) as box, anyio.create_task_group() as watchers:
            # The person at the prompt answers the calls the agent's ask rules hold back.
            approver = TerminalApprover(out, interactive=True, mask=box.sessions.mask_secrets)
            conversation = box.conversation(agent, approver=approver)  # the profile's instructions
            out.note(MANUAL_HELP if chat_model is None else f"Chatting with {model}. /quit to leave.", style=None)
            hint = internal_hint(box.manager.servers.values())
            if hint:
                out.note(hint, style=None)
            # Editing a skill or the config and trying again is the everyday loop: the next input sees the edit.
            unsubscribe = (
                box.sessions.subscribe(lambda event: _server_reloaded(out, str(event), event.error)),
                box.skills.subscribe(lambda event: _skills_reloaded(out, event)),
            )
            await watchers.start(box.watch)
            with _line_editing():
                while True:
                    line = await anyio.to_thread.run_sync(_read_line, "you> " if sys.stdin.isatty() else "")
                    if line is None or line.strip() in ("/quit", "/exit"):
                        break
                    if line.strip() and await interruptible(_one_input(out, conversation, chat_model, line.strip())):
                        out.line("(cancelled)", style="yellow")
            for stop in unsubscribe:  # leaving closes every server: that is no edit to report
                stop()
            watchers.cancel_scope.cancel()

    run_async(body)


def _profile_model(agent: str | None) -> str | None:
    """The model the agent profile names (``agents.<name>.model``), read before the servers start."""
    from .._folders import find_config
    from ..config import validate_config

    return validate_config(find_config(state.config)).usable().agent(agent).model


@contextlib.contextmanager
def _line_editing() -> Iterator[None]:
    """Arrow keys and a history kept in the user folder, at a terminal only: piped input is read as it comes.

    ``readline`` changes how every ``input()`` of the process reads, so it is loaded only for a person typing.
    """
    if not sys.stdin.isatty():
        yield
        return
    try:
        import readline
    except ImportError:  # a Python built without it (Windows): plain input
        yield
        return
    history = user_folder() / HISTORY_FILE
    with contextlib.suppress(OSError):  # none yet, or unreadable: start afresh
        readline.read_history_file(history)
    readline.set_history_length(HISTORY_LENGTH)
    try:
        yield
    finally:
        with contextlib.suppress(OSError):  # a read-only home loses the history, not the chat
            history.parent.mkdir(parents=True, exist_ok=True)
            _save_history(readline, history)


def _save_history(readline: ModuleType, history: Path) -> None:
    """The last lines typed, in GNU readline's file format, written as every file of toolsift's (never through a link).

    libedit (macOS) keeps a format of its own, so it writes its file itself.
    """
    if "libedit" in (readline.__doc__ or ""):
        readline.write_history_file(history)
        return
    count = readline.get_current_history_length()
    lines = [readline.get_history_item(index) for index in range(max(1, count - HISTORY_LENGTH + 1), count + 1)]
    write_atomically(history, "".join(f"{line}\n" for line in lines), what="the chat history")


def _read_line(prompt: str) -> str | None:
    try:
        return input(prompt)
    except EOFError:
        return None


def _server_reloaded(out: Output, event: str, error: ConfigError | None) -> None:
    """Say what a config edit changed among the servers (a rejected edit with its problems)."""
    out.note(f"[reload] {event}" + (f": {error}" if error is not None else ""), style="yellow")


def _skills_reloaded(out: Output, event: SkillsReloaded) -> None:
    """Say which skills an edit added, changed or removed, and the problems of the new scan."""
    parts = [
        f"{what} {', '.join(names)}"
        for what, names in (("added", event.added), ("changed", event.changed), ("removed", event.removed))
        if names
    ]
    out.note(f"[reload] skills: {'; '.join(parts) or 'problems changed'}", style="yellow")
    for problem in event.problems:
        out.note(f"  {problem.message}", style="yellow")


async def _one_input(out: Output, conversation: Conversation, model: ChatModel | None, line: str) -> None:
    if model is not None:
        try:
            reply = await conversation.send(line, model)
        except AgentError as exc:  # the provider failed this once: the person may try again
            out.line(str(exc), style="red")
            return
        for message in reply.tool_calls:
            out.note(f"[tool] {message.call.name} -> {'error' if message.result.is_error else 'ok'}")
        for notice in reply.notices:
            out.line(notice, style="yellow")
        out.line(reply.text)
        if reply.command and _is_help(line):
            out.line(CHAT_HELP)
        usage = reply.usage
        if usage.input_tokens:  # what the provider counted: the prompt cache's hit rate shows here
            cached = f"{usage.cached_share:.0%} from cache"
            out.note(f"[tokens] {usage.input_tokens:,} in, {cached}, {usage.output_tokens:,} out")
        return
    command = await conversation.handle_command(line)
    if command is not None:
        out.line(command.text, style=None if command.ok else "yellow")
        if _is_help(line):
            out.line(CHAT_HELP)
        return
    if not line.startswith("call "):
        out.line("Not a command. " + MANUAL_HELP, style="yellow")
        return
    name, _, raw = line[len("call ") :].strip().partition(" ")
    try:
        parsed = json.loads(raw or "{}")
    except (json.JSONDecodeError, RecursionError) as exc:
        out.line(f"arguments are not valid JSON: {exc}", style="yellow")
        return
    arguments = parsed if isinstance(parsed, dict) else raw
    message = await conversation.call_tool(
        ToolCall(id="manual", name=name, arguments=arguments), progress=progress_printer(out, name)
    )
    for notice in conversation.take_notices():
        out.line(notice, style="yellow")
    out.line(result_text(message.result), style="red" if message.result.is_error else None)


def _is_help(line: str) -> bool:
    return line.split(maxsplit=1)[0] == "/help"
