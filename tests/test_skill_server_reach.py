"""Properties of the trust rule of skills' servers: whatever the project does with links, roots and relative paths,
a start that reaches into it is never made without a question, and the person's own skills are not asked about.

The person writes their skill's server entry (drawn from what such entries hold); the project chooses where that
entry is found (the person's folder itself, a linked ``.mcp.json``, a linked skill folder, a plugin manifest that
names the file through ``..`` or by its path) and what its own folders hold there. What a start reaches is worked
out apart from the rule, from what the start itself resolves (``resolve_server``): the file, the folder the child
starts in, its program, arguments, environment and env file, each by its real path.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import chdir, contextmanager
from dataclasses import dataclass
from pathlib import Path
from random import Random

from hypothesis import given, settings
from hypothesis import strategies as st

from toolsift._exceptions import SecretError
from toolsift._skill_servers import Plugin, SkillServers, read_plugin
from toolsift.config import ProjectTrust, ServerConfig, TrustedLaunches
from toolsift.config._internal import resolve_server
from toolsift.registry import ToolRegistry
from toolsift.skills import SkillsLoader

OWN = "<own>"  # stands for the person's folder in a drawn value: they write absolute paths of their own
ROOT = "${CLAUDE_PLUGIN_ROOT}"
PLACES = ("own", "linked file", "linked folder", "manifest through ..", "manifest by path")

commands = st.sampled_from(["python3", sys.executable, "./server.py", f"{ROOT}/server.py", f"{OWN}/server.py"])
args = st.lists(
    st.sampled_from(
        [
            "server.py",
            "lib",
            "-y",
            ".",
            "--config=server.py",
            "PYTHONPATH=lib",
            f"{ROOT}/server.py",
            f"{ROOT}/../kit/server.py",
            f"{OWN}/server.py",
            "@scope/package",
        ]
    ),
    max_size=3,
)
cwds = st.sampled_from([None, ".", "work", "lib", ROOT, f"{OWN}/work"])
env_files = st.sampled_from([None, ".env", f"{ROOT}/.env", f"{OWN}/.env"])
python_paths = st.sampled_from([None, "lib", f"{OWN}/lib", f"{ROOT}/lib", "/usr/lib:lib", "/usr/lib"])


@dataclass(frozen=True)
class Entry:
    """A server entry as the person writes it, and where its folder ``work`` leads in the project's copy."""

    command: str
    args: list[str]
    cwd: str | None
    env_file: str | None
    python_path: str | None
    work_in_project: bool

    def written(self, own: Path) -> dict[str, object]:
        def mine(value: str) -> str:
            return value.replace(OWN, str(own))

        entry: dict[str, object] = {"command": mine(self.command), "args": [mine(a) for a in self.args]}
        if self.cwd is not None:
            entry["cwd"] = mine(self.cwd)
        if self.env_file is not None:
            entry["envFile"] = mine(self.env_file)
        if self.python_path is not None:
            entry["env"] = {"PYTHONPATH": mine(self.python_path)}
        return entry


entries = st.builds(Entry, commands, args, cwds, env_files, python_paths, st.booleans())


def furnish(folder: Path) -> None:
    """What a server folder holds, the person's or the project's: code, a library, a work folder, an env file."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "server.py").write_text("print('hello')\n")
    (folder / "lib").mkdir()
    (folder / ".env").write_text("PYTHONPATH=lib\nMODE=production\n")


def skill_md(folder: Path, name: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: d\nallowed-tools: x__*\n---\nbody\n")


@dataclass(frozen=True)
class Placed:
    """One server of a skill, run from the project's folder under its consent, the person's folder theirs."""

    host: SkillServers
    server: ServerConfig
    file: Path
    project: Path
    store: ProjectTrust

    def refusal(self) -> str | None:
        return self.host.refusal(self.server)


@contextmanager
def hosted(base: Path, loader: SkillsLoader, plugins: Sequence[Plugin], own: Path) -> Iterator[Placed]:
    """The skills' only server, in the project folder (the current one) under its consent."""
    project, store = base / "project", ProjectTrust(base / "trusted-projects.json")
    trust = TrustedLaunches(store, project / "toolsift.json", {})
    loader.load()
    host = SkillServers(ToolRegistry(), lambda: loader.skills, plugins=plugins, trust=trust, user_folders=[own])
    # A plugin's server is owned by each of its skills: one server all the same.
    [(server, file)] = {
        s.name: (s, found.sources[s.name]) for found in host.owned().values() for s in found.servers
    }.values()
    with chdir(project):
        yield Placed(host, server, file, project, store)


@contextmanager
def placed(entry: Entry, place: str) -> Iterator[Placed]:
    """The person's entry, found where the project put it."""
    with tempfile.TemporaryDirectory() as temp:
        base = Path(os.path.realpath(temp))
        own, project = base / "home" / ".claude" / "kit", base / "project"
        furnish(own)
        (own / "work").mkdir()
        skill_md(own, "kit")
        (own / ".mcp.json").write_text(json.dumps({"srv": entry.written(own)}))
        furnish(project)
        (project / "work").mkdir()
        loader, plugins = _place(own, project, place, entry.work_in_project)
        with hosted(base, loader, plugins, own.parent) as found:
            yield found


