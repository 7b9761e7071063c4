"""A project's skills and plugins cannot start a server on the person's trust: each is judged on where it reaches.

The person's own folder here is ``home/.claude`` (an installed plugin ``kit`` in it); the project is the current
folder. A server whose start reaches outside the person's own folders (its file, ``${CLAUDE_PLUGIN_ROOT}``, its
folder, a relative path) starts only once ``toolsift trust`` has recorded its launch for the file that declares it.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from servers import EXAMPLES
from trust_helpers import MARKER_SERVER

from toolsift._exceptions import SkillUnavailable
from toolsift._skill_servers import Plugin, SkillServers, load_plugins
from toolsift.cli import main
from toolsift.config import ProjectTrust, TrustedLaunches, load_config
from toolsift.registry import ToolRegistry
from toolsift.skills import SkillsLoader
from toolsift.toolbox import Toolbox

PY = sys.executable
GENERAL = str(EXAMPLES / "general.py")
# Claude Code's plugin convention: the server runs from the plugin's own folder, and leaves a mark there.
ROOTED = {"command": PY, "args": ["${CLAUDE_PLUGIN_ROOT}/server.py", "${CLAUDE_PLUGIN_ROOT}/ran", GENERAL]}


class World:
    """The person's own folder with an installed plugin, and a project (the current folder) with its skills."""

    def __init__(self, tmp_path: Path) -> None:
        self.own = tmp_path / "home" / ".claude"
        self.project = tmp_path / "project"
        self.skills = self.project / "skills"
        self.kit = self.own / "plugins" / "kit"
        self.store = ProjectTrust(tmp_path / "trusted-projects.json")
        for folder in (self.skills, self.kit):
            folder.mkdir(parents=True)
        self.kit_file = self.servers(self.kit, {"kit": ROOTED})
        (self.kit / "server.py").write_text(MARKER_SERVER)

    @staticmethod
    def servers(folder: Path, servers: dict[str, Any], name: str = ".mcp.json") -> Path:
        """A server file ``folder/name`` declaring ``servers`` (the bare map Claude Code plugins write)."""
        path = folder / name
        path.write_text(json.dumps(servers), encoding="utf-8")
        return path

    @staticmethod
    def skill(folder: Path, name: str, allowed: str = "kit__*") -> Path:
        path = folder / name
        path.mkdir(parents=True, exist_ok=True)
        (path / "SKILL.md").write_text(f"---\nname: {name}\ndescription: d\nallowed-tools: {allowed}\n---\nbody\n")
        return path

    def project_code(self, folder: Path) -> Path:
        """The project's own ``server.py`` in ``folder``: what must not run unasked; its mark is ``folder/ran``."""
        (folder / "server.py").write_text(MARKER_SERVER)
        return folder / "ran"

    def linked_kit(self, name: str = "kit") -> Path:
        """A project skill whose ``.mcp.json`` is a link to the installed plugin's, beside the project's server.py."""
        folder = self.skill(self.skills, name)
        (folder / ".mcp.json").symlink_to(self.kit_file)
        return folder

    def plugin(self, manifest: dict[str, Any]) -> Path:
        """A project plugin ``plugins/p`` with one skill, ``use-p``."""
        root = self.project / "plugins" / "p"
        (root / ".claude-plugin").mkdir(parents=True)
        (root / ".claude-plugin" / "plugin.json").write_text(json.dumps({"name": "p", **manifest}))
        self.skill(root / "skills", "use-p", allowed="plugin_p_*")
        return root


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    made = World(tmp_path)
    monkeypatch.chdir(made.project)
    return made


@asynccontextmanager
async def hosted(
    world: World, *, plugins: Sequence[Path] = (), user: Path | None = None
) -> AsyncIterator[SkillServers]:
    """The skills' servers under the project's consent, the person's own folder trusted."""
    loaded: list[Plugin] = load_plugins(plugins)[0]
    loader = SkillsLoader(project=world.skills, user=user, extra=[f for p in loaded for f in p.skill_folders])
    loader.load()
    trust = TrustedLaunches(world.store, world.project / "toolsift.json", {})
    host = SkillServers(ToolRegistry(), lambda: loader.skills, plugins=loaded, trust=trust, user_folders=[world.own])
    async with host.running():
        yield host


def refusal(host: SkillServers, server: str) -> str | None:
    servers = {each.name: each for entry in host.owned().values() for each in entry.servers}
    return host.refusal(servers[server])


def trust_all(world: World, host: SkillServers) -> None:
    """What ``toolsift trust`` records: every skill server's launch, for its own file."""
    for entry in host.owned().values():
        for server in entry.servers:
            world.store.remember_launch(entry.sources[server.name], server)


def refused(file: Path, why: str, world: World, server: str = "kit") -> str:
    return (
        f"server {server!r} of {file} reaches outside your own folders ({why}), and the trust given to this project "
        f"has no record of it; run 'toolsift trust' in {world.project} to trust it"
    )


