"""A call record's own fields: what the caller hands its tools and asks its approval of, for that one call."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import anyio
from local_tools import RecordingTool

from toolsift.pipeline import AuditTrail, Middleware, PermissionFilter, Pipeline
from toolsift.registry import (
    ApprovalRequest,
    CallRecord,
    Level,
    Permissions,
    Tool,
    ToolContext,
    ToolRegistry,
    ToolResult,
)
from toolsift.registry._internal import AuditEvent


@dataclass
class Unlocked:
    evicted: list[str] = field(default_factory=list)


@dataclass(eq=False)
class Caller:
    """Stands for a conversation's discovery: whose call it is, and what its searches unlocked."""

    name: str
    unlocked: frozenset[str] = frozenset()

    def unlock(self, names: Iterable[str]) -> Unlocked:
        self.unlocked |= frozenset(names)
        return Unlocked()


class CallerEcho(RecordingTool):
    """Answers with the caller its call carries, once two calls run at once."""

    def __init__(self) -> None:
        super().__init__("whoami", read_only=True)
        self.both = anyio.Event()
        self.running = 0

    async def call(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        self.running += 1
        if self.running == 2:
            self.both.set()
        await self.both.wait()
        caller = ctx.discovery
        return ToolResult.text(caller.name if isinstance(caller, Caller) else "nobody")


class Waiting(ToolResult):
    """An outcome a caller reads: the call waits for an answer it must give first."""

    question: str


async def test_each_of_two_concurrent_calls_sees_only_its_own_discovery_through_the_stages() -> None:
    registry = ToolRegistry()
    registry.register(CallerEcho())
    # PermissionFilter rebuilds the record (dataclasses.replace): the caller's fields ride along.
    pipeline = Pipeline.for_registry(
        registry, [Middleware(PermissionFilter, agent="a"), Middleware(AuditTrail, audit=registry.audit)]
    )
    answers: dict[str, str] = {}

    async def call(name: str) -> None:
        answers[name] = (await pipeline("whoami", {}, discovery=Caller(name))).text_content()

    async with anyio.create_task_group() as group:
        group.start_soon(call, "ada")
        group.start_soon(call, "bob")
    assert answers == {"ada": "ada", "bob": "bob"}


async def test_a_call_without_a_discovery_finds_none() -> None:
    registry = ToolRegistry()
    tool = CallerEcho()
    tool.running = 1  # answer at once
    registry.register(tool)
    assert (await registry.execute("whoami")).text_content() == "nobody"


async def test_the_records_approver_is_asked_in_place_of_the_permissions_and_survives_the_profile() -> None:
    asked: list[str] = []

    async def profile(request: ApprovalRequest) -> bool:
        asked.append("profile")
        return False

    async def caller(request: ApprovalRequest) -> bool:
        asked.append(f"caller {request.tool.name}")
        return True

    registry = ToolRegistry()
    registry.register(RecordingTool("write"))
    permissions = Permissions(level=Level.WRITE, ask=("write",), approver=profile)
    # The profile's permissions replace the call's; the record's own approver stays.
    pipeline = Pipeline.for_registry(registry, [Middleware(PermissionFilter, permissions=permissions)])
    result = await pipeline.handle(CallRecord("write", approver=caller))
    declined = await pipeline.handle(CallRecord("write"))
    assert not result.is_error, result.text_content()
    assert declined.is_error and "declined" in declined.text_content()
    assert asked == ["caller write", "profile"]


async def test_an_approver_that_cannot_answer_yet_ends_the_call_with_its_outcome_audited_as_refused() -> None:
    events: list[AuditEvent] = []
    tool = RecordingTool("write")
    registry = ToolRegistry()
    registry.audit.subscribe(events.append)
    registry.register(tool)

    async def waiting(request: ApprovalRequest) -> Waiting:
        return Waiting(content=[], is_error=True, question=f"run {request.tool.name}?")

    permissions = Permissions(level=Level.WRITE, ask=("write",), approver=waiting)
    result = await Pipeline.for_registry(registry, [Middleware(AuditTrail, audit=registry.audit)]).handle(
        CallRecord("write", permissions=permissions)
    )
    assert isinstance(result, Waiting) and result.question == "run write?"
    assert tool.calls == []
    assert [(event.kind, event.layer) for event in events] == [("tool.denied", 5)]


async def test_the_records_forward_reaches_the_tool_it_runs() -> None:
    seen: list[str] = []

    async def forward(tool: Tool, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        seen.append(tool.spec.name)
        return ToolResult.text("forwarded")

    class Forwarding(RecordingTool):
        async def call(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
            return await ctx.forward(self, args, ctx) if ctx.forward is not None else ToolResult.text("own")

    registry = ToolRegistry()
    registry.register(Forwarding("remote", read_only=True))
    forwarded = await registry.handle(CallRecord("remote", forward=forward))
    own = await registry.handle(CallRecord("remote"))
    assert (forwarded.text_content(), own.text_content(), seen) == ("forwarded", "own", ["remote"])
