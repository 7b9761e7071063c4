"""The toolsift command against the example servers (real processes, or in this process): output, --json and
exit codes."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest
from cli_helpers import Piped

# At collection, as the SDK's stdio client takes the sys.stderr of its first import as its default errlog
# (under capsys, a file without a descriptor); toolsift.cli no longer imports the SDK for us.
from mcp import Client, StdioServerParameters
from waits import CHILD_SECONDS

from toolsift.cli import main

ROOT = Path(__file__).resolve().parents[2]
SERVERS = ROOT / "examples" / "servers"
SKILLS = ROOT / "examples" / "skills"


def write_config(folder: Path, **extra: object) -> Path:
    config = {
        "tools": {
            "mcpServers": {
                # Real children where no fixture runs them in this process: their start is the event waited for.
                "claude-flow": {
                    "command": sys.executable,
                    "args": [str(SERVERS / "flow.py")],
                    "timeout": CHILD_SECONDS,
                },
                "general": {
                    "command": sys.executable,
                    "args": [str(SERVERS / "general.py")],
                    "internalOnly": False,
                    "timeout": CHILD_SECONDS,
                },
            },
            "permissions": [{"match": "claude-flow__*_delete", "requiredLevel": "admin"}],
        },
        "agents": {"reader": {"allowedTools": ["general__*"], "permissions": {"level": "read"}}},
        "skills": {"paths": [str(SKILLS)], "userSkills": False},
        **extra,
    }
    path = folder / "toolsift.json"
    path.write_text(json.dumps(config))
    return path


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_config(tmp_path_factory.mktemp("cli"))


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as info:
        main(list(argv))
    captured = capsys.readouterr()
    return int(info.value.code or 0), captured.out, captured.err


def test_check_reports_an_ok_config(capsys: pytest.CaptureFixture[str], config: Path) -> None:
    code, out, _ = run(capsys, "-c", str(config), "check")
    assert code == 0 and "OK" in out
    code, out, _ = run(capsys, "-c", str(config), "check", "--json")
    assert code == 0 and json.loads(out)["ok"] is True


def test_check_reports_each_broken_config_and_skill(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    (skills / "broken").mkdir(parents=True)
    (skills / "broken" / "SKILL.md").write_text("---\nname: broken\n---\n")  # no description, no body
    (tmp_path / "toolsift.json").write_text(
        json.dumps(
            {
                "tools": {
                    "mcpServers": {
                        "bad__name": {"command": "x"},
                        "slow": {"command": "x", "timeout": -1},
                        "odd": {"command": "x", "transport": "carrier-pigeon"},
                        "half-saved": {"args": ["server.py"]},
                    }
                },
                "skills": {"paths": [str(skills)], "userSkills": False},
            },
            indent=2,
        )
    )
    code, out, _ = run(capsys, "-c", str(tmp_path / "toolsift.json"), "check", "--json")
    report = json.loads(out)
    assert code == 1 and not report["ok"]
    fields = {p["field"]: p for p in report["problems"]}
    assert "must not contain '__'" in fields["tools.mcpServers.bad__name"]["message"]
    assert fields["tools.mcpServers.slow.timeout"]["message"] == "expected greater than 0, found -1"
    assert fields["tools.mcpServers.slow.timeout"]["line"] == 9
    assert "carrier-pigeon" in fields["tools.mcpServers.odd.transport"]["message"]
    assert "neither 'command' (a program to run) nor 'url'" in fields["tools.mcpServers.half-saved"]["message"]
    assert any(p["file"].endswith("SKILL.md") and "description" in p["message"] for p in report["problems"])
    code, out, _ = run(capsys, "-c", str(tmp_path / "toolsift.json"), "check")
    assert code == 1 and "problem" in out


def test_missing_config_is_one_line_and_exit_4(tmp_path: Path) -> None:
    # The real command in a child process: the exit code and the one line reach the shell.
    done = subprocess.run(
        [sys.executable, "-m", "toolsift", "-c", str(tmp_path / "nope.json"), "servers"],
        capture_output=True,
        text=True,
        timeout=CHILD_SECONDS,
        check=False,
    )
    code, out, err = done.returncode, done.stdout, done.stderr
    assert code == 4 and out == ""
    assert err.strip().startswith("error:") and "config file not found" in err and "Traceback" not in err


def test_malformed_config_is_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "toolsift.json"
    path.write_text('{"tools": {')
    code, _, err = run(capsys, "-c", str(path), "tools")
    assert code == 4 and "error:" in err and "Traceback" not in err


@pytest.mark.usefixtures("examples_in_process")
def test_servers_table_and_json(capsys: pytest.CaptureFixture[str], config: Path) -> None:
    code, out, _ = run(capsys, "-c", str(config), "servers", "--json")
    rows = {r["server"]: r for r in json.loads(out)}
    assert code == 0
    assert rows["claude-flow"]["visibility"] == "internal" and rows["claude-flow"]["tools"] >= 200
    assert rows["general"]["visibility"] == "global" and rows["general"]["state"] == "ready"


@pytest.mark.usefixtures("general_in_process")  # the crashing server is a real process
def test_servers_exit_1_when_one_server_fails(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = write_config(tmp_path)
    data = json.loads(path.read_text())
    data["tools"]["mcpServers"]["broken"] = {
        "command": sys.executable,
        "args": [str(SERVERS / "faulty.py"), "--crash-at-start"],
        "maxRestarts": 0,
        "protocol": "legacy",
    }
    del data["tools"]["mcpServers"]["claude-flow"]
    path.write_text(json.dumps(data))
    code, out, err = run(capsys, "-c", str(path), "servers")
    assert code == 1
    assert "broken" in out and "error" in out and "general" in out
    assert (out + err).count("exiting before initialize") == 1  # in the table, not once more as a note
    code, _, err = run(capsys, "-c", str(path), "tools")
    assert "server 'broken' is down: could not start" in err


@pytest.mark.usefixtures("examples_in_process")
def test_tools_marks_tiers_and_follows_skills(capsys: pytest.CaptureFixture[str], config: Path) -> None:
    code, out, _ = run(capsys, "-c", str(config), "tools", "--json")
    names = {r["name"]: r["tier"] for r in json.loads(out)}
    assert code == 0 and names["general__echo"] == "global"
    assert not any(n.startswith("claude-flow__") for n in names)
    code, out, _ = run(capsys, "-c", str(config), "tools", "--skill", "flow-memory", "--json")
    rows = json.loads(out)
    assert rows and all(r["name"].startswith("claude-flow__memory_") and r["tier"] == "internal" for r in rows)
    code, out, err = run(capsys, "-c", str(config), "tools", "general__e*", "--agent", "reader")
    assert code == 0 and "general__echo" in out and "general__add" not in out and "internal" not in err
    # Named on purpose, an internal server's tools are listed (to write a skill's allowed-tools), marked so.
    code, out, err = run(capsys, "-c", str(config), "tools", "claude-flow__memory_*")
    assert code == 0 and "0 tool(s) in scope, " in out and "of internal servers outside it" in out
    assert "claude-flow__memory_store\tinternal, not in this turn" in out
    code, out, _ = run(capsys, "-c", str(config), "tools", "claude-flow__memory_*", "--json")
    rows = json.loads(out)
    assert rows and all(r["tier"] == "internal" and r["in_turn"] is False for r in rows)
    # What another layer leaves out is still only counted, with why.
    code, out, err = run(capsys, "-c", str(config), "tools", "claude-flow__memory_*", "--agent", "reader")
    assert code == 0 and "claude-flow__memory_store" not in out and "claude-flow are hidden" in err


@pytest.mark.usefixtures("examples_in_process")
def test_tools_without_a_pattern_says_what_is_hidden(capsys: pytest.CaptureFixture[str], config: Path) -> None:
    code, out, err = run(capsys, "-c", str(config), "tools")
    assert code == 0 and "general__echo" in out
    count = int(err.split(" tool(s) of internal server(s) claude-flow are hidden")[0].split()[-1])
    assert count >= 200 and "toolsift tools --search QUERY" in err
    code, _, err = run(capsys, "-c", str(config), "tools", "--agent", "reader")
    assert "tool(s) are left out of a turn with no skill by the agent's or the skill's allowed-tools" in err


@pytest.mark.usefixtures("examples_in_process")
def test_tools_search_ranks_internal_tools_too(capsys: pytest.CaptureFixture[str], config: Path) -> None:
    code, out, _ = run(capsys, "-c", str(config), "tools", "--search", "store a value in memory", "--json")
    hits = json.loads(out)
    assert code == 0 and "claude-flow__memory_store" in [h["name"] for h in hits[:3]]
    code, out, _ = run(capsys, "-c", str(config), "tools", "-q", "general__echo", "--limit", "3")
    assert code == 0 and "exact" in out and "general__echo" in out


@pytest.mark.usefixtures("examples_in_process")
def test_tools_search_takes_a_backend(capsys: pytest.CaptureFixture[str], config: Path) -> None:
    code, out, _ = run(
        capsys, "-c", str(config), "tools", "-q", "store a value in memory", "--backend", "bm25", "--json"
    )
    hits = json.loads(out)
    assert code == 0 and hits[0]["name"] == "claude-flow__memory_store" and hits[0]["servers"] == ["claude-flow"]
    code, _, err = run(capsys, "-c", str(config), "tools", "-q", "memory", "--backend", "vector")
    assert code == 2 and "unknown search backend 'vector'; available: bm25, semantic, hybrid" in err


@pytest.mark.usefixtures("examples_in_process")
def test_schemas_prints_payload_size_and_tokens(capsys: pytest.CaptureFixture[str], config: Path) -> None:
    code, out, err = run(capsys, "-c", str(config), "schemas", "--skill", "flow-memory", "--format", "anthropic")
    payload = json.loads(out)
    assert code == 0 and payload and all(set(p) == {"name", "description", "input_schema"} for p in payload)
    assert "bytes" in err and "tokens" in err
    code, out, _ = run(capsys, "-c", str(config), "schemas", "--format", "gemini", "--json")
    report = json.loads(out)
    assert report["count"] == len(report["schemas"]) and report["bytes"] > 0 and report["estimated_tokens"] > 0
    code, _, err = run(capsys, "-c", str(config), "schemas", "--format", "yaml")
    assert code == 2 and "Unknown schema format 'yaml'" in err  # a bad command line, refused before connecting


@pytest.mark.usefixtures("examples_in_process")
def test_tools_and_schemas_show_a_skill_scope_without_its_variables(
    capsys: pytest.CaptureFixture[str], config: Path, tmp_path: Path
) -> None:
    # code-assist and release-notes have required variables: the scope comes from the front matter alone.
    code, out, err = run(capsys, "-c", str(config), "tools", "--skill", "code-assist", "--json")
    names = {r["name"] for r in json.loads(out)}
    assert code == 0 and "general__echo" in names and "general__env_get" not in names, err
    code, out, err = run(capsys, "-c", str(config), "schemas", "--skill", "release-notes", "--json")
    assert code == 0 and {s["function"]["name"] for s in json.loads(out)["schemas"]} <= {
        "read_file",
        "list_directory",
    }, err
    code, _, err = run(capsys, "-c", str(config), "tools", "--skill", "release-notes", "--args", "audience=users")
    assert code == 3 and "missing required variable(s) 'version'" in err
    hidden = tmp_path / "skills" / "hidden" / "SKILL.md"
    hidden.parent.mkdir(parents=True)
    hidden.write_text("---\nname: hidden\ndescription: H.\nuser-invocable: false\n---\nBody.\n")
    other = write_config(tmp_path, skills={"paths": [str(hidden.parent.parent)], "userSkills": False})
    code, _, err = run(capsys, "-c", str(other), "schemas", "--skill", "hidden")
    assert code == 3 and "Unknown skill 'hidden'; available: general__review" in err


@pytest.mark.usefixtures("examples_in_process")
def test_call_goes_through_the_layers(capsys: pytest.CaptureFixture[str], config: Path) -> None:
    code, out, _ = run(capsys, "-c", str(config), "call", "general__add", '{"a": 2, "b": 3}', "--json")
    assert code == 0 and json.loads(out)["structuredContent"] == {"result": 5}
    code, _, err = run(capsys, "-c", str(config), "call", "claude-flow__swarm_init", "{}")
    assert code == 3 and "layer 1" in err
    code, out, _ = run(
        capsys,
        "-c",
        str(config),
        "call",
        "claude-flow__memory_store",
        '{"key": "k", "value": "v"}',
        "--skill",
        "flow-memory",
    )
    assert code == 0 and "stored" in out
    code, _, err = run(capsys, "-c", str(config), "call", "general__add", '{"a": "x"}')
    assert code == 3 and "Invalid arguments" in err
    code, out, _ = run(capsys, "-c", str(config), "call", "general__fail", '{"message": "disk full"}')
    assert code == 1 and "disk full" in out
    code, out, err = run(capsys, "-c", str(config), "call", "general__progress", '{"steps": 2}')
    assert code == 0 and "done 2 steps" in out
    assert "[general__progress] 1/2 step 1" in err and "[general__progress] 2/2 step 2" in err


@pytest.mark.usefixtures("general_in_process")
def test_call_and_servers_with_a_lazy_server(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    lazy = {"command": sys.executable, "args": [str(SERVERS / "general.py")], "internalOnly": False, "lazy": True}
    config = write_config(tmp_path, tools={"mcpServers": {"general": lazy}})
    code, out, _ = run(capsys, "-c", str(config), "servers")
    assert code == 0 and "idle" in out and "starts on first need" in out
    code, out, _ = run(capsys, "-c", str(config), "call", "general__add", '{"a": 2, "b": 3}', "--json")
    assert code == 0 and json.loads(out)["structuredContent"] == {"result": 5}


@pytest.mark.parametrize(
    ("argv", "code", "message"),
    [
        (["call", "general__add", "{not json"], 2, "not valid JSON"),
        (["call", "general__add", "[1]"], 2, "must be a JSON object"),
        (["call", "nope__tool", "{}"], 3, "Unknown tool 'nope__tool'"),
        (["tools", "--skill", "nope"], 3, "Unknown skill 'nope'"),
        (["tools", "--agent", "ghost"], 4, "no agent named 'ghost'"),
        (["chat", "--model", "mistral:large"], 5, "Unknown model provider 'mistral'"),
    ],
)
@pytest.mark.usefixtures("examples_in_process")
def test_bad_input_is_one_clear_line(
    capsys: pytest.CaptureFixture[str], config: Path, argv: list[str], code: int, message: str
) -> None:
    got, _, err = run(capsys, "-c", str(config), *argv)
    assert got == code and message in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--no-such-option"], "No such option: --no-such-option"),
        (["nosuch"], "No such command 'nosuch'"),
        (["tools", "--limit", "x"], "Invalid value for '--limit'"),
        (["call"], "Missing argument 'TOOL'"),
        (["serve", "--transport", "bad"], "Invalid value for '--transport': 'bad' is not one of 'stdio', 'http'"),
        (["serve", "--workers", "0"], "Invalid value for '--workers'"),
        (["schemas", "-f", "gemini", "--strict"], "format 'gemini' has no strict mode"),
        (["schemas", "-f", "nope"], "Unknown schema format 'nope'"),
    ],
)
def test_usage_errors_exit_2_under_the_command_name(
    capsys: pytest.CaptureFixture[str], config: Path, argv: list[str], message: str
) -> None:
    code, out, err = run(capsys, "-c", str(config), *argv)
    assert code == 2 and message in err and "Usage: toolsift" in err
    assert "Error" + "Error" not in err and "UsageError" not in err and "python -m" not in err and out == ""


def test_version_prints_the_installed_version(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--version")
    assert code == 0 and out == f"toolsift {version('toolsift')}\n"


def test_serve_settings_error_is_one_line_without_a_doubled_prefix(
    capsys: pytest.CaptureFixture[str], config: Path
) -> None:
    code, _, err = run(capsys, "-c", str(config), "serve", "--transport", "http", "--workers", "2")
    assert code == 4 and err.strip() == (
        "error: serve: workers = 2 needs stateless = true, or shared sessions (serve.shared)"
    )


def test_serve_passes_redis_and_replica_on(capsys: pytest.CaptureFixture[str], config: Path) -> None:
    # Over stdio the shared settings are refused before anything starts; the message shows they arrived.
    code, _, err = run(capsys, "-c", str(config), "serve", "--redis", "redis://127.0.0.1:1/0", "--replica", "gw-1")
    assert code == 4 and "shared sessions are served over HTTP" in err
    code, _, err = run(capsys, "-c", str(config), "serve", "--replica", "gw 1")
    assert code == 4 and "serve.shared" in err


def test_debug_shows_the_traceback(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run(capsys, "--debug", "-c", str(tmp_path / "nope.json"), "check")
    assert code == 4 and "Traceback" in err


def test_skills_list_show_and_new(capsys: pytest.CaptureFixture[str], tmp_path: Path, config: Path) -> None:
    code, out, _ = run(capsys, "-c", str(config), "skills", "list", "--json")
    names = {s["name"] for s in json.loads(out)["skills"]}
    assert code == 0 and {"code-assist", "flow-memory"} <= names
    code, out, _ = run(capsys, "-c", str(config), "skills", "show", "flow-memory")
    assert code == 0 and "claude-flow__memory_*" in out
    code, out, _ = run(capsys, "-c", str(config), "skills", "show", "code-assist", "--json")
    assert json.loads(out)["name"] == "code-assist"
    code, out, _ = run(capsys, "-c", str(config), "skills", "list")
    assert "code-assist" in out
    code, out, _ = run(capsys, "-c", str(config), "skills", "new", "triage", "--dir", str(tmp_path))
    assert code == 0 and (tmp_path / "triage" / "SKILL.md").is_file()
    code, _, err = run(capsys, "-c", str(config), "skills", "new", "triage", "--dir", str(tmp_path))
    assert code == 1 and "already exists" in err
    code, _, err = run(capsys, "-c", str(config), "skills", "new", "Bad_Name", "--dir", str(tmp_path))
    assert code == 3 and "Bad_Name" in err


def chat(config: Path, *lines: str) -> Piped:
    """Run ``toolsift chat`` in manual mode, in this process, with ``lines`` on stdin; it must end well."""
    done = Piped(*lines)
    assert done.run("-c", str(config), "chat") == 0, done.err.text
    return done


@pytest.mark.usefixtures("examples_in_process")
def test_chat_manual_mode_through_stdin(config: Path) -> None:
    lines = (
        "/skills",
        "/use flow-memory remember the deploy date",
        "/tools",
        'call claude-flow__memory_store {"key": "deploy", "value": "friday"}',
        "call general__echo {}",
        "call general__echo {oops",
        "hello model",
        "/unuse",
        "/use nope",
        "/quit",
    )
    out = chat(config, *lines).out.text
    assert "flow-memory" in out and "Using skill 'flow-memory'" in out
    assert "claude-flow__memory_store (internal)" in out
    assert '"stored": true' in out
    assert "layer 4" in out
    assert "not valid JSON" in out and "Not a command" in out
    assert "Stopped using skill 'flow-memory'" in out and "Unknown skill 'nope'" in out


def general_only(folder: Path) -> Path:
    """A config whose one server is the example ``general`` (global), for tests that start real processes."""
    general = {"command": sys.executable, "args": [str(SERVERS / "general.py")], "internalOnly": False}
    return write_config(folder, tools={"mcpServers": {"general": general}})


def test_chat_ctrl_c_cancels_the_running_call_and_the_chat_goes_on(tmp_path: Path) -> None:
    # A real process: Ctrl-C is a signal to the program; the one server it calls is enough.
    config = general_only(tmp_path)
    never = tmp_path / "never-written"
    chat = subprocess.Popen(
        [sys.executable, "-m", "toolsift", "-c", str(config), "chat"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert chat.stdin is not None and chat.stderr is not None
    try:
        chat.stdin.write(f'call general__wait_for_file {{"path": "{never}"}}\n')
        chat.stdin.flush()
        for line in chat.stderr:  # the call's progress line: it is in flight now
            if "[general__wait_for_file] 0 waiting for" in line:
                break
        chat.send_signal(signal.SIGINT)
        out, err = chat.communicate(
            'call general__echo {"text": "still here"}\n/instructions\n/quit\n', timeout=CHILD_SECONDS
        )
    finally:
        if chat.poll() is None:
            chat.kill()
    assert chat.returncode == 0, err
    assert "(cancelled)" in out and "still here" in out
    # No skill is active; the one global server's instructions are the turn's.
    assert "# MCP server general" in out and "Everyday tools, resources and prompts for testing." in out


@pytest.mark.usefixtures("examples_in_process")
def test_demo_runs_offline_and_exits_0(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    # In this process (its notes server stays a real HTTP child); .ci/run runs the real `toolsift demo` too.
    # The demo sets these for its servers' config: set here, they are restored after the test.
    monkeypatch.setenv("TOOLSIFT_NOTES_URL", "")
    monkeypatch.setenv("TOOLSIFT_PYTHON", sys.executable)
    monkeypatch.chdir(ROOT)
    code, out, err = run(capsys, "demo")
    assert code == 0, err
    assert "claude-flow\tstdio\tinternal\tready\t214" in out
    for row in ("no skill", "/use flow-memory", "/use code-assist", "everything registered"):
        assert row in out
    assert "permitted  claude-flow__memory_store" in out
    assert "layer 4" in out and "layer 1" in out


async def test_serve_speaks_mcp_over_stdio(tmp_path: Path) -> None:
    # The real command over stdio; of the example servers it serves the one it calls.
    config = general_only(tmp_path)
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "toolsift", "-c", str(config), "serve", "--gateway"]
    )
    async with Client(params, mode="legacy") as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert {"builtin__read_file", "skill__flow-memory", "general__add"} <= names
        result = await client.call_tool("general__add", {"a": 1, "b": 2})
        assert not result.is_error and result.structured_content == {"result": 3}


def test_serve_reports_a_config_error(capsys: pytest.CaptureFixture[str], config: Path) -> None:
    code, _, err = run(capsys, "-c", str(config), "serve", "--transport", "http", "--host", "0.0.0.0")
    assert code == 4 and "without a token" in err


@pytest.mark.usefixtures("examples_in_process")
def test_call_cannot_reach_a_tool_the_skill_scope_does_not_list(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    skills = tmp_path / "skills"
    (skills / "mem").mkdir(parents=True)
    (skills / "mem" / "SKILL.md").write_text(
        '---\nname: mem\ndescription: Memory only.\nallowed-tools: ["claude-flow__memory_*", "*"]\n---\nRemember.\n'
    )
    config = write_config(tmp_path, skills={"paths": [str(skills)], "userSkills": False})
    code, out, err = run(capsys, "-c", str(config), "schemas", "--skill", "mem", "--json")
    assert code == 0, err
    listed = {s["function"]["name"] for s in json.loads(out)["schemas"]}
    assert code == 0 and "claude-flow__memory_store" in listed and "claude-flow__swarm_init" not in listed
    code, _, err = run(
        capsys, "-c", str(config), "call", "claude-flow__swarm_init", '{"topology": "mesh"}', "--skill", "mem"
    )
    assert code == 3 and "layer 1" in err
