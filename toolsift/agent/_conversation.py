"""The conversation helper: slash commands, the turn's scope and schemas, tool calls, limits."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import anyio

from .._exceptions import LimitExceeded, SkillError, ToolsiftError
from ..config import AgentConfig, LimitsConfig
from ..pipeline import Pipeline
from ..registry import (
    CallHandler,
    CallRecord,
    Permissions,
    ProgressCallback,
    ToolRegistry,
    ToolResult,
    TurnScope,
    literal_server,
)
from ..search import Discovery
from ._active_skill import ActiveSkill, SkillSource
from ._cap import cap_result, result_cap
from ._commands import Command, parse_command
from ._messages import AssistantMessage, Message, ToolCall, ToolMessage, UserMessage

__all__ = ["AgentReply", "ChatModel", "CommandReply", "Conversation", "Turn"]


class ChatModel(Protocol):
    """An LLM behind a provider SDK, as the agent loop drives it.

    Attributes:
        format: The schema format its tools use (``openai``, ``anthropic``, ...).
        images_in_tool_results: Whether tool results may carry images.
    """

    format: str

    async def complete(
        self, instructions: str, history: Sequence[Message], tools: list[dict[str, Any]]
    ) -> AssistantMessage:
        """Send the conversation and return the model's answer.

        Raises:
            AgentError: When the provider fails (the message says which and why).
        """
        ...


@dataclass(frozen=True)
class Turn:
    """What the model gets for one round: instructions, tools and the scope behind them."""

    instructions: str
    tools: list[dict[str, Any]]
    scope: TurnScope


@dataclass(frozen=True)
class CommandReply:
    """The answer to a slash command, for the user (never sent to the model)."""

    text: str
    ok: bool = True


@dataclass
class AgentReply:
    """The outcome of one user message.

    Attributes:
        text: What to show the user.
        rounds: Model round trips that asked for tools.
        tool_calls: Every tool message produced, in order.
        limit: The limit that stopped the loop, if one did.
        command: True when the input was a slash command.
        notices: What the user should know that is not the model's answer, such
            as the active skill being dropped because its SKILL.md was removed or broke.
    """

    text: str
    rounds: int = 0
    tool_calls: list[ToolMessage] = field(default_factory=list)
    limit: LimitExceeded | None = None
    command: bool = False
    notices: list[str] = field(default_factory=list)


class Conversation:
    """One agent conversation over a registry and a set of skills.

    It turns user input into either a command answer or a message for the model,
    keeps the active skill, builds each turn's scope, instructions and schemas,
    and runs each tool call the model makes, as a ``CallRecord`` with the turn's
    scope and the caller's permissions, through a pipeline (the same path a
    served call takes; see ``toolsift.pipeline``). Failures and denials become
    tool results the model reads; nothing is dropped. A result larger than
    ``limits.max_result_tokens`` / ``max_result_bytes`` is cut, with a note.

    The active skill is looked up by name in ``skills`` for every scope, turn
    and call, so its current ``allowed-tools`` apply; one that was removed or no
    longer parses is dropped with a notice (:meth:`take_notices`,
    ``AgentReply.notices``). A changed body is rendered again by
    :meth:`refresh_skill`, which :meth:`send` runs before every round.

    Args:
        registry: The tools.
        skills: Where ``/use`` finds skills.
        agent: The agent profile's name (for audit records).
        allowed_tools: Layer 3, the agent's allowlist (``None``: no limit).
        permissions: The caller's layer-5 permissions.
        limits: Round and time limits.
        plan_mode: Offer and allow read-only tools only.
        instructions: Base instructions placed before the skill's.
        call_handler: Runs a call record; by default a pipeline of just the
            registry (``Pipeline.for_registry(registry).handle``); pass another
            pipeline's ``handle`` to add stages.
        discovery: Pinned tools and what ``search_tools`` unlocked; its tools
            join every turn's scope (layers 3 and 4 still apply).
        context: Fetches text for the instructions once per user message
            (the resources of ``resources: true`` servers).
        server_instructions: Instructions of MCP servers by name; a turn
            that shows a server's tools carries its instructions.
        start_servers: Starts lazy servers by namespace; ``/use`` calls it with
            the servers a skill's allowed-tools name literally (``github__*``),
            so their tools are there for the skill's first turn.
    """

    def __init__(
        self,
        registry: ToolRegistry,
        skills: SkillSource | None = None,
        *,
        agent: str | None = None,
        allowed_tools: Sequence[str] | None = None,
        permissions: Permissions | None = None,
        limits: LimitsConfig | None = None,
        plan_mode: bool = False,
        instructions: str = "",
        call_handler: CallHandler | None = None,
        discovery: Discovery | None = None,
        context: Callable[[], Awaitable[str]] | None = None,
        start_servers: Callable[[Sequence[str]], Awaitable[object]] | None = None,
        server_instructions: Callable[[], Mapping[str, str]] | None = None,
    ) -> None:
        self.registry = registry
        self.agent = agent
        self.allowed_tools = tuple(allowed_tools) if allowed_tools is not None else None
        self.permissions = permissions or Permissions()
        self.limits = limits or LimitsConfig()
        self.plan_mode = plan_mode
        self.instructions = instructions
        self.history: list[Message] = []
        self.discovery = discovery
        self._handler = call_handler or Pipeline.for_registry(registry).handle
        self._context = context
        self._context_text = ""
        self._start_servers = start_servers
        self._server_instructions = server_instructions
        self._skill = ActiveSkill(skills)
        # Validate the allowlist now, so a bad pattern fails at construction with its origin named.
        self.scope()

    @classmethod
    def for_agent(
        cls,
        registry: ToolRegistry,
        skills: SkillSource | None,
        agent: AgentConfig,
        *,
        instructions: str = "",
        call_handler: CallHandler | None = None,
        discovery: Discovery | None = None,
        context: Callable[[], Awaitable[str]] | None = None,
        permissions: Permissions | None = None,
        start_servers: Callable[[Sequence[str]], Awaitable[object]] | None = None,
        server_instructions: Callable[[], Mapping[str, str]] | None = None,
    ) -> Conversation:
        """A conversation with an agent profile's allowlist, permissions, limits and plan mode.

        ``permissions`` replaces the profile's own (to give them an approver, say).
        """
        permissions = permissions if permissions is not None else agent.permissions.to_permissions()
        return cls(
            registry,
            skills,
            agent=agent.name,
            allowed_tools=agent.allowed_tools,
            permissions=permissions,
            limits=agent.limits,
            plan_mode=agent.plan_mode,
            instructions=instructions,
            call_handler=call_handler,
            discovery=discovery,
            context=context,
            start_servers=start_servers,
            server_instructions=server_instructions,
        )

    # -- state ---------------------------------------------------------------------------------

    @property
    def skills(self) -> SkillSource | None:
        """Where ``/use`` finds skills."""
        return self._skill.source

    @property
    def active_skill(self) -> Any | None:
        """The skill ``/use`` activated, as its source holds it now, or None (see :meth:`take_notices`)."""
        return self._skill.current()

    def take_notices(self) -> list[str]:
        """Notices for the user since the last call (a dropped skill), oldest first; :meth:`send` takes them."""
        return self._skill.take_notices()

    def scope(self) -> TurnScope:
        """The scope of the next turn: agent allowlist, the active skill as it is now, plan mode."""
        base = TurnScope(
            agent_allowed=self.allowed_tools,
            agent=self.agent,
            read_only=self.plan_mode,
            **_skill_fields(self._skill.current()),
        )
        return self.discovery.scope_for_turn(base) if self.discovery is not None else base

    def turn(self, format: str = "openai", *, strict: bool = False) -> Turn:
        """Instructions, schemas and scope for the next model round.

        The scope follows the skill's SKILL.md as it is now; the skill's
        instructions are as last rendered (:meth:`refresh_skill` renders a changed body).
        """
        scope = self.scope()
        parts = [self.instructions.strip()] if self.instructions.strip() else []
        if scope.skill is not None:
            parts.append(f"# Skill: {scope.skill}\n\n{self._skill.instructions.strip()}")
        parts += self._instructions_of_servers(scope)
        if self._context_text:
            parts.append(self._context_text)
        if self.plan_mode:
            parts.append("Plan mode: only read-only tools are available; propose changes instead of making them.")
        tools = self.registry.schemas_for_tools(scope, format, strict=strict)
        return Turn(instructions="\n\n".join(parts), tools=tools, scope=scope)

    def _instructions_of_servers(self, scope: TurnScope) -> list[str]:
        """The instructions of the servers whose tools this turn shows, in the order the tools come."""
        given = self._server_instructions() if self._server_instructions is not None else {}
        if not given:
            return []
        shown = dict.fromkeys(tool.spec.server or "" for tool in self.registry.visible_tools(scope))
        return [f"# MCP server {server}\n\n{given[server]}" for server in shown if server in given]

    # -- commands ---------------------------------------------------------------------------------

    async def handle_command(self, text: str) -> CommandReply | None:
        """Answer a slash command, or return None when ``text`` is a message for the model.

        Errors (unknown skill, missing arguments, a template that fails) come back
        as a reply with ``ok=False``; the conversation goes on.
        """
        command = parse_command(text)
        if command is None:
            return None
        try:
            return await self._run_command(command)
        except SkillError as exc:
            return CommandReply(str(exc), ok=False)

    async def _run_command(self, command: Command) -> CommandReply:
        if command.name == "use":
            return await self.use(command.skill or "", command.arguments)
        if command.name == "unuse":
            return self.unuse()
        if command.name == "skills":
            return CommandReply(self._describe_skills())
        if command.name == "tools":
            return CommandReply(self._describe_tools())
        if command.name == "instructions":
            text = self.turn().instructions
            return CommandReply(text or "No instructions: no skill is active and the agent has none.")
        return CommandReply(_HELP, ok=command.arguments != "use")

    async def use(self, name: str, arguments: str = "") -> CommandReply:
        """Activate a skill for the following turns, binding ``arguments`` to its variables.

        Raises:
            SkillNotFound: No such skill, or the skill is not user-invocable.
            SkillParseError: Its SKILL.md is broken now (even when the loader keeps a last good version).
            SkillArgumentError: The arguments do not fit its variables.
            SkillRenderError: Its template failed to render.
        """
        skill = await self._skill.activate(name, arguments)
        named = sorted({server for pattern in skill.allowed_tools if (server := literal_server(pattern))})
        if named and self._start_servers is not None:
            await self._start_servers(named)
        count = len(self.registry.visible_tools(self.scope()))
        return CommandReply(f"Using skill {name!r}: {count} tool(s) in scope. /unuse to stop.")

    async def refresh_skill(self) -> None:
        """Look the active skill up now: drop it (with a notice) when it is gone or broken, and
        render its body again, with the argument text it was used with, when its SKILL.md changed.

        A hand-written loop calls it before :meth:`turn`; :meth:`send` does so before every round.
        """
        await self._skill.refresh()

    def unuse(self) -> CommandReply:
        """Deactivate the active skill."""
        name = self._skill.deactivate()
        if name is None:
            return CommandReply("No skill is active.", ok=False)
        return CommandReply(f"Stopped using skill {name!r}.")

    def _describe_skills(self) -> str:
        skills = list(self.skills.invocable()) if self.skills else []
        if not skills:
            return "No skills are loaded."
        skill = self.active_skill
        active = skill.name if skill is not None else None
        lines = []
        for skill in sorted(skills, key=lambda s: s.name):
            marker = "*" if skill.name == active else " "
            lines.append(f"{marker} {skill.usage()} - {skill.description}")
        return "\n".join(lines)

    def _describe_tools(self) -> str:
        tools = self.registry.visible_tools(self.scope())
        if not tools:
            return "No tools are in scope."
        lines = [f"{len(tools)} tool(s) in scope:"]
        for tool in tools:
            tier = "internal" if self.registry.is_internal(tool.spec.name) else "global"
            lines.append(f"  {tool.spec.name} ({tier})")
        return "\n".join(lines)

    # -- tool calls ---------------------------------------------------------------------------------

    async def call_tool(
        self, call: ToolCall, scope: TurnScope | None = None, *, progress: ProgressCallback | None = None
    ) -> ToolMessage:
        """Run one call the model made and return the message that carries its result.

        Unknown tools, denials, bad arguments and session errors become error
        results naming the tool and the reason, so the model can correct itself.
        The call is checked against the active skill as its SKILL.md reads now,
        also when ``scope`` (the round's scope) was built before an edit. A result
        over the limits' cap is cut, with a note saying what was cut. ``progress``
        receives the tool's progress notifications.
        """
        if isinstance(call.arguments, str):
            return ToolMessage(
                call,
                ToolResult.error(f"Tool {call.name!r}: the arguments are not a JSON object: {call.arguments[:200]!r}"),
            )
        live = self.scope() if scope is None else replace(scope, **_skill_fields(self._skill.current()))
        record = CallRecord(call.name, call.arguments, live, self.permissions, self.limits.call_timeout, progress)
        try:
            if self.discovery is None:
                result = await self._handler(record)
            else:
                # What search_tools finds during the call is this conversation's; a used unlock is evicted last.
                self.discovery.touch(call.name)
                with self.discovery.bound():
                    result = await self._handler(record)
        except ToolsiftError as exc:  # a handler that raises rather than answers, such as ``registry.handle``
            result = ToolResult.error(str(exc))
        return ToolMessage(call, cap_result(result, result_cap(self.limits)))

    async def send(self, text: str, model: ChatModel) -> AgentReply:
        """Handle one user input: a command, or a message the model answers, calling tools as it asks.

        Stops after ``limits.max_rounds`` tool rounds or ``limits.message_timeout``
        seconds with a clear message; calls asked for but not run get error
        results, so the history stays valid for every provider. If the caller is
        cancelled, the cancellation propagates (running tool calls are cancelled).
        """
        reply = await self.handle_command(text)
        if reply is not None:
            return AgentReply(text=reply.text, command=True, notices=self.take_notices())
        self.history.append(UserMessage(text))
        if self.discovery is not None:
            self.discovery.begin_turn()
        outcome = AgentReply(text="")
        with anyio.move_on_after(self.limits.message_timeout) as deadline:
            if self._context is not None:
                self._context_text = await self._context()
            await self._loop(model, outcome)
        if deadline.cancelled_caught:
            self._close_open_calls("not run: the message time limit was reached")
            outcome.limit = LimitExceeded("message_timeout", self.limits.message_timeout)
            outcome.text = f"Stopped: {outcome.limit}. Ask again or raise limits.messageTimeout."
        outcome.notices = self.take_notices()
        return outcome

    async def _loop(self, model: ChatModel, outcome: AgentReply) -> None:
        while True:
            await self.refresh_skill()
            turn = self.turn(model.format)
            answer = await model.complete(turn.instructions, list(self.history), turn.tools)
            self.history.append(answer)
            if not answer.tool_calls:
                outcome.text = answer.text or ""
                return
            if outcome.rounds >= self.limits.max_rounds:
                self._close_open_calls("not run: the tool-round limit was reached")
                outcome.limit = LimitExceeded("max_rounds", self.limits.max_rounds)
                outcome.text = f"Stopped: {outcome.limit}. Ask again or raise limits.maxRounds."
                return
            outcome.rounds += 1
            for call in answer.tool_calls:
                message = await self.call_tool(call, turn.scope)
                self.history.append(message)
                outcome.tool_calls.append(message)

    def _close_open_calls(self, reason: str) -> None:
        """Give every unanswered tool call of the last assistant message an error result."""
        for index in range(len(self.history) - 1, -1, -1):
            last = self.history[index]
            if isinstance(last, AssistantMessage):
                break
        else:
            return
        answered = {m.call.id for m in self.history[index + 1 :] if isinstance(m, ToolMessage)}
        for call in last.tool_calls:
            if call.id not in answered:
                self.history.append(ToolMessage(call, ToolResult.error(f"Tool {call.name!r} {reason}")))


def _skill_fields(skill: Any | None) -> dict[str, Any]:
    """Layer 4 of a scope: the skill's patterns, or no extra limit without a skill."""
    if skill is None:
        return {"skill_allowed": (), "skill_disallowed": (), "skill": None}
    return {"skill_allowed": skill.allowed_tools, "skill_disallowed": skill.disallowed_tools, "skill": skill.name}


_HELP = """Commands:
  /use <skill> [arguments]  activate a skill for the following turns
  /unuse                    deactivate the active skill
  /skills                   list the skills
  /tools                    list the tools in scope this turn
  /instructions             show the instructions the model gets (the active skill's, rendered)"""
