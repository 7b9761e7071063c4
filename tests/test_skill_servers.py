"""A skill's or a plugin's own servers: started at /use, theirs alone, stopped when idle, under the trust rule."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp_helpers import example_server, in_memory
from servers import EXAMPLES

from toolsift._skill_servers import SkillServers
from toolsift.agent import Conversation, ToolCall
from toolsift.config import ProjectTrust, TrustedLaunches
from toolsift.mcp_sessions import SessionOptions
from toolsift.mcp_sessions._internal import SessionState
from toolsift.registry import ToolRegistry
from toolsift.skills import SkillsLoader
from toolsift.toolbox import Toolbox

GENERAL = {"command": sys.executable, "args": [str(EXAMPLES / "general.py")]}
EXAMPLE_SKILLS = EXAMPLES.parent / "skills"
EXAMPLE_PLUGINS = EXAMPLES.parent / "plugins"
RUN_SERVER = """\
import runpy, sys
server = sys.argv[1]
sys.argv[1:] = []
sys.path.insert(0, server.rsplit("/", 1)[0])
runpy.run_path(server, run_name="__main__")
"""


def skill(folder: Path, name: str, allowed: str, servers: dict[str, Any] | None = None) -> Path:
    """A skill folder ``folder/name`` with a SKILL.md and, given ``servers``, a ``.mcp.json`` beside it."""
    path = folder / name
    path.mkdir(parents=True)
    (path / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: The {name} skill.\nallowed-tools: {allowed}\n---\nUse the tools.\n",
        encoding="utf-8",
    )
    if servers is not None:
        (path / ".mcp.json").write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    return path


class IdleClock:
    """What a skill server's idle time waits on: a test ends it with :meth:`elapse`, never with a sleep."""

    def __init__(self) -> None:
        self.asked: list[float] = []
        self._elapsed = anyio.Event()

    async def wait(self, seconds: float) -> None:
        self.asked.append(seconds)
        await self._elapsed.wait()

    def elapse(self) -> None:
        self._elapsed.set()


@asynccontextmanager
async def hosted(
    folder: Path, *, clock: IdleClock | None = None, **options: Any
) -> AsyncIterator[tuple[SkillServers, ToolRegistry, SkillsLoader]]:
    registry = ToolRegistry()
    loader = SkillsLoader(project=folder)
    loader.load()
    wait = clock.wait if clock is not None else anyio.sleep
    host = SkillServers(registry, lambda: loader.skills, idle_wait=wait, idle_seconds=42, **options)
    async with host.running():
        yield host, registry, loader


def calc_in_process() -> SessionOptions:
    """The skill's server ``calc`` in this process: for what a skill's own server is, not for its start,
    which the tests of trust and of the example folders run as a child."""
    return in_memory({"calc": example_server("general.py")})


async def call(chat: Conversation, tool: str, **arguments: Any) -> tuple[bool, str]:
    message = await chat.call_tool(ToolCall("c1", tool, arguments))
    return message.result.is_error, "".join(getattr(block, "text", "") for block in message.result.content)


async def test_use_starts_a_skills_server_whose_tools_it_alone_sees_until_unuse_and_idle_stop(tmp_path: Path) -> None:
    skill(tmp_path, "adder", "calc__add, calc__echo", {"calc": GENERAL})
    skill(tmp_path, "peek", "calc__*")  # names the server, but does not own it
    clock = IdleClock()
    async with hosted(tmp_path, clock=clock, options=calc_in_process()) as (host, registry, loader):
        removed = anyio.Event()
        host.group.subscribe(lambda event: removed.set() if event.kind == "server.removed" else None)
        chat = Conversation(registry, loader, skill_servers=host)
        other = Conversation(registry, loader, skill_servers=host)
        assert "calc" not in host.group and "calc__add" not in registry  # nothing runs before /use

        reply = await chat.handle_command("/use adder")
        assert reply is not None and reply.ok, reply
        assert host.group["calc"].state is SessionState.READY
        assert {tool.spec.name for tool in registry.visible_tools(chat.scope())} == {"calc__add", "calc__echo"}
        failed, text = await call(chat, "calc__add", a=2, b=3)
        assert not failed and "5" in text
        failed, text = await call(chat, "calc__fail", message="x")  # a tool of the server the skill does not allow
        assert failed and "denied" in text

        # Another skill that names the server, in another conversation, sees none of its tools.
        assert (await other.handle_command("/use peek")).ok  # type: ignore[union-attr]
        assert registry.visible_tools(other.scope()) == []
        failed, text = await call(other, "calc__add", a=1, b=1)
        assert failed and "denied at layer 4" in text

        assert (await chat.handle_command("/unuse")).ok  # type: ignore[union-attr]
        failed, _ = await call(chat, "calc__add", a=2, b=3)
        assert failed
        assert host.group["calc"].state is SessionState.READY  # kept for the idle time, in case the skill comes back
        await anyio.wait_all_tasks_blocked()
        assert clock.asked == [42]

        clock.elapse()
        await removed.wait()
        assert "calc" not in host.group and "calc__add" not in registry

        # /use again starts it again.
        assert (await chat.handle_command("/use adder")).ok  # type: ignore[union-attr]
        assert not (await call(chat, "calc__echo", text="back"))[0]


