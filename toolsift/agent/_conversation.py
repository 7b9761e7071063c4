"""The conversation helper: slash commands, the turn's scope and schemas, tool calls, limits."""

from __future__ import annotations

import secrets
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import anyio
import mcp.types as mcp_types

from .._exceptions import LimitExceeded, SkillError, ToolsiftError
from .._globs import literal_server
from .._names import SEARCH_TOOL_NAME
from .._skill_files import SKILL_FILE_TOOL, SkillFiles, skill_files_note
from ..config._internal import AgentConfig, LimitsConfig
from ..pipeline import Middleware, Pipeline, ResultGuard
from ..registry import CallHandler, CallRecord, Permissions, ToolRegistry, ToolResult, TurnScope
from ..registry._internal import AuditEvent, ProgressCallback
from ..search import Discovery
from ._active_skill import ActiveSkill, SkillSource
from ._briefing import Briefing, SkillState, server_section, skill_section
from ._commands import HELP, Command, describe_skills, describe_tools, parse_command
from ._declared import DeclaredTools, schema_name
from ._messages import AssistantMessage, ContextMessage, Message, ToolCall, ToolMessage, Usage, UserMessage
from ._skill_servers import SkillServerHost, SkillServerLease
from ._tool_list import KeepRule, LoadRule, estimated_tokens
from ._turn import AgentReply, ChatModel, CommandReply, Turn
from ._unreached import unreached

__all__ = ["Conversation"]


