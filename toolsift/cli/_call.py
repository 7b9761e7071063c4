"""``call``: one tool called through the five layers, as the model would call it in the agent's turn."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from ..agent import result_text
from ..mcp_sessions import ClientCallbacks
from ._app import EXIT, run_async
from ._approve import TerminalApprover
from ._elicit import TerminalElicitor, log_printer
from ._output import JsonOption, Output, progress_printer
from ._toolbox import open_toolbox
from ._turn import AgentOption, ArgsOption, SkillOption, server_of, turn_conversation

# Registered on the root app when this command runs (see _app.COMMANDS).
commands = typer.Typer(add_completion=False, rich_markup_mode=None)


@commands.command()
def call(
    tool: Annotated[str, typer.Argument(metavar="TOOL", help="Tool name (server__tool, or a provider alias).")],
    arguments: Annotated[str, typer.Argument(metavar="JSON", help="Arguments as a JSON object.")] = "{}",
    skill: SkillOption = None,
    skill_arguments: ArgsOption = "",
    agent: AgentOption = None,
    json_mode: JsonOption = False,
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="Approve a call that the agent's ask rules hold back, without asking.")
    ] = False,
) -> None:
    """Call one tool through the five layers, as the model would in the agent's turn.

    Starts only the tool's server (SERVER__TOOL), and those the skill names. A call that an ask rule
    holds back is asked on the terminal (or approved by --yes).
    """
    out = Output(json_mode=json_mode)
    try:
        parsed = json.loads(arguments)
    except json.JSONDecodeError as exc:
        out.error(f"arguments for {tool!r} are not valid JSON: {exc}")
        raise typer.Exit(EXIT["usage"]) from None
    if not isinstance(parsed, dict):
        out.error(f"arguments for {tool!r} must be a JSON object, got {type(parsed).__name__}")
        raise typer.Exit(EXIT["usage"])

    callbacks = ClientCallbacks(elicitation=TerminalElicitor(out), logging=log_printer(out), log_level="info")

    async def body() -> int:
        async with open_toolbox(out, callbacks, server_of(tool)) as box:
            approver = TerminalApprover(out, assume_yes=yes, mask=box.sessions.mask_secrets)
            conversation, scope = await turn_conversation(box, agent, skill, skill_arguments, approver)
            result = await box.registry.execute(
                tool,
                parsed,
                scope,
                conversation.permissions,
                timeout=conversation.limits.call_timeout,
                progress=progress_printer(out, tool),
            )
            if json_mode:
                out.json(result.to_mcp().model_dump(mode="json", by_alias=True, exclude_none=True))
            else:
                out.line(result_text(result), style="red" if result.is_error else None)
            return EXIT["failed"] if result.is_error else EXIT["ok"]

    raise typer.Exit(run_async(body))
