"""Fast commands and readable help: ``--version``/``--help`` import no heavy module, commands start only the
servers they need, and help shows no internal types or references."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from toolsift.cli import main
from toolsift.cli._app import COMMANDS, load_commands

ROOT = Path(__file__).resolve().parents[2]
SERVERS = ROOT / "examples" / "servers"

# What a command that starts nothing has no use for: the MCP SDK, LLM clients, the config models, the sessions.
HEAVY = ("mcp", "anthropic", "openai", "pydantic", "toolsift.config", "toolsift.mcp_sessions", "toolsift.toolbox")

IMPORTS_OF = """
import json, runpy, sys
sys.argv = ["toolsift", *json.loads(sys.argv[1])]
try:
    runpy.run_module("toolsift", run_name="__main__")
except SystemExit as exc:
    assert not exc.code, exc.code
print(json.dumps(sorted(sys.modules)))
"""


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as info:
        main(list(argv))
    captured = capsys.readouterr()
    return int(info.value.code or 0), captured.out, captured.err


@pytest.mark.parametrize("argv", [["--version"], ["--help"]])
def test_version_and_help_import_no_heavy_module(argv: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, "-c", IMPORTS_OF, json.dumps(argv)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    imported = set(json.loads(done.stdout.splitlines()[-1]))
    assert "toolsift.cli" in imported
    assert [name for name in HEAVY if name in imported] == []


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_each_command_is_listed_with_its_own_first_line(name: str) -> None:
    module, line = COMMANDS[name]
    command = load_commands(module)[name]
    assert (command.help or "").split("\n\n")[0].strip() == line


def test_an_unknown_command_is_refused_with_a_suggestion(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "skils")
    assert code == 2 and "No such command 'skils'" in err and "'skills'" in err


@pytest.mark.parametrize(
    ("argv", "unwanted"),
    [
        (["--help"], ["<bool>"]),
        (["check", "--help"], ["<bool>", "_coverage", "``"]),
        (["tools", "--help"], ["<bool>", "list[str]", "--install-completion"]),
        (["call", "--help"], ["<bool>", "``"]),
        (["serve", "--help"], ["<bool>", "needs --stateless)"]),
        (["skills", "list", "--help"], ["<bool>"]),
    ],
)
def test_help_shows_no_internal_types_or_references(
    capsys: pytest.CaptureFixture[str], argv: list[str], unwanted: list[str]
) -> None:
    code, out, _ = run(capsys, *argv)
    assert code == 0 and "Usage: toolsift" in out
    assert [text for text in unwanted if text in out] == []


def test_serve_workers_help_agrees_with_the_config_rule(capsys: pytest.CaptureFixture[str]) -> None:
    # serve.workers > 1 needs stateless or shared sessions (ServeSettings), as docs/serving.md says.
    _, out, _ = run(capsys, "serve", "--help")
    assert "--stateless or shared sessions (serve.shared)" in " ".join(out.split())


@pytest.fixture
def marked(tmp_path: Path, general_in_process: None) -> tuple[Path, Path]:
    """A config of two servers: the example ``general`` (in this process), and ``marker``, a real process that
    leaves a file when started."""
    marker = tmp_path / "started"
    leave_marker = f"import pathlib; pathlib.Path({str(marker)!r}).write_text('started')"
    skills = tmp_path / "skills"
    (skills / "adder").mkdir(parents=True)
    (skills / "adder" / "SKILL.md").write_text(
        "---\nname: adder\ndescription: Adds.\nallowed-tools:\n  - general__add\n---\nAdd the numbers.\n"
    )
    config = tmp_path / "toolsift.json"
    config.write_text(
        json.dumps(
            {
                "tools": {
                    "mcpServers": {
                        "general": {
                            "command": sys.executable,
                            "args": [str(SERVERS / "general.py")],
                            "internalOnly": False,
                        },
                        "marker": {"command": sys.executable, "args": ["-c", leave_marker]},
                    }
                },
                "skills": {"paths": [str(skills)], "userSkills": False},
            }
        )
    )
    return config, marker


def test_call_starts_only_the_tool_server(capsys: pytest.CaptureFixture[str], marked: tuple[Path, Path]) -> None:
    config, marker = marked
    code, out, err = run(capsys, "-c", str(config), "call", "general__add", '{"a": 2, "b": 3}', "--json")
    assert (code, json.loads(out)["structuredContent"]) == (0, {"result": 5}), err
    assert not marker.exists()
    assert "Connecting 1 MCP server(s)" in err and "general" in err


@pytest.mark.parametrize(
    "argv",
    [
        ["tools", "general__*"],
        ["tools", "general__*", "elsewhere__*"],  # a server no entry has: nothing more to start
        ["tools", "--skill", "adder"],
        ["schemas", "--skill", "adder"],
    ],
)
def test_listings_start_only_the_servers_they_name(
    capsys: pytest.CaptureFixture[str], marked: tuple[Path, Path], argv: list[str]
) -> None:
    config, marker = marked
    code, out, err = run(capsys, "-c", str(config), *argv)
    assert code == 0, err
    assert "general__add" in out
    assert not marker.exists()


def test_a_listing_that_names_no_server_starts_every_server(
    capsys: pytest.CaptureFixture[str], marked: tuple[Path, Path]
) -> None:
    config, marker = marked
    code, out, err = run(capsys, "-c", str(config), "tools")
    assert "general__add" in out and "2 MCP server(s)" in err and "marker" in err
    assert marker.read_text() == "started"
    assert code == 0


def test_a_call_whose_name_names_no_server_starts_every_server(
    capsys: pytest.CaptureFixture[str], marked: tuple[Path, Path]
) -> None:
    # A bare name, or one whose prefix no server has, may be a provider alias of any server's tool.
    config, marker = marked
    code, _, err = run(capsys, "-c", str(config), "call", "elsewhere__add", "{}")
    assert code == 3 and "Unknown tool 'elsewhere__add'" in err
    assert marker.read_text() == "started"
