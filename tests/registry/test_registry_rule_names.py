"""Permission rules match a tool by every name it is known by: canonical, served, prefixed, alias, upstream."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from local_tools import RecordingTool

from toolsift import PermissionDenied
from toolsift.registry import ApprovalRequest, Level, Permissions, ToolRegistry, ToolRule, ToolSpec
from toolsift.registry.formats import FORMATS


def mcp_tool(server: str, remote: str, prefix: str | None = None) -> RecordingTool:
    """A tool as a session registers it: ``<prefix or server>__<remote>``, its server and own name kept."""
    tool = RecordingTool(f"{prefix or server}__{remote}")
    tool.spec = replace(tool.spec, server=server, remote_name=remote, source="mcp")
    return tool


@dataclass
class Catalogue:
    registry: ToolRegistry
    tools: list[RecordingTool]
    upstream: bool  # served under the servers' own names (prefixNames: false)


BUILTINS = ["read_file", "write_file", "exec_shell", "list_directory"]
# Own names, some too long or with characters a provider refuses, so that the registry aliases them.
REMOTES = ["add", "echo", "delete_repo", "dotted.name", "slash/name", "x" * 70, "y" * 66 + ".z"]


@st.composite
def catalogues(draw: st.DrawFn) -> Catalogue:
    """Builtins and the tools of up to three servers, some under a toolPrefix; each own name used once."""
    builtins = draw(st.lists(st.sampled_from(BUILTINS), unique=True, max_size=3))
    remotes = iter(draw(st.permutations(REMOTES)))
    tools = [RecordingTool(name) for name in builtins]
    upstream = draw(st.booleans())
    registry = ToolRegistry(upstream_names=upstream)
    registry.register_many(tools)
    for server, prefix in zip(["alpha", "beta", "gamma"], ["px", "qy", "rz"], strict=True):
        if not draw(st.booleans()):
            continue
        prefixed = draw(st.booleans())
        served = [
            mcp_tool(server, next(remotes), prefix if prefixed else None)
            for _ in range(draw(st.integers(min_value=1, max_value=2)))
        ]
        registry.replace_server(prefix if prefixed else server, served, internal=False)
        tools += served
    return Catalogue(registry, tools, upstream)


def expected_names(registry: ToolRegistry, spec: ToolSpec, *, upstream: bool) -> list[str]:
    """The names a person meets the tool by, worked out from where each shows up (not from ``names``)."""
    names = [spec.name, *(registry.exported_name(spec.name, fmt) for fmt in FORMATS)]
    if "__" not in spec.name:
        names.append(f"builtin__{spec.name}")  # as `toolsift serve` lists it
    if spec.server is not None and spec.remote_name is not None:
        names.append(f"{spec.server}__{spec.remote_name}")  # the config's key, toolPrefix or not
        if upstream:
            names.append(spec.remote_name)  # a gateway with prefixNames: false
    return names


class Recorder:
    def __init__(self) -> None:
        self.asked: list[str] = []

    async def __call__(self, request: ApprovalRequest) -> bool:
        self.asked.append(request.tool.name)
        return True


@settings(max_examples=150, deadline=None)
@given(catalogue=catalogues(), pick=st.integers(min_value=0), which=st.integers(min_value=0))
async def test_property_a_rule_written_with_any_name_of_a_tool_matches_exactly_its_calls(
    catalogue: Catalogue, pick: int, which: int
) -> None:
    registry, tools, upstream = catalogue.registry, catalogue.tools, catalogue.upstream
    if not tools:
        return
    target = tools[pick % len(tools)].spec
    names = expected_names(registry, target, upstream=upstream)
    name = names[which % len(names)]
    assert set(names) <= set(registry.names(target.name))
    denied = Permissions(level=Level.ADMIN, denylist=(name,))
    allowed = Permissions(level=Level.ADMIN, allowlist=(name,))
    recorder = Recorder()
    asking = Permissions(level=Level.ADMIN, ask=(name,), approver=recorder)
    for tool in tools:
        spec = tool.spec
        is_target = spec.name == target.name
        for permissions, refused in ((denied, is_target), (allowed, not is_target)):
            if refused:
                with pytest.raises(PermissionDenied) as info:
                    await registry.execute(spec.name, {}, permissions=permissions)
                assert info.value.layer == 5
            else:
                assert not (await registry.execute(spec.name, {}, permissions=permissions)).is_error
        await registry.execute(spec.name, {}, permissions=asking)
    assert recorder.asked == [target.name]


async def test_a_bare_rule_reaches_an_upstream_name_only_where_tools_are_served_under_it() -> None:
    # allowlist: ["read_file"] written for the builtin must not start to allow every server's read_file.
    allowlist = Permissions(allowlist=("read_file",))
    for upstream in (False, True):
        registry = ToolRegistry(upstream_names=upstream)
        registry.register(RecordingTool("read_file"))
        registry.replace_server("fs", [mcp_tool("fs", "read_file")], internal=False)
        assert not (await registry.execute("read_file", {}, permissions=allowlist)).is_error
        if upstream:  # served as "read_file" by a gateway with prefixNames: false
            assert not (await registry.execute("fs__read_file", {}, permissions=allowlist)).is_error
        else:
            with pytest.raises(PermissionDenied, match="not in the caller's allowlist"):
                await registry.execute("fs__read_file", {}, permissions=allowlist)


@pytest.mark.parametrize(
    "match", ["builtin__write_file", "write_file", "gh__create_issue", "github__create_issue", "github__*"]
)
def test_config_rules_raise_what_a_tool_requires_whichever_name_they_use(match: str) -> None:
    registry = ToolRegistry(rules=[ToolRule(match, required_level=Level.ADMIN)])
    registry.register(RecordingTool("write_file"))
    registry.replace_server("gh", [mcp_tool("github", "create_issue", prefix="gh")], internal=False)
    raised = {name for name in ("write_file", "gh__create_issue") if registry.spec(name).required_level == Level.ADMIN}
    wanted = {"write_file"} if "write_file" in match else {"gh__create_issue"}
    assert raised == wanted


def test_names_lists_canonical_first_then_the_others_once() -> None:
    registry = ToolRegistry()
    registry.replace_server("gh", [mcp_tool("github", "a.b", prefix="gh")], internal=False)
    names: Any = registry.names("gh__a.b")
    assert names[0] == "gh__a.b" and len(names) == len(set(names))
    assert "github__a.b" in names and registry.exported_name("gh__a.b", "openai") in names
    assert registry.names(registry.exported_name("gh__a.b", "openai")) == names  # looked up by an alias too
