"""The ask tier of layer 5: deny > ask > allow, approvers, destructive annotations, audit."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import mcp.types as mcp_types
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from local_tools import RecordingTool

from toolsift import InvalidArguments, InvalidPattern, PermissionDenied
from toolsift._globs import compile_patterns
from toolsift.config._toolsift import PermissionsConfig
from toolsift.registry import ApprovalRequest, Level, Permissions, ToolRegistry, TurnScope
from toolsift.registry._internal import AuditEvent

SCHEMA = {
    "type": "object",
    "properties": {"repo": {"type": "string"}, "token": {"type": "string"}},
    "required": ["repo"],
}


class Approver:
    """Answers with ``answer`` (or raises it) and remembers what it was asked."""

    def __init__(self, answer: Any = True) -> None:
        self.answer = answer
        self.asked: list[ApprovalRequest] = []

    async def __call__(self, request: ApprovalRequest) -> bool:
        self.asked.append(request)
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer  # type: ignore[no-any-return]


def annotated(name: str, **hints: Any) -> RecordingTool:
    tool = RecordingTool(name, schema=SCHEMA)
    tool.spec = replace(tool.spec, annotations=mcp_types.ToolAnnotations(**hints) if hints else None)
    return tool


@pytest.fixture
def events() -> list[AuditEvent]:
    return []


@pytest.fixture
def registry(events: list[AuditEvent]) -> ToolRegistry:
    registry = ToolRegistry()
    registry.audit.subscribe(events.append)
    registry.replace_server(
        "github",
        [
            annotated("github__delete_repo", destructiveHint=True),
            annotated("github__create_issue", destructiveHint=False),
            annotated("github__push"),  # no annotations: MCP's defaults make it possibly destructive
            annotated("github__get_repo", readOnlyHint=True),
        ],
        internal=False,
    )
    return registry


async def test_a_call_that_asks_runs_once_approved_and_the_approver_sees_it_all(
    registry: ToolRegistry, events: list[AuditEvent]
) -> None:
    approver = Approver(True)
    permissions = Permissions(ask=("github__delete_*",), approver=approver)
    scope = TurnScope(skill="ops", agent="main")
    result = await registry.execute(
        "github__delete_repo", {"repo": "a/b", "token": "ghp_" + "x" * 30}, scope, permissions
    )
    assert not result.is_error
    [request] = approver.asked
    assert request.tool.name == "github__delete_repo"
    assert request.arguments == {"repo": "a/b", "token": "ghp_" + "x" * 30}
    assert request.reason == "it matches ask rule 'github__delete_*'"
    assert (request.skill, request.agent) == ("ops", "main")
    # The approver sees the whole call; only what the config holds as a secret is hidden, and said to be.
    assert '  token: "ghp_' + "x" * 30 + '"' in request.describe()
    hidden = request.describe(mask=lambda text: text.replace("ghp_" + "x" * 30, "[redacted]"))
    assert "x" * 30 not in hidden and '  repo: "a/b"' in hidden
    assert hidden.endswith("\n1 value hidden: it holds the value of a configured secret")
    assert events[-1].kind == "tool.executed" and "approved" in events[-1].flags
    assert events[-1].call_id == request.call_id


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        (False, "it matches ask rule 'github__delete_\\*', and approval was declined"),
        ("yes", "approval was declined"),  # only True is a yes
        (RuntimeError("no terminal"), "needs approval, which failed: no terminal"),
    ],
)
async def test_a_call_that_is_not_approved_is_refused_at_layer_5_and_audited(
    registry: ToolRegistry, events: list[AuditEvent], answer: Any, reason: str
) -> None:
    permissions = Permissions(ask=("github__delete_*",), approver=Approver(answer))
    with pytest.raises(PermissionDenied, match=reason) as info:
        await registry.execute("github__delete_repo", {"repo": "a/b"}, permissions=permissions)
    assert info.value.layer == 5
    assert registry.get("github__delete_repo").calls == []  # type: ignore[attr-defined]
    assert (events[-1].kind, events[-1].layer) == ("tool.denied", 5)


async def test_without_an_approver_a_call_that_asks_is_refused(registry: ToolRegistry) -> None:
    with pytest.raises(PermissionDenied, match="needs approval, and no approver is set"):
        await registry.execute("github__push", {"repo": "a/b"}, permissions=Permissions(ask_destructive=True))


async def test_deny_beats_ask_and_ask_beats_allow(registry: ToolRegistry) -> None:
    approver = Approver(True)
    denied = Permissions(denylist=("github__delete_*",), ask=("github__*",), approver=approver)
    with pytest.raises(PermissionDenied, match="denylist"):
        await registry.execute("github__delete_repo", {"repo": "a/b"}, permissions=denied)
    assert approver.asked == []
    allowed_and_asked = Permissions(allowlist=("github__*",), ask=("github__create_*",), approver=approver)
    await registry.execute("github__create_issue", {"repo": "a/b"}, permissions=allowed_and_asked)
    assert [r.tool.name for r in approver.asked] == ["github__create_issue"]


@pytest.mark.parametrize(
    ("tool", "asks"),
    [
        ("github__delete_repo", True),  # destructiveHint: true
        ("github__push", True),  # no annotations: destructive by MCP's defaults
        ("github__create_issue", False),  # destructiveHint: false
        ("github__get_repo", False),  # readOnlyHint: true
    ],
)
async def test_ask_destructive_follows_the_mcp_annotations(registry: ToolRegistry, tool: str, asks: bool) -> None:
    approver = Approver(True)
    await registry.execute(tool, {"repo": "a/b"}, permissions=Permissions(ask_destructive=True, approver=approver))
    assert [r.reason for r in approver.asked] == (
        ["it may be destructive (MCP annotations: not readOnlyHint, destructiveHint not false)"] if asks else []
    )


async def test_arguments_that_fail_the_schema_are_refused_before_anyone_is_asked(registry: ToolRegistry) -> None:
    approver = Approver(True)
    with pytest.raises(InvalidArguments):
        await registry.execute("github__delete_repo", {}, permissions=Permissions(ask=("*",), approver=approver))
    assert approver.asked == []


def test_ask_globs_are_checked_and_the_approver_is_not_part_of_equality() -> None:
    with pytest.raises(InvalidPattern, match="permissions ask"):
        Permissions(ask=("bad pattern",))
    assert Permissions(ask=("a",), approver=Approver()) == Permissions(ask=("a",))


def test_the_config_carries_ask_rules_and_checks_them() -> None:
    config = PermissionsConfig.model_validate({"ask": ["github__delete_*"], "askDestructive": True})
    permissions = config.to_permissions()
    assert (permissions.ask, permissions.ask_destructive, permissions.approver) == (("github__delete_*",), True, None)
    with pytest.raises(ValueError, match="ask"):
        PermissionsConfig.model_validate({"ask": ["no spaces allowed"]})


NAMES = ["github__delete_repo", "github__push", "github__get_repo", "github__create_issue"]
GLOBS = st.lists(
    st.sampled_from(["github__*", "*__delete_*", "github__get_*", "*push", "github__create_issue", "other__*"]),
    max_size=3,
)


@settings(max_examples=200, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(NAMES), deny=GLOBS, ask=GLOBS, destructive=st.booleans(), answer=st.booleans())
async def test_property_deny_then_ask_then_allow(
    registry: ToolRegistry, name: str, deny: list[str], ask: list[str], destructive: bool, answer: bool
) -> None:
    approver = Approver(answer)
    permissions = Permissions(
        level=Level.ADMIN, denylist=tuple(deny), ask=tuple(ask), ask_destructive=destructive, approver=approver
    )
    spec = registry.spec(name)
    denied = any(compile_patterns([g]).matches(name) for g in deny)
    asks = not denied and (any(compile_patterns([g]).matches(name) for g in ask) or (destructive and spec.destructive))
    runs = not denied and (answer or not asks)
    if runs:
        assert not (await registry.execute(name, {"repo": "r"}, permissions=permissions)).is_error
    else:
        with pytest.raises(PermissionDenied) as info:
            await registry.execute(name, {"repo": "r"}, permissions=permissions)
        assert info.value.layer == 5
    assert len(approver.asked) == (1 if asks else 0)