async def test_a_skill_used_again_before_its_idle_time_ends_keeps_its_server(tmp_path: Path) -> None:
    skill(tmp_path, "adder", "calc__add", {"calc": GENERAL})
    skill(tmp_path, "plain", "nothing__*")
    clock = IdleClock()
    async with hosted(tmp_path, clock=clock, options=calc_in_process()) as (host, registry, loader):
        chat = Conversation(registry, loader, skill_servers=host)
        assert (await chat.handle_command("/use adder")).ok  # type: ignore[union-attr]
        session = host.group["calc"]
        assert (await chat.handle_command("/use plain")).ok  # type: ignore[union-attr]  # switching lets it go
        await anyio.wait_all_tasks_blocked()
        assert clock.asked == [42]
        assert (await chat.handle_command("/use adder")).ok  # type: ignore[union-attr]
        clock.elapse()
        await anyio.wait_all_tasks_blocked()
        assert host.group["calc"] is session and session.state is SessionState.READY


async def test_a_server_whose_program_is_missing_makes_skills_and_use_say_why(tmp_path: Path) -> None:
    skill(tmp_path, "broken", "gone__*", {"gone": {"command": str(tmp_path / "no-such-program")}})
    skill(tmp_path, "fine", "nothing__*")
    async with hosted(tmp_path) as (host, registry, loader):
        chat = Conversation(registry, loader, skill_servers=host)
        listing = (await chat.handle_command("/skills")).text  # type: ignore[union-attr]
        assert f"! broken - cannot be used: server 'gone': its command '{tmp_path / 'no-such-program'}'" in listing
        assert "is not an executable file" in listing and str(tmp_path / "broken" / ".mcp.json") in listing
        assert "/use fine" in listing
        reply = await chat.handle_command("/use broken")
        assert reply is not None and not reply.ok
        assert reply.text.startswith("Skill 'broken' cannot be used: server 'gone'")
        assert chat.active_skill is None and "gone" not in host.group


async def test_a_server_that_fails_to_start_makes_use_say_why_and_skills_remember_it(tmp_path: Path) -> None:
    crashing = {"command": sys.executable, "args": ["-c", "import sys; sys.exit(3)"]}
    skill(tmp_path, "crashy", "crash__*", {"crash": crashing})
    async with hosted(tmp_path) as (host, registry, loader):
        chat = Conversation(registry, loader, skill_servers=host)
        assert "/use crashy" in (await chat.handle_command("/skills")).text  # type: ignore[union-attr]
        reply = await chat.handle_command("/use crashy")
        assert reply is not None and not reply.ok
        assert reply.text.startswith("Skill 'crashy' cannot be used: server 'crash' cannot start: ")
        assert chat.active_skill is None
        listing = (await chat.handle_command("/skills")).text  # type: ignore[union-attr]
        assert listing.startswith("! crashy - cannot be used: server 'crash' cannot start: ")