class Conversation:
    """One agent conversation over a registry and a set of skills.

    It turns user input into either a command answer or a message for the model,
    keeps the active skill, builds each turn's scope, instructions and schemas,
    and runs each tool call the model makes, as a ``CallRecord`` with the turn's
    scope and the caller's permissions, through a pipeline (the same path a
    served call takes; see ``toolsift.pipeline``). Failures and denials become
    tool results the model reads; nothing is dropped. A result larger than
    ``limits.max_result_tokens`` / ``max_result_bytes`` is cut, with a note.

    Every request is built to share the longest prefix with the one before, as
    providers cache it (tools, then system prompt, then messages): the system
    prompt is the same all conversation long; the active skill's body, the
    instructions of servers whose tools appear and the resources context are
    appended to :attr:`history` as context messages (``ContextMessage``) when they change;
    the tool list keeps its order and keeps tools that left the scope while that
    is cheaper (see :class:`KeepRule`), and calls are
    checked against the live scope whatever the list shows. A model that
    defers tools (``defers_tools``) gets a skill's tools loaded by reference
    (see :meth:`turn`), or appended to the list where that costs less (see
    :class:`LoadRule`).

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
        instructions: Base instructions, the start of the system prompt.
        call_handler: Runs a call record; by default a pipeline of just the
            registry (``Pipeline.for_registry(registry).handle``); pass another
            pipeline's ``handle`` to add stages. Either way its results pass the
            size rule of ``limits`` (a ``ResultGuard``: the default pipeline's
            own stage, or around the handler given).
        discovery: Pinned tools and what ``search_tools`` unlocked; its tools
            join every turn's scope (layers 3 and 4 still apply).
        context: Fetches the resources context once per user message (the
            resources of ``resources: true`` servers).
        server_instructions: Instructions of MCP servers by name, given the
            conversation's fence id (untrusted servers' texts are fenced with it);
            a server's are told when its tools first appear.
        start_servers: Starts lazy servers by namespace; ``/use`` calls it with
            the servers a skill's allowed-tools name literally (``github__*``),
            so their tools are there for the skill's first turn.
        skill_servers: The servers skills own: ``/use`` starts the skill's (and
            refuses, saying why, when one cannot start), ``/unuse`` lets them go,
            and no other skill's turn shows their tools.
        skill_files: The files a skill bundles (``FolderFiles.of``, or a skill's
            origin server's). While a skill with bundled files is active, its body
            is told where it lives and what it holds, and ``read_skill_file`` (when
            registered) is pinned to the turn, past the skill's allowed-tools.
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
        server_instructions: Callable[[str], Mapping[str, str]] | None = None,
        skill_servers: SkillServerHost | None = None,
        skill_files: Callable[[Any], SkillFiles | None] | None = None,
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
        # The size rule of every call path (see toolsift.pipeline): past the limits, cut with a note. It is the
        # pipeline's last stage (a checkpoint: no frame of its own), or wraps the handler given.
        most, tokens = self.limits.max_result_bytes, self.limits.max_result_tokens
        self._handler = (
            ResultGuard(call_handler, max_bytes=most, max_tokens=tokens)
            if call_handler is not None
            else Pipeline.for_registry(registry, [Middleware(ResultGuard, max_bytes=most, max_tokens=tokens)]).handle
        )
        self._context = context
        self._context_text = ""
        self._start_servers = start_servers
        self._server_instructions = server_instructions
        self._skill_servers = skill_servers
        self._lease: SkillServerLease | None = None
        # One fence id per conversation: the same server text gives the same bytes in every request,
        # and the server, which never sees it, still cannot forge the closing marker.
        self._fence_id = secrets.token_hex(8)
        self._skill_files = skill_files
        self._files_seen: tuple[Any, str] | None = None  # (skill, note): a skill's files, walked once per version
        self._skill = ActiveSkill(skills, self._files_note if skill_files is not None else None)
        self._briefing = Briefing()
        self._declared = DeclaredTools(registry, discovery)
        self._last_scope: TurnScope | None = None
        self._loaded: set[str] = set()  # deferred tools loaded by reference (or named, for on-demand loading)
        self._load_rules: list[LoadRule] = []
        self._requests = 0
        self._history_tokens = 0
        self._counted = 0  # messages of the history counted in _history_tokens
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
        server_instructions: Callable[[str], Mapping[str, str]] | None = None,
        skill_servers: SkillServerHost | None = None,
        skill_files: Callable[[Any], SkillFiles | None] | None = None,
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
            skill_servers=skill_servers,
            skill_files=skill_files,
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

    def tool_list_rules(self, format: str = "openai", *, strict: bool = False) -> list[KeepRule]:
        """Each decision on keeping tools that left the scope in ``format``'s tool list, oldest first.

        Its inputs (tokens kept, tokens a removal rewrites, expected requests) are
        what a benchmark reports; see :class:`KeepRule`.
        """
        return self._declared.rules(format, strict)

    def load_rules(self) -> list[LoadRule]:
        """How each skill's tools reached a model that defers tools, oldest first (see :class:`LoadRule`)."""
        return list(self._load_rules)

    def scope(self) -> TurnScope:
        """The scope of the next turn: agent allowlist, the active skill as it is now, plan mode."""
        base = TurnScope(
            agent_allowed=self.allowed_tools,
            agent=self.agent,
            read_only=self.plan_mode,
            permissions=self.permissions,
            **self._skill_fields(),
        )
        scope = self.discovery.scope_for_turn(base) if self.discovery is not None else base
        skill = self._skill.current()
        if skill is not None and SKILL_FILE_TOOL in self.registry and self._files_note(skill):
            scope = scope.with_pinned({SKILL_FILE_TOOL})
        return scope

    def _files_note(self, skill: Any) -> str:
        """Where ``skill`` lives and the files it bundles ('' when none), listed once per version of it."""
        seen = self._files_seen
        if seen is not None and seen[0] is skill:
            return seen[1]
        files = self._skill_files(skill) if self._skill_files is not None else None
        note = skill_files_note(files) if files is not None else ""
        self._files_seen = (skill, note)
        return note

    def system_prompt(self) -> str:
        """The system prompt: base instructions and the plan-mode note, the same all conversation long."""
        parts = [self.instructions.strip()] if self.instructions.strip() else []
        if self.plan_mode:
            parts.append(_PLAN_NOTE)
        return "\n\n".join(parts)

    def turn(
        self, format: str = "openai", *, strict: bool = False, defer: bool = False, on_demand: bool = False
    ) -> Turn:
        """System prompt, schemas and scope for the next model round.

        Call it once per model request: it also appends to :attr:`history` what
        the model has not been told yet (the active skill's body at ``/use`` or
        after an edit, a note when it stops, the instructions of servers whose
        tools appear, a changed resources context), unless the history ends with
        tool calls still waiting for their results (the news then waits for the
        next turn). The scope follows the skill's SKILL.md as it is now; its body
        is as last rendered (:meth:`refresh_skill` renders a changed body).

        Args:
            format: The schema format.
            strict: OpenAI strict mode.
            defer: For a model with native tool search (and ``search_tools``
                registered): ``tools`` holds the scope's global and pinned tools (and
                ``search_tools`` while there is something to find); ``deferred`` exactly the
                tools the scope lets the model load now (what ``search_tools`` could unlock
                and what the active skill surfaces), never one it forbids. A
                skill's tools not yet loaded are loaded by a ``search_tools`` call and
                result appended to :attr:`history` (by reference), or appended to
                ``tools`` when that costs less (:class:`LoadRule`). The turn's scope
                allows what ``search_tools`` could unlock and what the skill surfaces;
                a deferred tool it no longer allows is refused, saying why it left.
            on_demand: With ``defer``, for a model whose provider's own search loads a deferred
                tool when the model calls it, within the same answer (``loads_on_demand``):
                the global tools are deferred too, ``tools`` holds only the pinned ones and
                ``search_tools``, and a skill's tools are named in a context message at
                ``/use`` rather than loaded; so the list never changes with the scope, and
                only the definitions the model uses join the prompt, where it uses them.
        """
        live = self.scope()
        deferring = defer and self._declared.defers()
        on_demand = on_demand and deferring
        shown = replace(live, unlocked=frozenset()) if deferring else live
        findable = self._declared.findable(shown) if deferring else []
        surfaced = self._declared.surfaced(shown, everything=on_demand) if deferring else []
        skills = [name for name in surfaced if self.registry.is_internal(name)] if on_demand else surfaced
        self._tell(live, skills, format, on_demand=on_demand)
        tools = self._declared.declare(
            shown,
            format,
            strict,
            before=self._last_scope,
            tail_tokens=estimated_tokens(self.system_prompt()) + self._count_history(),
            requests=self._requests,
            deferring=deferring,
            loaded=self._loaded,
            on_demand=on_demand,
        )
        deferred = (
            self._declared.deferred([*findable, *surfaced], format, strict, before=self._last_scope, now=live)
            if deferring
            else []
        )
        self._last_scope = live
        return Turn(self.system_prompt(), tools, live.with_unlocked(findable) if findable else live, deferred)

    def instructions_now(self, format: str = "openai") -> str:
        """Everything the model should know this turn as one text, for paths that keep their own history.

        Base instructions, the active skill's body, the instructions of the
        servers whose tools ``format``'s tool list shows, the resources context
        and the plan-mode note; the same text from call to call unless one of
        them changed. The framework adapters pass it as their instructions.
        """
        parts = [self.instructions.strip()] if self.instructions.strip() else []
        skill = self._skill_state()
        if skill is not None:
            parts.append(skill_section(skill))
        shown = self._shown_servers(self.scope(), self._declared.names(format))
        parts += [server_section(server, text) for server, text in shown.items()]
        if self._context_text:
            parts.append(self._context_text)
        if self.plan_mode:
            parts.append(_PLAN_NOTE)
        return "\n\n".join(parts)

    def _skill_fields(self) -> dict[str, Any]:
        """Layer 4 of a scope: the active skill's patterns (no extra limit without one).

        Another skill's own servers stay out of the skill's turns; the servers of a skill no longer
        active (dropped, or replaced) are let go here.
        """
        skill = self._skill.current()
        if self._lease is not None and (skill is None or skill.name != self._lease.skill):
            self._hold(None)
        if skill is None:
            return {"skill_allowed": (), "skill_disallowed": (), "skill": None}
        hidden = self._skill_servers.hidden_from(skill.name) if self._skill_servers is not None else ()
        disallowed = (*skill.disallowed_tools, *hidden)
        return {"skill_allowed": skill.allowed_tools, "skill_disallowed": disallowed, "skill": skill.name}

    def _hold(self, lease: SkillServerLease | None) -> None:
        """Hold ``lease`` (the active skill's servers) and let the one held before go."""
        previous, self._lease = self._lease, lease
        if previous is not None and previous is not lease:
            previous.release()

    # -- what the model is told ---------------------------------------------------------------------

    def _skill_state(self) -> SkillState | None:
        skill = self._skill.current()
        if skill is None:
            return None
        path = getattr(skill, "path", None)
        return SkillState(skill.name, self._skill.instructions, str(path) if path is not None else "")

    def _shown_servers(self, scope: TurnScope, declared: Sequence[str] = ()) -> dict[str, str]:
        """Instructions of the servers whose tools ``scope`` shows (or ``declared`` still lists), in tool order."""
        given = self._server_instructions(self._fence_id) if self._server_instructions is not None else {}
        if not given:
            return {}
        names = [tool.spec.name for tool in self.registry.visible_tools(scope)]
        names += [name for name in declared if name in self.registry]
        shown = dict.fromkeys(self.registry.spec(name).server or "" for name in names)
        return {server: given[server] for server in shown if server in given}

    def _tell(
        self, scope: TurnScope, load: Sequence[str] = (), format: str = "openai", *, on_demand: bool = False
    ) -> None:
        """Append what changed since the model was last told, where the history allows it now.

        ``load``: the deferred tools the active skill surfaces, for a model that loads
        tools by reference; those neither loaded nor declared yet in this conversation
        are loaded by a ``search_tools`` exchange after the news (see :meth:`_loading`),
        or put up front, whichever :class:`LoadRule` finds cheaper. With ``on_demand``
        they stay deferred, and a context message names them once.
        """
        if not self._may_append():
            return
        tail = estimated_tokens(self.system_prompt()) + self._count_history()  # what is cached after the tools
        news = self._briefing.news(
            self._skill_state(),
            self._shown_servers(scope),
            self._context_text,
            stopped_why=self._skill.dropped_why,
        )
        self.history.extend(news)
        given = self._declared.given(format)
        missing = [name for name in load if name not in self._loaded and name not in given]
        if not missing:
            return
        if on_demand:
            self.history.append(_deferred_note(scope.skill, missing, self.registry, format))
            self._loaded.update(missing)
            return
        rule = LoadRule(
            skill=scope.skill,
            tools=tuple(missing),
            tool_tokens=self._declared.tokens(missing, scope, format),
            rewritten_tokens=tail,
            expected_requests=max(1, self._requests),
        )
        self._load_rules.append(rule)
        if rule.by_reference:
            self.history.extend(self._loading(scope.skill, missing, format))
            self._loaded.update(missing)
        else:
            self._declared.put_up_front(missing)

    def _loading(self, skill: str | None, names: Sequence[str], format: str) -> tuple[AssistantMessage, ToolMessage]:
        """A ``search_tools`` call and its result that load ``names`` by reference.

        Providers load deferred tools only from a tool result (Anthropic's
        ``tool_reference`` blocks, OpenAI's ``tool_search_output``), so a skill's
        tools arrive as the answer to a search the conversation records in the
        model's name: the tool list, at the start of the cached prefix, stays as it
        was. The id is toolsift's own; adapters without loading by reference send
        it as an ordinary call and result that name the tools.
        """
        exported = [self.registry.exported_name(name, format) for name in names]
        whose = f"skill {skill}" if skill else "the conversation's scope"
        call = ToolCall(
            f"toolsift_load_{secrets.token_hex(8)}",
            self.registry.exported_name(SEARCH_TOOL_NAME, format),
            {"query": f"tools of {whose}"},
        )
        text = f"Loaded the {len(exported)} tool(s) of {whose}: {', '.join(exported)}."
        result = ToolResult.text(text, structured={"loaded": exported})
        return AssistantMessage(tool_calls=(call,)), ToolMessage(call, result, references=tuple(exported))

    def _may_append(self) -> bool:
        """Whether a message may go at the end of the history: not between tool calls and their results."""
        for index in range(len(self.history) - 1, -1, -1):
            message = self.history[index]
            if isinstance(message, AssistantMessage):
                answered = {m.call.id for m in self.history[index + 1 :] if isinstance(m, ToolMessage)}
                return all(call.id in answered for call in message.tool_calls)
        return True

    def _count_history(self) -> int:
        """Estimated tokens of the history (counted once per message)."""
        for message in self.history[self._counted :]:
            self._history_tokens += estimated_tokens(_message_text(message))
        self._counted = len(self.history)
        return self._history_tokens

    # -- commands ---------------------------------------------------------------------------------

    async def handle_command(self, text: str) -> CommandReply | None:
        """Answer a slash command, or return None when ``text`` is a message for the model.

        Errors (unknown skill, missing arguments, a template that fails) come back
        as a reply with ``ok=False``, as a chat shows them; the conversation goes on.
        Code that must not go on without the skill calls :meth:`use`, which raises.
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
            problem = self._skill_servers.problem if self._skill_servers is not None else None
            return CommandReply(describe_skills(self.skills, self.active_skill, problem))
        if command.name == "tools":
            return CommandReply(describe_tools(self.registry, self.scope()))
        if command.name == "instructions":
            text = self.instructions_now()
            return CommandReply(text or "No instructions: no skill is active and the agent has none.")
        return CommandReply(HELP, ok=command.arguments != "use")

    async def use(self, name: str, arguments: str = "") -> CommandReply:
        """Activate a skill for the following turns, binding ``arguments`` to its variables.

        Its body reaches the model as a ``ContextMessage`` before the next request.

        Raises:
            SkillNotFound: No such skill, or the skill is not user-invocable.
            SkillParseError: Its SKILL.md is broken now (even when the loader keeps a last good version).
            SkillArgumentError: The arguments do not fit its variables.
            SkillRenderError: Its template failed to render.
            SkillUnavailable: One of the servers it owns cannot start (the reason says which and why).
        """
        lease = await self._skill_servers.acquire(name) if self._skill_servers is not None else None
        try:
            skill = await self._skill.activate(name, arguments)
        except BaseException:
            if lease is not None:
                lease.release()
            raise
        self._hold(lease)
        named = sorted({server for pattern in skill.allowed_tools if (server := literal_server(pattern))})
        if named and self._start_servers is not None:
            await self._start_servers(named)
        scope = self.scope()
        missing = unreached(self.registry, skill.allowed_tools, scope)
        text = f"Using skill {name!r}: {len(self.registry.visible_tools(scope))} tool(s) in scope. /unuse to stop."
        return CommandReply("\n  ".join([text, *missing]))

    async def refresh_skill(self) -> None:
        """Look the active skill up now: drop it (with a notice) when it is gone or broken, and
        render its body again, with the argument text it was used with, when its SKILL.md changed.

        A hand-written loop calls it before :meth:`turn`; :meth:`send` does so before every round.
        """
        await self._skill.refresh()

    def unuse(self) -> CommandReply:
        """Deactivate the active skill."""
        name = self._skill.deactivate()
        self._hold(None)
        if name is None:
            return CommandReply("No skill is active.", ok=False)
        return CommandReply(f"Stopped using skill {name!r}.")

    # -- tool calls ---------------------------------------------------------------------------------

    async def call_tool(
        self, call: ToolCall, scope: TurnScope | None = None, *, progress: ProgressCallback | None = None
    ) -> ToolMessage:
        """Run one call the model made and return the message that carries its result.

        Unknown tools, denials, bad arguments and session errors become error
        results naming the tool and the reason, so the model can correct itself.
        The call is checked against the active skill as its SKILL.md reads now,
        also when ``scope`` (the round's scope) was built before an edit; a tool
        still in the tool list after it left the scope is refused, and the result
        says when and why it left. A result over the limits' cap is cut, with a
        note saying what was cut. ``progress`` receives the tool's progress notifications.
        """
        if isinstance(call.arguments, str):
            return ToolMessage(
                call,
                ToolResult.error(f"Tool {call.name!r}: the arguments are not a JSON object: {call.arguments[:200]!r}"),
            )
        live = self.scope() if scope is None else replace(scope, **self._skill_fields())
        # What search_tools finds during the call is this conversation's (its Discovery rides in the record).
        record = CallRecord(
            call.name, call.arguments, live, self.permissions, self.limits.call_timeout, progress, self.discovery
        )
        if self.discovery is not None:
            self.discovery.touch(call.name)  # a used unlock is evicted last
        try:
            result = await self._handler(record)
        except ToolsiftError as exc:  # a handler that raises rather than answers, such as ``registry.handle``
            result = ToolResult.error(str(exc))
        note = self._declared.refusal_note(call.name, live) if result.is_error else None
        if note is not None:
            result = result.model_copy(update={"content": [*result.content, mcp_types.TextContent(text=note)]})
        return ToolMessage(call, result)

    async def send(self, text: str, model: ChatModel) -> AgentReply:
        """Handle one user input: a command, or a message the model answers, calling tools as it asks.

        Stops after ``limits.max_rounds`` tool rounds or ``limits.message_timeout``
        seconds with a clear message; calls asked for but not run get error
        results, so the history stays valid for every provider. What the model
        was not told yet (see :meth:`turn`) goes before the user's message. If the
        caller is cancelled, the cancellation propagates (running tool calls are cancelled).
        """
        reply = await self.handle_command(text)
        if reply is not None:
            return AgentReply(text=reply.text, command=True, notices=self.take_notices())
        if self.discovery is not None:
            self.discovery.begin_turn()
        outcome = AgentReply(text="")
        asked = False
        with anyio.move_on_after(self.limits.message_timeout) as deadline:
            if self._context is not None:
                self._context_text = await self._context()
            await self.refresh_skill()
            live = self.scope()
            defers = bool(getattr(model, "defers_tools", False)) and self._declared.defers()
            on_demand = bool(getattr(model, "loads_on_demand", False))
            self._tell(live, self._declared.surfaced(live) if defers else (), model.format, on_demand=on_demand)
            self.history.append(UserMessage(text))
            asked = True
            await self._loop(model, outcome)
        if not asked:  # the time ran out before the message was in the history
            self.history.append(UserMessage(text))
        if deadline.cancelled_caught:
            self._close_open_calls("not run: the message time limit was reached")
            outcome.limit = LimitExceeded("message_timeout", self.limits.message_timeout)
            outcome.text = f"Stopped: {outcome.limit}. Ask again or raise limits.messageTimeout."
        outcome.notices = self.take_notices()
        return outcome

    async def _loop(self, model: ChatModel, outcome: AgentReply) -> None:
        defers = bool(getattr(model, "defers_tools", False))
        on_demand = bool(getattr(model, "loads_on_demand", False))
        while True:
            await self.refresh_skill()
            turn = self.turn(model.format, defer=defers, on_demand=on_demand)
            started, history = time.perf_counter(), list(self.history)
            if defers:  # the optional keyword of models that search tools natively (see ChatModel)
                deferred = turn.deferred
                answer = await model.complete(turn.instructions, history, turn.tools, deferred=deferred)  # type: ignore[call-arg]
            else:
                answer = await model.complete(turn.instructions, history, turn.tools)
            self._requests += 1
            self._record_round(model, answer, turn.scope, time.perf_counter() - started)
            if answer.usage is not None:
                outcome.usage += answer.usage
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
                message = await self._run_call(call, turn, model.format)
                self.history.append(message)
                outcome.tool_calls.append(message)

    async def _run_call(self, call: ToolCall, turn: Turn, format: str) -> ToolMessage:
        """One call of a round; with deferred tools, ``search_tools`` answers with references to them."""
        if not turn.deferred or call.name not in self.registry or self.registry.resolve(call.name) != SEARCH_TOOL_NAME:
            return await self.call_tool(call, turn.scope)
        # The search sees the deferred tools as what they are to it, hidden, so that it unlocks them.
        exported = [schema_name(schema) for schema in turn.deferred]
        findable = {self.registry.resolve(name) for name in exported if name in self.registry}
        message = await self.call_tool(call, replace(turn.scope, unlocked=turn.scope.unlocked - findable))
        structured = message.result.structured_content
        unlocked = structured.get("unlocked", []) if isinstance(structured, dict) else []
        loaded = [name for name in unlocked if name in findable]
        self._loaded.update(loaded)
        return replace(message, references=tuple(self.registry.exported_name(name, format) for name in loaded))

    def _record_round(self, model: ChatModel, answer: AssistantMessage, scope: TurnScope, seconds: float) -> None:
        """Audit one model request with the tokens the provider counted."""
        audit = self.registry.audit
        if not audit.observed:
            return
        usage = answer.usage or Usage()
        audit.emit(
            AuditEvent(
                kind="model.round",
                tool=str(getattr(model, "model", None) or type(model).__name__),
                outcome="ok",
                call_id=uuid.uuid4().hex,
                duration_ms=seconds * 1000,
                skill=scope.skill,
                agent=self.agent,
                tokens={
                    "input": usage.input_tokens,
                    "cache_read": usage.cache_read_tokens,
                    "cache_write": usage.cache_write_tokens,
                    "output": usage.output_tokens,
                },
            )
        )

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


def _deferred_note(skill: str | None, names: Sequence[str], registry: ToolRegistry, format: str) -> ContextMessage:
    """What a model that loads tools on demand is told of the tools a skill surfaces."""
    whose = f"Skill {skill!r} gives" if skill else "The conversation's scope gives"
    exported = ", ".join(registry.exported_name(name, format) for name in names)
    text = f"{whose} these tools; they are deferred, so search for each before its first call: {exported}."
    return ContextMessage(text, source=f"skill:{skill}" if skill else "tools")


def _message_text(message: Message) -> str:
    """About what a message costs the model to read (for the tool list's keep rule)."""
    if isinstance(message, ToolMessage):
        return message.result.model_dump_json()
    if isinstance(message, AssistantMessage):
        return (message.text or "") + "".join(f"{c.name}{c.arguments}" for c in message.tool_calls)
    return message.text


_PLAN_NOTE = "Plan mode: only read-only tools are available; propose changes instead of making them."