async def test_a_linked_server_file_of_the_persons_runs_the_projects_code_only_once_trusted(world: World) -> None:
    folder = world.linked_kit()
    mark = world.project_code(folder)
    async with hosted(world) as host:
        why = refused(folder / ".mcp.json", f"${{CLAUDE_PLUGIN_ROOT}} is {folder}", world)
        assert host.problem("kit") == why  # what /skills and /use say, without starting anything
        with pytest.raises(SkillUnavailable) as info:
            await host.acquire("kit")
        assert info.value.reason == f"server 'kit' cannot start: could not start: {why}"  # refused at the spawn too
        assert not mark.exists()

        trust_all(world, host)  # the person reviewed it: the project's server.py is theirs to run now
        lease = await host.acquire("kit")
        assert lease is not None and mark.read_text() == "ran"
        assert not (world.kit / "ran").exists()  # it was never the installed plugin's code


@pytest.mark.parametrize("spelling", ["through ..", "absolute"])
async def test_a_manifest_naming_the_persons_file_does_not_lend_it_its_trust(world: World, spelling: str) -> None:
    root = world.plugin({})
    target = os.path.relpath(world.kit_file, root) if spelling == "through .." else str(world.kit_file)
    (root / ".claude-plugin" / "plugin.json").write_text(json.dumps({"name": "p", "mcpServers": target}))
    mark = world.project_code(root)
    async with hosted(world, plugins=[root]) as host:
        why = refused(root / target, f"${{CLAUDE_PLUGIN_ROOT}} is {root}", world, "plugin_p_kit")
        assert host.problem("use-p") == why
        with pytest.raises(SkillUnavailable) as info:
            await host.acquire("use-p")
        assert info.value.reason.endswith(why) and not mark.exists()


@pytest.mark.parametrize("order", ["the person's first", "the project's first"])
async def test_each_file_of_a_plugins_list_is_judged_alone(world: World, order: str) -> None:
    root = world.plugin({})
    mine = World.servers(world.own, {"mine": {"command": PY, "args": [GENERAL]}}, "mine.json")
    theirs = World.servers(root, {"theirs": {"command": PY, "args": [str(root / "server.py")]}}, "theirs.json")
    files = [str(mine), "./theirs.json"] if order == "the person's first" else ["./theirs.json", str(mine)]
    (root / ".claude-plugin" / "plugin.json").write_text(json.dumps({"name": "p", "mcpServers": files}))
    async with hosted(world, plugins=[root]) as host:
        assert refusal(host, "plugin_p_mine") is None  # all of it is the person's
        assert refusal(host, "plugin_p_theirs") == refused(
            root / "./theirs.json", f"its file is {theirs}", world, "plugin_p_theirs"
        )


@pytest.mark.parametrize(
    ("entry", "why"),
    [
        ({"cwd": ".", "args": ["server.py"]}, "its cwd '.' is {folder}"),
        ({"envFile": ".env"}, "its envFile '.env' is {folder}/.env"),
        ({"env": {"TOKEN": "secret://file/token"}}, "its secret file 'token' is {folder}/token"),
    ],
)
async def test_what_the_persons_file_takes_from_its_folder_is_taken_from_where_it_was_found(
    world: World, entry: dict[str, Any], why: str
) -> None:
    World.servers(world.kit, {"kit": {"command": PY, "args": [GENERAL], **entry}})
    folder = world.linked_kit()
    world.project_code(folder)
    (folder / ".env").write_text("PYTHONPATH=./evil\n")
    (folder / "token").write_text("the project's token\n")
    async with hosted(world) as host:
        assert refusal(host, "kit") == refused(folder / ".mcp.json", why.format(folder=folder), world)


@pytest.mark.parametrize(
    ("entry", "why"),
    [
        ({"args": ["server.py"]}, "its argument 'server.py' is {project}/server.py"),
        (
            {"args": [GENERAL, "--config=settings.json"]},
            "its argument '--config=settings.json' is {project}/settings.json",
        ),
        ({"command": "./server.py", "args": []}, "its program './server.py' is {project}/server.py"),
        (
            {"args": [GENERAL], "env": {"PYTHONPATH": "/usr/lib:lib"}},
            "its env variable 'PYTHONPATH' names a path there",
        ),
    ],
)
async def test_a_relative_path_in_the_persons_own_skill_is_judged_where_the_server_starts(
    world: World, entry: dict[str, Any], why: str
) -> None:
    own_skill = World.skill(world.own / "skills", "kit")
    file = World.servers(own_skill, {"kit": {"command": PY, **entry}})
    world.project_code(world.project)
    (world.project / "settings.json").write_text("{}")
    (world.project / "lib").mkdir()
    async with hosted(world, user=world.own / "skills") as host:
        assert refusal(host, "kit") == refused(file, why.format(project=world.project), world)
        assert str(world.project / "lib") not in (refusal(host, "kit") or "")  # an env value is never shown


