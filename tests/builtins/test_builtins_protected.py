"""Protected paths: builtin tools never read or write what configures toolsift, and programs never see it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from sandbox_helpers import needs_bwrap

from toolsift import PolicyDenied
from toolsift.builtins import CommandPolicy, Workspace, builtin_tools, protected_paths
from toolsift.builtins._protected import ProtectedPath
from toolsift.builtins._shell import ShellTool
from toolsift.config import HttpServer, load_config, parse_config
from toolsift.registry import Level, Permissions, ToolRegistry

EXECUTE = Permissions(level=Level.EXECUTE)
SECRET = "sk-protected-0123456789abcdef"


def write_config(folder: Path, data: dict[str, object]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "toolsift.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def server(**fields: object) -> dict[str, object]:
    return {"command": "python3", "args": ["server.py"], **fields}


def paths(entries: tuple[ProtectedPath, ...]) -> dict[Path, str]:
    return {entry.path: entry.reason for entry in entries}


def test_protected_paths_cover_everything_that_configures_toolsift(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLSIFT_TEST_DIR", str(tmp_path / "from-env"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    project = tmp_path / "project"
    config = load_config(
        write_config(
            project,
            {
                "tools": {
                    "mcpServers": {
                        "api": server(envFile="app.env", env={"KEY": "secret://file/secrets/api.key"}),
                        "web": {
                            "url": "https://example.com/mcp",
                            "headers": {"Authorization": "secret://file//run/s/token"},
                        },
                        "home": server(
                            envFile="${TOOLSIFT_TEST_DIR}/home.env",
                            env={"A": "secret://file/~/.token", "B": "secret://env/B"},
                        ),
                        "off": server(enabled=False, envFile="off.env"),
                    }
                },
                "skills": {"paths": ["skills"], "userSkills": True},
                "audit": {"path": "logs/audit.jsonl"},
            },
        )
    )
    found = paths(protected_paths(config, user_skill_folders=[tmp_path / "user-skills"]))
    xdg = Path(os.environ["XDG_CONFIG_HOME"])
    assert found == {
        project / "toolsift.json": "a config file toolsift loaded",
        project / ".mcp.json": "a config file toolsift reads in this project",
        project / ".vscode" / "mcp.json": "a config file toolsift reads in this project",
        project / ".cursor" / "mcp.json": "a config file toolsift reads in this project",
        xdg / "toolsift": "toolsift's user folder (user config, trust store, OAuth tokens)",
        tmp_path / "cache" / "toolsift": "toolsift's cache (search embeddings)",
        project / "app.env": "the env file of server 'api'",
        project / "secrets" / "api.key": "a secret file of server 'api'",
        Path("/run/s/token"): "a secret file of server 'web'",
        tmp_path / "from-env" / "home.env": "the env file of server 'home'",
        Path.home() / ".token": "a secret file of server 'home'",
        project / "off.env": "the env file of server 'off'",
        project / "skills": "a skills folder",
        tmp_path / "user-skills": "a skills folder",
        project / "logs" / "audit.jsonl": "toolsift's audit log",
    }


def test_protected_paths_leave_out_user_skills_the_config_does_not_read(tmp_path: Path) -> None:
    config = load_config(write_config(tmp_path, {"skills": {"userSkills": False}}))
    found = paths(protected_paths(config, user_skill_folders=[tmp_path / "user-skills"]))
    assert tmp_path / "user-skills" not in found
    assert {tmp_path / ".toolsift" / "skills", tmp_path / ".claude" / "skills"} <= set(found)


def test_protected_paths_of_a_client_file_cover_its_project(tmp_path: Path) -> None:
    vscode = tmp_path / ".vscode"
    vscode.mkdir()
    (vscode / "mcp.json").write_text(json.dumps({"servers": {}}), encoding="utf-8")
    found = paths(protected_paths(load_config(vscode / "mcp.json"), sources=[tmp_path / "extra.json"]))
    assert found[vscode / "mcp.json"] == "a config file toolsift loaded"
    assert found[tmp_path / "extra.json"] == "a config file toolsift loaded"
    assert found[tmp_path / "toolsift.json"] == "a config file toolsift reads in this project"


def test_protected_paths_skip_references_that_cannot_resolve(tmp_path: Path) -> None:
    config = load_config(
        write_config(
            tmp_path,
            {
                "tools": {
                    "mcpServers": {
                        "api": server(
                            envFile="${TOOLSIFT_UNSET_VARIABLE}/x.env", env={"K": "secret://file/${TOOLSIFT_UNSET_2}"}
                        )
                    }
                }
            },
        )
    )
    found = paths(protected_paths(config))
    assert not any("server 'api'" in reason for reason in found.values())


def test_user_folder_is_where_the_trust_and_token_stores_are() -> None:
    # toolsift's stores are placed by other rooms; the protected folder must hold each of them.
    from toolsift._folders import user_config_path
    from toolsift.cli._trust import trust_store
    from toolsift.mcp_sessions._internal import token_file

    found = protected_paths(parse_config({}))
    folder = next(entry.path for entry in found if entry.reason.startswith("toolsift's user folder"))
    stores = [user_config_path(), trust_store().store, token_file(HttpServer(name="s", url="https://x.example"))]
    assert all(folder in store.parents for store in stores)


# -- the workspace's check -------------------------------------------------------------------------


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "secrets").mkdir(parents=True)
    (root / "secrets" / "api.key").write_text(SECRET, encoding="utf-8")
    (root / "toolsift.json").write_text("{}", encoding="utf-8")
    (root / "notes.txt").write_text("notes", encoding="utf-8")
    return root


def guarded(ws: Path) -> Workspace:
    return Workspace(
        ws,
        protected=[
            ProtectedPath(ws / "toolsift.json", "a config file toolsift loaded"),
            ProtectedPath(ws / "secrets" / "api.key", "a secret file of server 'api'"),
            ProtectedPath(ws / ".toolsift" / "skills", "a skills folder", folder=True),
        ],
    )


def registry_of(workspace: Workspace) -> ToolRegistry:
    registry = ToolRegistry()
    registry.register_many(builtin_tools(workspace))
    return registry


@pytest.mark.parametrize(
    "path",
    [
        "toolsift.json",
        "./toolsift.json",
        "secrets/../toolsift.json",
        "secrets/api.key",
        "notes/../secrets/api.key",
        ".toolsift/skills",
        ".toolsift/skills/new/SKILL.md",
    ],
)
def test_workspace_refuses_protected_paths(ws: Path, path: str) -> None:
    with pytest.raises(PolicyDenied, match=r"builtin tools never read or write what configures toolsift"):
        guarded(ws).resolve(path, tool="read_file")


def test_workspace_refusal_names_the_path_and_why(ws: Path) -> None:
    with pytest.raises(PolicyDenied) as refused:
        guarded(ws).resolve(str(ws / "secrets" / "api.key"), tool="read_file")
    assert str(refused.value) == (
        f"Tool 'read_file' refused by the workspace policy: the path {str(ws / 'secrets' / 'api.key')!r} resolves "
        f"to {str(ws.resolve() / 'secrets' / 'api.key')!r}, at {str(ws / 'secrets' / 'api.key')!r}: a secret file "
        "of server 'api'; builtin tools never read or write what configures toolsift"
    )
    with pytest.raises(PolicyDenied, match=r"inside '.*skills': a skills folder"):
        guarded(ws).resolve(".toolsift/skills/x/SKILL.md")


def test_workspace_refuses_links_to_protected_paths(ws: Path) -> None:
    (ws / "config-link").symlink_to(ws / "toolsift.json")
    (ws / "secrets-link").symlink_to(ws / "secrets")
    with pytest.raises(PolicyDenied, match="a config file toolsift loaded"):
        guarded(ws).resolve("config-link")
    with pytest.raises(PolicyDenied, match="a secret file"):
        guarded(ws).resolve("secrets-link/api.key")


def test_workspace_refuses_hard_links_to_protected_files(ws: Path) -> None:
    os.link(ws / "secrets" / "api.key", ws / "innocent.txt")
    with pytest.raises(PolicyDenied, match=r"'innocent.txt' is a hard link to '.*api.key': a secret file of server 'a"):
        guarded(ws).resolve("innocent.txt")


def test_workspace_follows_links_made_after_it_was_built(ws: Path) -> None:
    workspace = guarded(ws)
    # .toolsift/skills did not exist; a link put in its way later must not lead around it.
    (ws / "elsewhere" / "skills").mkdir(parents=True)
    (ws / ".toolsift").symlink_to(ws / "elsewhere")
    with pytest.raises(PolicyDenied, match="a skills folder"):
        workspace.resolve("elsewhere/skills/new/SKILL.md")


def test_workspace_inside_a_protected_folder_reaches_nothing(tmp_path: Path) -> None:
    workspace = Workspace(tmp_path, protected=[ProtectedPath(tmp_path, "a skills folder", folder=True)])
    with pytest.raises(PolicyDenied, match="a skills folder"):
        workspace.resolve("anything.txt")


def test_workspace_protected_set_may_change(ws: Path) -> None:
    current: list[ProtectedPath] = []
    workspace = Workspace(ws, protected=lambda: current)
    assert workspace.resolve("notes.txt") == ws.resolve() / "notes.txt"
    current.append(ProtectedPath(ws / "notes.txt", "the env file of server 'new'"))
    with pytest.raises(PolicyDenied, match="server 'new'"):
        workspace.resolve("notes.txt")


async def test_file_tools_refuse_protected_paths_and_write_nothing(ws: Path) -> None:
    registry = registry_of(guarded(ws))
    with pytest.raises(PolicyDenied, match="a config file toolsift loaded"):
        await registry.execute("write_file", {"path": "toolsift.json", "content": '{"tools": {}}'})
    with pytest.raises(PolicyDenied, match="a skills folder"):
        await registry.execute("write_file", {"path": ".toolsift/skills/evil/SKILL.md", "content": "---"})
    with pytest.raises(PolicyDenied, match="a secret file"):
        await registry.execute("read_file", {"path": "secrets/api.key"})
    assert (ws / "toolsift.json").read_text(encoding="utf-8") == "{}"
    assert not (ws / ".toolsift").exists()


async def test_list_directory_hides_protected_entries(ws: Path) -> None:
    (ws / "config-link").symlink_to(ws / "toolsift.json")
    (ws / ".toolsift" / "skills").mkdir(parents=True)
    registry = registry_of(guarded(ws))
    top = await registry.execute("list_directory", {})
    assert top.text_content() == ".toolsift/\nnotes.txt\nsecrets/"
    inner = await registry.execute("list_directory", {"path": "secrets"})
    assert inner.text_content() == "'secrets' is empty"
    assert (await registry.execute("list_directory", {"path": ".toolsift"})).text_content() == "'.toolsift' is empty"
    with pytest.raises(PolicyDenied, match="a skills folder"):
        await registry.execute("list_directory", {"path": ".toolsift/skills"})


# -- the sandbox hides them --------------------------------------------------------------------------


def shell_of(workspace: Workspace, *programs: str) -> ToolRegistry:
    registry = ToolRegistry()
    registry.register(ShellTool(workspace, CommandPolicy(allowed_programs=programs, timeout=60)).tool())
    return registry


@needs_bwrap
async def test_sandbox_creates_a_missing_protected_folder_and_hides_it(ws: Path) -> None:
    registry = shell_of(guarded(ws), "mkdir", "mv")
    result = await registry.execute("exec_shell", {"command": "mkdir -p .toolsift/skills/evil"}, permissions=EXECUTE)
    assert result.is_error
    assert "Read-only file system" in result.text_content()
    assert (ws / ".toolsift" / "skills").is_dir()
    assert list((ws / ".toolsift" / "skills").iterdir()) == []
    # The folder holding it is pinned: it cannot be renamed away, to make a new one in its place.
    moved = await registry.execute("exec_shell", {"command": "mv .toolsift moved"}, permissions=EXECUTE)
    assert "Device or resource busy" in moved.text_content()
    assert not (ws / "moved").exists()


@needs_bwrap
async def test_sandbox_hides_the_contents_of_protected_folders(ws: Path) -> None:
    (ws / ".toolsift" / "skills" / "review").mkdir(parents=True)
    (ws / ".toolsift" / "skills" / "review" / "SKILL.md").write_text("---\nname: review\n---\n", encoding="utf-8")
    result = await shell_of(guarded(ws), "ls").execute(
        "exec_shell", {"command": "ls -A .toolsift/skills"}, permissions=EXECUTE
    )
    assert result.text_content() == "$ ls -A .toolsift/skills\nexit code 0"


@needs_bwrap
async def test_sandbox_makes_the_folder_of_a_missing_protected_file_read_only(ws: Path) -> None:
    (ws / "config").mkdir()
    workspace = Workspace(ws, protected=[ProtectedPath(ws / "config" / "prod.env", "the env file of server 'x'")])
    registry = shell_of(workspace, "touch")
    result = await registry.execute("exec_shell", {"command": "touch config/prod.env"}, permissions=EXECUTE)
    assert "Read-only file system" in result.text_content()
    assert not (ws / "config" / "prod.env").exists()


@needs_bwrap
async def test_sandbox_makes_the_folder_of_a_linked_protected_file_read_only(ws: Path, tmp_path: Path) -> None:
    (tmp_path / "shared.env").write_text(f"TOKEN={SECRET}\n", encoding="utf-8")
    (ws / "config").mkdir()
    (ws / "config" / "app.env").symlink_to(tmp_path / "shared.env")
    workspace = Workspace(ws, protected=[ProtectedPath(ws / "config" / "app.env", "the env file of server 'x'")])
    registry = shell_of(workspace, "rm")
    result = await registry.execute("exec_shell", {"command": "rm config/app.env"}, permissions=EXECUTE)
    assert "Read-only file system" in result.text_content()
    assert (ws / "config" / "app.env").is_symlink()


@needs_bwrap
async def test_sandbox_refuses_to_run_beside_a_linked_config_it_cannot_pin(ws: Path, tmp_path: Path) -> None:
    (ws / "toolsift.json").unlink()
    (ws / "toolsift.json").symlink_to(tmp_path / "elsewhere.json")
    registry = shell_of(guarded(ws), "touch")
    result = await registry.execute("exec_shell", {"command": "touch ran"}, permissions=EXECUTE)
    assert result.is_error
    assert result.text_content() == (
        f"exec_shell is refused: {str(ws / 'toolsift.json')!r} (a config file toolsift loaded) is a symbolic link "
        "in the workspace, which a program could replace; nothing runs until it is a plain file or folder, or "
        "lies outside the workspace"
    )
    assert not (ws / "ran").exists()


@needs_bwrap
async def test_sandbox_refuses_a_workspace_inside_a_protected_folder(tmp_path: Path) -> None:
    workspace = Workspace(tmp_path, protected=[ProtectedPath(tmp_path, "a skills folder", folder=True)])
    result = await shell_of(workspace, "touch").execute("exec_shell", {"command": "touch ran"}, permissions=EXECUTE)
    assert result.text_content() == (
        f"exec_shell is refused: the workspace {str(tmp_path)!r} lies inside "
        f"{str(tmp_path)!r} (a skills folder), which programs must not reach"
    )
    assert not (tmp_path / "ran").exists()


@needs_bwrap
async def test_sandbox_refuses_to_run_while_a_protected_file_has_other_names(ws: Path) -> None:
    os.link(ws / "secrets" / "api.key", ws / "innocent.txt")
    result = await shell_of(guarded(ws), "cat").execute(
        "exec_shell", {"command": "cat innocent.txt"}, permissions=EXECUTE
    )
    assert result.is_error
    assert SECRET not in result.text_content()
    assert result.text_content() == (
        f"exec_shell is refused: {str(ws / 'secrets' / 'api.key')!r} (a secret file of server 'api') has 2 hard "
        "links; the sandbox hides this name but cannot find the others, so nothing runs until it has one"
    )
