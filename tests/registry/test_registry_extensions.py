"""A call record's extensions: what the caller hands its own tools and approver, for that one call."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import anyio
from local_tools import RecordingTool

from toolsift.pipeline import AuditTrail, Middleware, PermissionFilter, Pipeline
from toolsift.registry import (
    ApprovalRequest,
    CallRecord,
    Level,
    Permissions,
    ToolContext,
    ToolRegistry,
    ToolResult,
)


@dataclass(frozen=True)
class Caller:
    """Stands for what a layer above the registry hands its tools (a conversation's state, a served request)."""

    name: str


@dataclass(frozen=True)
class Helper(Caller):
    """A subclass is found by its base type too."""


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
        caller = ctx.extension(Caller)
        return ToolResult.text(caller.name if caller is not None else "nobody")


async def test_each_of_two_concurrent_calls_sees_only_its_own_extensions_through_the_stages() -> None:
    registry = ToolRegistry()
    registry.register(CallerEcho())
    # PermissionFilter rebuilds the record (dataclasses.replace): the extensions ride along.
    pipeline = Pipeline.for_registry(
        registry, [Middleware(PermissionFilter, agent="a"), Middleware(AuditTrail, audit=registry.audit)]
    )
    answers: dict[str, str] = {}

    async def call(name: str) -> None:
        answers[name] = (await pipeline("whoami", {}, extensions=(Caller(name),))).text_content()

    async with anyio.create_task_group() as group:
        group.start_soon(call, "ada")
        group.start_soon(call, "bob")
    assert answers == {"ada": "ada", "bob": "bob"}


async def test_a_call_without_extensions_finds_none() -> None:
    registry = ToolRegistry()
    tool = CallerEcho()
    tool.running = 1  # answer at once
    registry.register(tool)
    assert (await registry.execute("whoami")).text_content() == "nobody"
    record = CallRecord("whoami", extensions=(Helper("h"), Caller("c")))
    assert record.extension(Caller) == Helper("h") and record.extension(Helper) == Helper("h")
    assert record.extension(int) is None


async def test_the_approver_sees_the_extensions_of_the_call_it_approves() -> None:
    seen: list[Caller | None] = []

    async def approver(request: ApprovalRequest) -> bool:
        seen.append(request.extension(Caller))
        return True

    registry = ToolRegistry()
    registry.register(RecordingTool("write"))
    permissions = Permissions(level=Level.WRITE, ask=("write",), approver=approver)
    result = await registry.execute("write", {}, permissions=permissions, extensions=(Caller("ada"),))
    assert not result.is_error
    assert seen == [Caller("ada")]