async def test_a_project_skills_server_starts_only_once_trusted_and_a_users_own_needs_no_trust(tmp_path: Path) -> None:
    project, own = tmp_path / "project" / "skills", tmp_path / "home" / "skills"
    folder = skill(project, "adder", "calc__add", {"calc": GENERAL})
    skill(own, "mine", "mycalc__add", {"mycalc": GENERAL})
    store = ProjectTrust(tmp_path / "trusted-projects.json")
    trust = TrustedLaunches(store, tmp_path / "project" / "toolsift.json", {})
    registry = ToolRegistry()
    loader = SkillsLoader(project=project, user=own)
    loader.load()
    # The project's server is a real child (what trust admits is a launch); the user's own runs in this process.
    options = in_memory({"mycalc": example_server("general.py")}, SessionOptions())
    host = SkillServers(registry, lambda: loader.skills, trust=trust, user_folders=[own], options=options)
    async with host.running():
        chat = Conversation(registry, loader, skill_servers=host)
        listing = (await chat.handle_command("/skills")).text  # type: ignore[union-attr]
        assert (
            f"! adder - cannot be used: server 'calc' of {folder / '.mcp.json'} reaches outside your own folders (its "
            f"file is {folder / '.mcp.json'}), and the trust given to this project has no record of it; run "
            f"'toolsift trust' in {Path.cwd()} to trust it"
        ) in listing
        reply = await chat.handle_command("/use adder")
        assert reply is not None and not reply.ok and "toolsift trust" in reply.text
        assert "calc" not in host.group

        assert (await chat.handle_command("/use mine")).ok  # type: ignore[union-attr]  # the user's own folder

        for entry in host.owned().values():
            for server in entry.servers:
                store.remember_launch(entry.sources[server.name], server)
        assert (await chat.handle_command("/use adder")).ok  # type: ignore[union-attr]
        assert not (await call(chat, "calc__add", a=1, b=2))[0]


async def test_a_plugin_loads_its_skills_and_servers_with_its_root_resolved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plugin = tmp_path / "kit"
    shutil.copytree(EXAMPLE_PLUGINS / "pocket-tools", plugin)
    manifest = plugin / ".claude-plugin" / "plugin.json"
    manifest.write_text(json.dumps({"name": "kit"}), encoding="utf-8")
    # The plugin starts its server from its own folder, as plugins do: a script of its own that runs the example.
    (plugin / "bin").mkdir()
    (plugin / "bin" / "serve.py").write_text(RUN_SERVER, encoding="utf-8")
    server = {
        "command": sys.executable,
        "args": ["${CLAUDE_PLUGIN_ROOT}/bin/serve.py", str(EXAMPLES / "general.py")],
        "env": {"KIT_HOME": "${CLAUDE_PLUGIN_ROOT}/data"},
    }
    (plugin / ".mcp.json").write_text(json.dumps({"general": server}), encoding="utf-8")
    skill(plugin / "skills", "kit-home", "mcp__plugin_kit_general__env_get")
    # The environment's value is another plugin's root: a plugin's paths are its own.
    monkeypatch.setenv("CLAUDE_PLUGIN_ROOT", str(tmp_path / "elsewhere"))
    config = tmp_path / "toolsift.json"
    config.write_text(json.dumps({"skills": {"paths": [], "userSkills": False, "plugins": ["kit"]}}), encoding="utf-8")
    async with Toolbox.from_config(config) as box:
        assert {"kit-home", "pocket-echo"} <= set(box.skills.skills.skills)
        chat = box.conversation()
        assert (await chat.handle_command("/use kit-home")).ok  # type: ignore[union-attr]
        failed, text = await call(chat, "plugin_kit_general__env_get", name="KIT_HOME")
        assert not failed and "[redacted]" in text  # set (env values are masked in results)
        started = box.parts.skill_servers.group["plugin_kit_general"].config  # type: ignore[union-attr]
        assert started.args[0] == f"{plugin.resolve()}/bin/serve.py"
        assert started.env == {"KIT_HOME": f"{plugin.resolve()}/data"}
        assert "plugin_kit_general" in box.parts.unsearchable()  # a tool search never finds a skill's tools


async def test_the_example_skill_and_plugin_run_from_the_example_config_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLSIFT_PYTHON", sys.executable)
    config = tmp_path / "toolsift.json"
    settings = {"paths": [str(EXAMPLE_SKILLS)], "userSkills": False, "plugins": [str(EXAMPLE_PLUGINS)]}
    config.write_text(json.dumps({"skills": settings}), encoding="utf-8")
    async with Toolbox.from_config(config) as box:
        chat = box.conversation()
        assert (await chat.handle_command("/use add-up")).ok  # type: ignore[union-attr]
        failed, text = await call(chat, "calc__add", a=2, b=3)
        assert not failed and "5" in text
        assert (await chat.handle_command("/use pocket-echo")).ok  # type: ignore[union-attr]
        failed, text = await call(chat, "plugin_pocket-tools_general__echo", text="hello")
        assert not failed and "hello" in text
        assert (await call(chat, "calc__add", a=2, b=3))[0]  # add-up's server is not pocket-echo's
