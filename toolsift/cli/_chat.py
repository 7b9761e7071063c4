"""``toolsift chat``: the agent REPL, with an LLM or with a person playing the model."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import anyio
import typer

from ..agent import ChatModel, Conversation, ToolCall, model_sampler, result_text
from ..agent.llm import load_model
from ..mcp_sessions import ClientCallbacks
from ._app import open_toolbox, run_async
from ._approve import TerminalApprover
from ._elicit import TerminalElicitor, log_printer
from ._hints import internal_hint
from ._interrupt import interruptible
from ._output import Output, progress_printer

# Registered on the root app when a command of this module runs (see _app.COMMANDS).
commands = typer.Typer(add_completion=False, rich_markup_mode=None)

MANUAL_HELP = """Manual mode: you play the model. Type
  call TOOL {"json": "arguments"}   to call a tool in the current turn's scope
  /use SKILL [args], /unuse, /skills, /tools, /instructions, /help, /quit
Ctrl-C while a call or an answer runs cancels it; at the prompt it leaves."""


@commands.command()
def chat(
    model: Annotated[
        str | None, typer.Option("--model", "-m", help="provider:model, e.g. openai:gpt-4.1-mini.")
    ] = None,
    base_url: Annotated[str | None, typer.Option("--base-url", help="OpenAI-compatible endpoint.")] = None,
    agent: Annotated[str | None, typer.Option("--agent", "-a", help="Agent profile from the config.")] = None,
) -> None:
    """The agent REPL: /use, /unuse, /skills and /tools work; without --model you play the model."""
    out = Output()
    chat_model = load_model(model, base_url=base_url) if model else None

    # Servers may ask the person (elicitation) and the model (sampling, with --model); their logs are shown.
    callbacks = ClientCallbacks(
        sampling=model_sampler(chat_model) if chat_model is not None else None,
        elicitation=TerminalElicitor(out, interactive=True),
        logging=log_printer(out),
        log_level="info",
    )

    async def body() -> None:
        async with open_toolbox(out, callbacks) as box:
            # The person at the prompt answers the calls the agent's ask rules hold back.
            approver = TerminalApprover(out, interactive=True, mask=box.sessions.mask_secrets)
            conversation = box.conversation(agent, approver=approver)
            out.note(MANUAL_HELP if chat_model is None else f"Chatting with {model}. /quit to leave.", style=None)
            hint = internal_hint(box.manager.servers.values())
            if hint:
                out.note(hint, style=None)
            while True:
                line = await anyio.to_thread.run_sync(_read_line, "you> " if sys.stdin.isatty() else "")
                if line is None or line.strip() in ("/quit", "/exit"):
                    return
                if line.strip() and await interruptible(_one_input(out, conversation, chat_model, line.strip())):
                    out.line("(cancelled)", style="yellow")

    run_async(body)


def _read_line(prompt: str) -> str | None:
    try:
        return input(prompt)
    except EOFError:
        return None


async def _one_input(out: Output, conversation: Conversation, model: ChatModel | None, line: str) -> None:
    if model is not None:
        reply = await conversation.send(line, model)
        for message in reply.tool_calls:
            out.note(f"[tool] {message.call.name} -> {'error' if message.result.is_error else 'ok'}")
        for notice in reply.notices:
            out.line(notice, style="yellow")
        out.line(reply.text)
        usage = reply.usage
        if usage.input_tokens:  # what the provider counted: the prompt cache's hit rate shows here
            cached = f"{usage.cached_share:.0%} from cache"
            out.note(f"[tokens] {usage.input_tokens:,} in, {cached}, {usage.output_tokens:,} out")
        return
    command = await conversation.handle_command(line)
    if command is not None:
        out.line(command.text, style=None if command.ok else "yellow")
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
