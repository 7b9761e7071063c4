"""`toolsift mcp add|list|get|remove`: servers edited from the command line, files kept whole and valid."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from test_cli import SERVERS, run

from toolsift._folders import find_config, user_config_path
from toolsift.config import load_config
from toolsift.config._internal import resolve_server
from toolsift.toolbox import Toolbox

GENERAL = str(SERVERS / "general.py")


@pytest.fixture(autouse=True)
def project(empty_project: Path) -> Path:
    return empty_project


async def test_an_added_stdio_server_loads_and_answers(capsys: pytest.CaptureFixture[str], project: Path) -> None:
    code, out, _ = run(capsys, "mcp", "add", "general", "-e", "MODE=test", "--", sys.executable, GENERAL)
    assert code == 0 and f"Added stdio server 'general' to {project / 'toolsift.json'} (project)" in out
    config = load_config(project / "toolsift.json")
    assert config.servers["general"].command == sys.executable
    assert config.servers["general"].env == {"MODE": "test"}
    async with Toolbox(load_config(project / "toolsift.json")) as box:
        result = await box.registry.execute(
            "general__add",
            {"a": 2, "b": 3},
            permissions=None,
            scope=box.conversation().scope().with_unlocked(["general__add"]),
        )
    assert "5" in result.text_content()


def test_a_remote_server_with_headers_keeps_the_rest_of_the_file(
    capsys: pytest.CaptureFixture[str], project: Path
) -> None:
    original = {
        "agents": {"default": {"planMode": True}},
        "tools": {"mcpServers": {"old": {"command": "x"}}},
        "audit": {"path": "a.jsonl"},
    }
    (project / "toolsift.json").write_text(json.dumps(original))
    code, _, _ = run(
        capsys,
        "mcp",
        "add",
        "--transport",
        "http",
        "remote",
        "https://example.com/mcp",
        "-H",
        "Authorization: Bearer ${TOKEN}",
        "-H",
        "X-Team: tools",
    )
    assert code == 0
    text = (project / "toolsift.json").read_text()
    data = json.loads(text)
    assert list(data) == ["agents", "tools", "audit"] and data["agents"] == original["agents"]
    assert data["tools"]["mcpServers"] == {
        "old": {"command": "x"},
        "remote": {
            "type": "http",
            "url": "https://example.com/mcp",
            "headers": {"Authorization": "Bearer ${TOKEN}", "X-Team": "tools"},
        },
    }
    assert text.endswith("}\n") and '\n  "agents"' in text
    assert load_config(project / "toolsift.json").servers["remote"].transport == "http"


def test_a_projects_mcp_json_is_the_project_file(capsys: pytest.CaptureFixture[str], project: Path) -> None:
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {}}))
    assert run(capsys, "mcp", "add", "echo", "--", "echo", "hi")[0] == 0
    assert not (project / "toolsift.json").exists()
    assert json.loads((project / ".mcp.json").read_text()) == {
        "mcpServers": {"echo": {"command": "echo", "args": ["hi"]}}
    }


def test_list_get_and_remove_across_scopes(capsys: pytest.CaptureFixture[str], project: Path) -> None:
    run(capsys, "mcp", "add", "local", "-e", "API_KEY=plain-secret", "-e", "REF=${HOME}", "--", "echo", "1")
    run(capsys, "mcp", "add", "-s", "user", "mine", "--", "echo", "2")
    run(capsys, "mcp", "add", "-s", "user", "local", "--", "echo", "3")
    code, out, _ = run(capsys, "mcp", "list")
    assert code == 0
    assert "local\tproject\tstdio\techo 1\tyes" in out and "mine\tuser\tstdio\techo 2\tyes" in out
    code, out, _ = run(capsys, "mcp", "get", "local", "--scope", "project")
    assert code == 0 and "plain-secret" not in out and '"API_KEY": "***"' in out and '"REF": "${HOME}"' in out
    code, _, err = run(capsys, "mcp", "remove", "local")
    assert code == 2 and "in both the project and the user config; pass --scope" in err
    assert run(capsys, "mcp", "remove", "local", "-s", "user")[0] == 0
    assert run(capsys, "mcp", "remove", "local")[0] == 0
    assert "local" not in json.loads((project / "toolsift.json").read_text())["tools"]["mcpServers"]
    assert json.loads(user_config_path().read_text())["tools"]["mcpServers"] == {
        "mine": {"command": "echo", "args": ["2"]}
    }
    code, _, err = run(capsys, "mcp", "get", "nope")
    assert code == 3 and "no server 'nope'; configured: mine" in err


def test_a_named_file_is_the_one_edited(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    named = tmp_path / "elsewhere.json"
    assert run(capsys, "-c", str(named), "mcp", "add", "x", "--", "echo")[0] == 0
    assert json.loads(named.read_text()) == {"tools": {"mcpServers": {"x": {"command": "echo"}}}}
    code, out, _ = run(capsys, "-c", str(named), "mcp", "list")
    assert code == 0 and "x\tfile\tstdio\techo\tyes" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["bad__name", "--", "echo"], "must not contain '__'"),
        (["ok"], "missing the command after --"),
        (["-t", "http", "ok"], "missing the server's URL"),
        (["-t", "http", "ok", "ftp://x"], "expected one http:// or https:// URL"),
        (["-t", "carrier", "ok", "x"], "'carrier' is not one of 'stdio', 'http', 'sse'"),
        (["-e", "NOEQUALS", "ok", "--", "echo"], "'NOEQUALS' is not KEY=VALUE"),
        (["-t", "http", "-H", "Bad Name: x", "ok", "https://x"], "header name 'Bad Name' is not a valid HTTP field"),
        (["-H", "Authorization: x", "ok", "--", "echo"], "headers go with --transport http or sse"),
        (["-t", "sse", "-e", "K=v", "ok", "https://x/sse"], "--env goes with --transport stdio"),
        (["-t", "http", "--cwd", "srv", "ok", "https://x"], "--cwd goes with --transport stdio"),
        (["-t", "http", "--env-file", ".env", "ok", "https://x"], "--env-file goes with --transport stdio"),
        (["-t", "http", "-H", "no colon", "ok", "https://x"], "'no colon' is not 'Name: value'"),
        (["-s", "team", "ok", "--", "echo"], "'team' is not one of 'project', 'user'"),
    ],
)
def test_bad_input_is_a_usage_error_and_writes_nothing(
    capsys: pytest.CaptureFixture[str], project: Path, argv: list[str], message: str
) -> None:
    code, _, err = run(capsys, "mcp", "add", *argv)
    assert code == 2 and message in err
    assert not (project / "toolsift.json").exists()


def test_a_duplicate_name_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    run(capsys, "mcp", "add", "x", "--", "echo")
    code, _, err = run(capsys, "mcp", "add", "x", "--", "other")
    assert code == 2 and "already has a server 'x'; 'toolsift mcp remove x' first" in err


@pytest.mark.parametrize("text", ['{"tools": {\n  "mcpServers": {,}}}', "[1, 2]", '{"tools": 5}'])
def test_a_file_toolsift_cannot_edit_is_named_and_left_alone(
    capsys: pytest.CaptureFixture[str], project: Path, text: str
) -> None:
    (project / "toolsift.json").write_text(text)
    code, _, err = run(capsys, "mcp", "add", "x", "--", "echo")
    assert code == 4 and str(project / "toolsift.json") in err and "left as it is" in err
    assert (project / "toolsift.json").read_text() == text


def test_nothing_configured_says_how_to_add(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "mcp", "list")
    assert code == 0 and "toolsift mcp add NAME -- CMD ARGS" in err


# -- edits that several processes, links, permissions and other clients' files survive -----------------

# The real CLI entry point in its own process, held at a gate once the command's module is imported, so that
# every process reaches its read-modify-write at the same moment (the import, ~1 s of CPU, is done before).
GATED_CLI = (
    "import sys, toolsift.cli, toolsift.cli._mcp; print('ready', flush=True); sys.stdin.readline();"
    " toolsift.cli.main(sys.argv[1:])"
)


def servers_in(path: Path) -> dict[str, object]:
    data = json.loads(path.read_text())
    table = data["servers"] if "servers" in data else data.get("mcpServers") or data["tools"]["mcpServers"]
    assert isinstance(table, dict)
    return table


# Four: on two cores, four processes released together at their edit keep at least two edits in flight at
# once, each re-reading a file another just changed; a lost update needs only two. More processes add CPU,
# not another way to lose one.
WRITERS = 4


def test_concurrent_adds_in_separate_processes_all_land(project: Path) -> None:
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", GATED_CLI, "mcp", "add", f"s{i}", "--", "echo", str(i)],
            cwd=project,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(WRITERS)
    ]
    for process in processes:
        assert process.stdout is not None and process.stdout.readline() == "ready\n"
    for process in processes:
        assert process.stdin is not None
        process.stdin.write("\n")
        process.stdin.flush()
    outcomes = [process.communicate() for process in processes]
    assert [process.returncode for process in processes] == [0] * WRITERS, [err for _, err in outcomes]
    assert all("Added stdio server" in out for out, _ in outcomes)
    assert sorted(servers_in(project / "toolsift.json")) == [f"s{i}" for i in range(WRITERS)]
    assert set(load_config(project / "toolsift.json").servers) == {f"s{i}" for i in range(WRITERS)}


@pytest.mark.parametrize("scope", ["project", "user"])
def test_a_linked_config_is_written_through_and_stays_a_link(
    capsys: pytest.CaptureFixture[str], project: Path, tmp_path: Path, scope: str
) -> None:
    target = tmp_path / "dotfiles" / "toolsift.json"
    target.parent.mkdir()
    target.write_text(json.dumps({"tools": {"mcpServers": {"old": {"command": "echo"}}}}))
    link = project / "toolsift.json" if scope == "project" else user_config_path()
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(target)
    assert run(capsys, "mcp", "add", "-s", scope, "new", "--", "echo", "hi")[0] == 0
    assert link.is_symlink() and link.resolve() == target
    assert sorted(servers_in(target)) == ["new", "old"]
    assert set(load_config(link).servers) == {"new", "old"}
    assert run(capsys, "mcp", "remove", "-s", scope, "old")[0] == 0
    assert link.is_symlink() and sorted(servers_in(target)) == ["new"]
    assert [p.name for p in link.parent.iterdir() if p.name.endswith(".tmp")] == []


def umask() -> int:
    status = Path("/proc/self/status").read_text()
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith("Umask:")), 8)


@pytest.mark.parametrize("mode", [0o644, 0o664, 0o600], ids=oct)
def test_the_files_mode_is_kept(capsys: pytest.CaptureFixture[str], project: Path, mode: int) -> None:
    path = project / "toolsift.json"
    path.write_text(json.dumps({"tools": {"mcpServers": {}}}))
    path.chmod(mode)
    assert run(capsys, "mcp", "add", "x", "--", "echo")[0] == 0
    assert stat.S_IMODE(path.stat().st_mode) == mode
    assert run(capsys, "mcp", "remove", "x")[0] == 0
    assert stat.S_IMODE(path.stat().st_mode) == mode


def test_a_new_file_gets_the_umasks_mode(capsys: pytest.CaptureFixture[str], project: Path) -> None:
    assert run(capsys, "mcp", "add", "x", "--", "echo")[0] == 0
    assert stat.S_IMODE((project / "toolsift.json").stat().st_mode) == 0o666 & ~umask()


@pytest.mark.parametrize("argv", [["add", "x", "--", "echo"], ["remove", "old"]])
def test_a_read_only_file_is_refused_and_left_alone(
    capsys: pytest.CaptureFixture[str], project: Path, argv: list[str]
) -> None:
    path = project / "toolsift.json"
    text = json.dumps({"tools": {"mcpServers": {"old": {"command": "echo"}}}})
    path.write_text(text)
    path.chmod(0o444)
    code, _, err = run(capsys, "mcp", *argv)
    assert code == 4 and f"{path} is read-only (mode 0444); it was left as it is" in err and "chmod u+w" in err
    assert path.read_text() == text and stat.S_IMODE(path.stat().st_mode) == 0o444


@pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("setpriv") is None,
    reason="needs root, to run the CLI as another user with setpriv",
)
def test_a_folder_the_user_may_not_write_in_is_named_and_left_alone() -> None:
    with tempfile.TemporaryDirectory() as folder:  # outside tmp_path, whose parent only root may enter
        os.chmod(folder, 0o755)
        path = Path(folder) / "toolsift.json"
        path.write_text("{}")
        path.chmod(0o666)  # the file is writable by anyone; its folder is root's
        nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        done = subprocess.run(
            [*nobody, sys.executable, "-m", "toolsift", "mcp", "add", "x", "--", "echo"],
            cwd=folder,
            capture_output=True,
            text=True,
            env={**os.environ, "XDG_CONFIG_HOME": folder},
            check=False,
        )
        assert done.returncode == 4, done.stderr
        assert (
            f"permission denied on {folder}/.toolsift.json.lock: an edit reads the file and writes in its folder"
            in done.stderr
        )
        assert path.read_text() == "{}"


@pytest.mark.parametrize(
    ("place", "key", "entry"),
    [
        (
            ".vscode/mcp.json",
            "servers",
            {
                "type": "stdio",
                "command": "echo",
                "args": ["hi"],
                "env": {"TOKEN": "${env:MY_TOKEN}", "DIR": "${workspaceFolder}"},
            },
        ),
        (
            ".cursor/mcp.json",
            "mcpServers",
            {"command": "echo", "args": ["hi"], "env": {"TOKEN": "${env:MY_TOKEN}", "DIR": "${workspaceFolder}"}},
        ),
        (
            ".mcp.json",
            "mcpServers",
            {"command": "echo", "args": ["hi"], "env": {"TOKEN": "${MY_TOKEN}", "DIR": "${workspaceFolder}"}},
        ),
    ],
)
def test_a_client_project_file_gets_the_server_in_its_own_format(
    capsys: pytest.CaptureFixture[str], project: Path, place: str, key: str, entry: dict[str, object]
) -> None:
    path = project / place
    path.parent.mkdir(exist_ok=True)
    old = {"type": "stdio", "command": sys.executable, "args": [GENERAL]}
    path.write_text(json.dumps({key: {"general": old}}))
    code, out, _ = run(
        capsys, "mcp", "add", "new", "-e", "TOKEN=${MY_TOKEN}", "-e", "DIR=${workspaceFolder}", "--", "echo", "hi"
    )
    assert code == 0 and f"to {path} (project)" in out
    assert not (project / "toolsift.json").exists()
    assert json.loads(path.read_text()) == {key: {"general": old, "new": entry}}
    config = load_config(find_config())  # what toolsift loads in this project
    assert config.path == path and set(config.servers) == {"general", "new"}
    # .mcp.json (Claude Code) reads ${workspaceFolder} from the environment like any variable.
    resolved = resolve_server(config.servers["new"], environ={"MY_TOKEN": "t", "workspaceFolder": str(project)})
    assert resolved.env == {"TOKEN": "t", "DIR": str(project)}
    code, out, _ = run(capsys, "mcp", "list")
    assert "general\tproject\tstdio" in out and "new\tproject\tstdio\techo hi" in out


def test_a_vscode_file_with_comments_is_named_and_left_alone(capsys: pytest.CaptureFixture[str], project: Path) -> None:
    path = project / ".vscode" / "mcp.json"
    path.parent.mkdir()
    text = '{\n  // the team servers\n  "servers": {"general": {"type": "stdio", "command": "x"}}\n}\n'
    path.write_text(text)
    code, _, err = run(capsys, "mcp", "add", "new", "--", "echo")
    assert code == 4 and f"{path}:2: not plain JSON" in err and "would drop comments" in err
    assert path.read_text() == text and not (project / "toolsift.json").exists()


def test_an_empty_vscode_file_gets_its_servers_table(capsys: pytest.CaptureFixture[str], project: Path) -> None:
    path = project / ".vscode" / "mcp.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"inputs": []}))
    assert run(capsys, "mcp", "add", "-t", "http", "remote", "https://example.com/mcp")[0] == 0
    assert json.loads(path.read_text()) == {
        "inputs": [],
        "servers": {"remote": {"type": "http", "url": "https://example.com/mcp"}},
    }
    assert set(load_config(path).servers) == {"remote"}


SECRETS = (
    "sk-live-0123456789abcdef",
    "tok_value_9876",
    "hunter2",
    "Bearer abc.def",
    "qtok",
    "kval",
    "pw1",
    "plain-secret",
    "cs-literal",
    "fmcp-token-value",
)


def test_get_and_list_mask_secrets_in_arguments_urls_headers_and_auth(
    capsys: pytest.CaptureFixture[str], project: Path
) -> None:
    folder = "/home/alice/projects/a-rather-long-project-folder-name"
    (project / "toolsift.json").write_text(
        json.dumps(
            {
                "tools": {
                    "mcpServers": {
                        "db": {
                            "command": "db-server",
                            "args": [
                                "--api-key",
                                "sk-live-0123456789abcdef",
                                "--token=tok_value_9876",
                                "--user",
                                "alice",
                                "--ref-key",
                                "${DB_KEY}",
                                "DB_PASSWORD=hunter2",
                                "--header",
                                "Authorization: Bearer abc.def",
                                "postgres://app:pw1@db.example/x?sslmode=require",
                                folder,
                            ],
                            "env": {"API_KEY": "plain-secret", "REF": "${HOME}"},
                        },
                        "remote": {
                            "url": "https://user:pw1@api.example/mcp?token=qtok&key=kval",
                            "headers": {"X-Key": "${KEY}"},
                            "auth": {"clientId": "app", "clientSecret": "cs-literal"},
                        },
                    }
                }
            }
        )
    )
    (project / "servers.json").write_text(
        json.dumps({"mcpServers": {"fast": {"url": "https://f.example/mcp", "auth": "fmcp-token-value"}}})
    )
    code, listed, _ = run(capsys, "mcp", "list")
    assert code == 0
    code, db, _ = run(capsys, "mcp", "get", "db")
    assert code == 0
    code, remote, _ = run(capsys, "mcp", "get", "remote")
    assert code == 0
    code, fast, _ = run(capsys, "-c", str(project / "servers.json"), "mcp", "get", "fast")
    assert code == 0
    for secret in SECRETS:
        assert secret not in listed + db + remote + fast, secret
    assert json.loads(db.split("\n", 1)[1])["args"] == [
        "--api-key",
        "***",
        "--token=***",
        "--user",
        "alice",
        "--ref-key",
        "${DB_KEY}",
        "DB_PASSWORD=***",
        "--header",
        "Authorization: ***",
        "postgres://app:***@db.example/x?sslmode=***",
        folder,
    ]
    shown = json.loads(remote.split("\n", 1)[1])
    assert shown["url"] == "https://user:***@api.example/mcp?token=***&key=***"
    assert shown["headers"] == {"X-Key": "${KEY}"} and shown["auth"] == {"clientId": "app", "clientSecret": "***"}
    assert "https://user:***@api.example/mcp?token=***&key=***" in listed
    assert "db-server --api-key *** --token=*** --user alice" in listed
    assert json.loads(fast.split("\n", 1)[1])["auth"] == "***"


@pytest.mark.usefixtures("general_in_process")
def test_an_added_server_is_trusted_and_global_shows_its_tools(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, _ = run(capsys, "mcp", "add", "--global", "general", "--", sys.executable, GENERAL)
    assert code == 0
    code, out, err = run(capsys, "tools")
    assert code == 0 and "general__echo" in out and "came with this project" not in err


@pytest.mark.usefixtures("general_in_process")
def test_an_internal_server_added_says_how_its_tools_are_reached(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "mcp", "add", "general", "--", sys.executable, GENERAL)
    assert code == 0 and "'general' is internal" in err and "'general__*'" in err and "--global" in err
    code, out, err = run(capsys, "tools")
    assert code == 0 and "general__echo" not in out
    assert "tool(s) of internal server(s) general are hidden from a turn with no skill" in err


def test_a_server_added_with_its_folder_and_env_file_runs_there_trusted_as_written(
    capsys: pytest.CaptureFixture[str], project: Path
) -> None:
    # A real child: the script is named relative to the folder it runs in, so only --cwd lets it start.
    (project / "srv").mkdir()
    for script in ("general.py", "_http.py", "_media.py"):
        shutil.copy(SERVERS / script, project / "srv" / script)
    (project / "srv" / "general.env").write_text("GREETING=hello\n")
    argv = ["--global", "--cwd", "srv", "--env-file", "srv/general.env", "general", "--", sys.executable, "general.py"]
    code, _, _ = run(capsys, "mcp", "add", *argv)
    server = load_config(project / "toolsift.json").servers["general"]
    assert code == 0 and (server.cwd, server.env_file) == ("srv", "srv/general.env")
    code, out, err = run(capsys, "tools")
    assert code == 0 and "general__echo" in out and "came with this project" not in err


def test_mcp_add_trusts_only_what_it_wrote(capsys: pytest.CaptureFixture[str], project: Path) -> None:
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"other": {"command": "other-program"}}}))
    code, _, _ = run(capsys, "mcp", "add", "--global", "general", "--", sys.executable, GENERAL)
    assert code == 0 and load_config(project / ".mcp.json").servers["general"].internal_only is False
    code, _, err = run(capsys, "tools")
    assert code == 4 and "came with this project" in err
    assert "  other: other-program" in err and "general:" not in err


def test_a_server_edited_after_mcp_add_is_asked_about(capsys: pytest.CaptureFixture[str], project: Path) -> None:
    assert run(capsys, "mcp", "add", "general", "--", sys.executable, GENERAL)[0] == 0
    data = json.loads((project / "toolsift.json").read_text())
    data["tools"]["mcpServers"]["general"]["args"].append("--changed")
    (project / "toolsift.json").write_text(json.dumps(data))
    code, _, err = run(capsys, "tools")
    assert code == 4 and "launch (command, arguments" in err and "general:" in err


def test_mcp_add_to_a_file_that_does_not_load_says_it_is_not_trusted(
    capsys: pytest.CaptureFixture[str], project: Path
) -> None:
    (project / "toolsift.json").write_text(json.dumps({"tools": {"mcpServers": {}}, "search": {"backend": 3}}))
    code, out, err = run(capsys, "mcp", "add", "general", "--", sys.executable, GENERAL)
    assert code == 0 and "Added stdio server 'general'" in out
    assert "'general' is not trusted yet" in err and "search.backend" in err