def _place(own: Path, project: Path, place: str, work_in_project: bool) -> tuple[SkillsLoader, list[Plugin]]:
    if place == "own":
        return SkillsLoader(user=own.parent), []
    if place == "linked folder":
        (project / "skills").mkdir()
        (project / "skills" / "kit").symlink_to(own)
        return SkillsLoader(project=project / "skills"), []
    folder = project / "skills" / "kit" if place == "linked file" else project / "plugins" / "p"
    furnish(folder)
    (folder / "work").symlink_to(project / "work" if work_in_project else own / "work")
    if place == "linked file":
        skill_md(folder, "kit")
        (folder / ".mcp.json").symlink_to(own / ".mcp.json")
        return SkillsLoader(project=folder.parent), []
    (folder / ".claude-plugin").mkdir()
    named = os.path.relpath(own / ".mcp.json", folder) if place == "manifest through .." else str(own / ".mcp.json")
    manifest = {"name": "p", "mcpServers": named}
    (folder / ".claude-plugin" / "plugin.json").write_text(json.dumps(manifest))
    skill_md(folder / "skills" / "use-p", "use-p")
    plugins = [read_plugin(folder)]
    return SkillsLoader(extra=plugins[0].skill_folders), plugins


def reaches(found: Placed) -> bool:
    """Whether the start touches anything in the project, as the start itself resolves the launch.

    The folder a server without ``cwd`` starts in (toolsift's own, the project) is not counted: every server
    without one starts there, the person's own config's too. A relative value counts when it names something there.
    """
    server, folder, cwd = found.server, found.project, found.project
    if Path(os.path.realpath(found.file)).is_relative_to(folder):
        return True
    try:
        resolved = resolve_server(server)
    except SecretError:
        return False  # it cannot start
    runs_in = resolved.cwd if resolved.cwd is not None else cwd
    touched = [] if resolved.cwd is None else [resolved.cwd]
    if server.env_file is not None:
        touched.append(server.base_dir / Path(server.env_file).expanduser())
    values = [*resolved.args, *(arg.partition("=")[2] for arg in resolved.args)]
    values += [piece for value in resolved.env.values() for piece in value.split(os.pathsep)]
    values += [resolved.command] if os.sep in resolved.command else []
    for value in filter(None, values):
        path = Path(value) if os.path.isabs(value) else runs_in / value
        if os.path.isabs(value) or os.path.lexists(path):
            touched.append(path)
    return any(Path(os.path.realpath(path)).is_relative_to(folder) for path in touched)


@settings(max_examples=300)
@given(entries, st.sampled_from(PLACES))
def test_a_start_that_reaches_into_the_project_is_never_made_without_a_question(entry: Entry, place: str) -> None:
    with placed(entry, place) as found:
        if reaches(found):
            assert found.refusal() is not None


@settings(max_examples=300)
@given(entries, st.sampled_from(["own", "linked folder"]))
def test_the_persons_own_skill_is_not_asked_about_unless_it_reaches_into_the_project(entry: Entry, place: str) -> None:
    with placed(entry, place) as found:
        refused = found.refusal()
        assert (refused is not None) == reaches(found), refused


@settings(max_examples=100)
@given(entries, st.sampled_from(PLACES))
def test_a_recorded_consent_covers_the_launch_it_was_given_for(entry: Entry, place: str) -> None:
    with placed(entry, place) as found:
        found.store.remember_launch(found.file, found.server)  # what toolsift trust records
        assert found.refusal() is None


@settings(max_examples=100)
@given(st.lists(st.booleans(), min_size=1, max_size=4), st.randoms(use_true_random=False))
def test_each_file_of_a_plugins_list_is_judged_alone(theirs: list[bool], order: Random) -> None:
    with tempfile.TemporaryDirectory() as temp:
        base = Path(os.path.realpath(temp))
        own, root = base / "own", base / "project" / "plugins" / "p"
        for folder in (own, root / ".claude-plugin"):
            folder.mkdir(parents=True)
        files = []
        for index, project_file in enumerate(theirs):
            folder = root if project_file else own
            code = folder / f"s{index}.py"  # each names its own code by an absolute path: judged with its file
            code.write_text("print('hello')\n")
            (folder / f"s{index}.json").write_text(
                json.dumps({f"s{index}": {"command": "python3", "args": [str(code)]}})
            )
            files.append(f"./s{index}.json" if project_file else str(own / f"s{index}.json"))
        order.shuffle(files)
        (root / ".claude-plugin" / "plugin.json").write_text(json.dumps({"name": "p", "mcpServers": files}))
        skill_md(root / "skills" / "use-p", "use-p")
        plugin = read_plugin(root)
        loader = SkillsLoader(extra=plugin.skill_folders)
        loader.load()
        trust = TrustedLaunches(ProjectTrust(base / "trusted-projects.json"), base / "toolsift.json", {})
        host = SkillServers(ToolRegistry(), lambda: loader.skills, plugins=[plugin], trust=trust, user_folders=[own])
        servers = {server.name: server for server in host.owned()["use-p"].servers}
        assert len(servers) == len(theirs)
        with chdir(base):
            for index, project_file in enumerate(theirs):
                refused = host.refusal(servers[f"plugin_p_s{index}"])
                assert (refused is not None) == project_file, refused