@pytest.mark.parametrize("leads_to", ["the project", "the person's folder"])
async def test_a_cwd_that_is_a_link_is_judged_where_it_leads(world: World, leads_to: str) -> None:
    World.servers(world.kit, {"kit": {"command": PY, "args": [GENERAL], "cwd": "work"}})
    folder = world.linked_kit()
    target = world.project / "elsewhere" if leads_to == "the project" else world.own / "work"
    target.mkdir()
    (folder / "work").symlink_to(target)
    async with hosted(world) as host:
        expected = (
            None
            if leads_to == "the person's folder"
            else refused(folder / ".mcp.json", f"its cwd 'work' is {target}", world)
        )
        assert refusal(host, "kit") == expected


async def test_a_linked_skill_folder_is_judged_as_the_folder_it_leads_to(world: World) -> None:
    # Not a borrowing: the whole skill is the person's (it also ran unasked before the rule judged each path).
    World.skill(world.kit / "skills", "kit")
    (world.kit / "skills" / "kit" / ".mcp.json").symlink_to(world.kit_file)
    (world.skills / "kit").symlink_to(world.kit / "skills" / "kit")
    (world.project / "copy").mkdir()
    other = World.skill(world.project / "copy", "copied")
    World.servers(other, {"copied": ROOTED})
    (world.skills / "copied").symlink_to(other)
    async with hosted(world) as host:
        assert refusal(host, "kit") is None
        assert refusal(host, "copied") == refused(
            world.skills / "copied" / ".mcp.json", f"its file is {other / '.mcp.json'}", world, "copied"
        )


async def test_a_trusted_launch_is_asked_again_when_its_skill_folder_leads_elsewhere(world: World) -> None:
    kits = world.project / "kits"
    for name in ("a", "b"):
        World.servers(World.skill(kits, name), {"kit": ROOTED})
    (world.skills / "kit").symlink_to(kits / "a")
    async with hosted(world) as host:
        trust_all(world, host)
        assert refusal(host, "kit") is None
    (world.skills / "kit").unlink()
    (world.skills / "kit").symlink_to(kits / "b")  # same file, same text: another folder's server.py
    async with hosted(world) as host:
        assert refusal(host, "kit") == (
            f"server 'kit' of {world.skills / 'kit' / '.mcp.json'} reaches outside your own folders (its file is "
            f"{kits / 'b' / '.mcp.json'}), and the trust given to this project was given to another launch of it; "
            f"run 'toolsift trust' in {world.project} to trust it"
        )


def test_trust_records_a_persons_server_file_that_reaches_into_the_project(
    capsys: pytest.CaptureFixture[str], world: World, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    folder = world.linked_kit()
    World.skill(world.own / "skills", "own", allowed="own__*")
    World.servers(world.own / "skills" / "own", {"own": {"command": PY, "args": [GENERAL]}})
    (world.project / "toolsift.json").write_text(json.dumps({"skills": {"paths": ["skills"]}}))
    with pytest.raises(SystemExit) as info:
        main(["trust"])
    assert info.value.code in (0, None)
    out = capsys.readouterr().out
    file = folder / ".mcp.json"
    assert f"{file} starts: kit: {PY} {folder}/server.py {folder}/ran {GENERAL}\n" in out
    assert f"  it reaches outside your own folders: ${{CLAUDE_PLUGIN_ROOT}} is {folder}\n" in out
    assert "starts: own:" not in out  # the person's own skill reaches nothing of the project
    store = ProjectTrust(tmp_path / "xdg" / "toolsift" / "trusted-projects.json")
    assert list(store.trusted_launches(file)) == ["kit"]


async def test_a_toolbox_under_a_projects_consent_refuses_what_reaches_the_project_and_runs_what_is_yours(
    world: World, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # ~/.claude is the person's own folder
    folder = world.linked_kit()
    mark = world.project_code(folder)
    own = World.skill(world.own / "skills", "own", allowed="own__*")
    World.servers(own, {"own": {"command": PY, "args": [str(own / "server.py"), str(own / "ran"), GENERAL]}})
    (own / "server.py").write_text(MARKER_SERVER)
    path = world.project / "toolsift.json"
    path.write_text(json.dumps({"skills": {"paths": ["skills"]}}))
    trust = world.store.launches(load_config(path), path)
    async with Toolbox(load_config(path), trust=trust) as box:
        chat = box.conversation()
        reply = await chat.handle_command("/use kit")
        assert reply is not None and not reply.ok and f"${{CLAUDE_PLUGIN_ROOT}} is {folder})" in reply.text
        assert not mark.exists()
        assert (await chat.handle_command("/use own")).ok  # type: ignore[union-attr]
        assert (own / "ran").read_text() == "ran"


async def test_what_resolves_only_at_the_start_is_left_to_the_start(world: World) -> None:
    # An unset variable in a secret file's path, another kind of secret, a missing env file: the start says why.
    own_skill = World.skill(world.own / "skills", "kit")
    entry = {"env": {"A": "secret://file/${TOOLSIFT_TEST_UNSET}", "B": "secret://env/HOME"}, "envFile": "none.env"}
    World.servers(own_skill, {"kit": {"command": PY, "args": [GENERAL], **entry}})
    (world.project / "none.env").write_text("PYTHONPATH=.\n")  # not the file the server reads
    async with hosted(world, user=world.own / "skills") as host:
        assert refusal(host, "kit") is None
