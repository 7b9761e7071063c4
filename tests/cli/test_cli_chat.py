"""``toolsift chat`` as a person meets it: live edits, the offline scripted model, profiles, help, line editing.

The chat runs in this process with piped streams and the example server in memory, except at a terminal, which
needs a real process on a pseudo-terminal.
"""

from __future__ import annotations

import contextlib
import json
import os
import pty
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import anyio
import pytest
from cli_helpers import Piped
from waits import CHILD_SECONDS

from toolsift._exceptions import AgentError
from toolsift.agent.llm import load_model
from toolsift.agent.llm.scripted import ScriptedChatModel
from toolsift.cli import main

ROOT = Path(__file__).resolve().parents[2]
SERVERS = ROOT / "examples" / "servers"
WAIT = CHILD_SECONDS  # a safety net for a stuck chat, never a synchronisation

SKILL = """---
name: sums
description: Adds numbers.
allowed-tools: {tools}
---
Add what the user asks.
"""

ADD = {"name": "general__add", "arguments": {"a": 2, "b": 3}}


def write_config(folder: Path, *, agents: dict[str, Any] | None = None) -> Path:
    """A config with the example ``general`` server (global) and one skill folder holding ``sums``."""
    skills = folder / "skills"
    (skills / "sums").mkdir(parents=True)
    (skills / "sums" / "SKILL.md").write_text(SKILL.format(tools="general__echo"))
    config = {
        "tools": {
            "mcpServers": {
                "general": {"command": sys.executable, "args": [str(SERVERS / "general.py")], "internalOnly": False}
            }
        },
        "skills": {"paths": [str(skills)], "userSkills": False},
        "agents": agents or {},
    }
    path = folder / "toolsift.json"
    path.write_text(json.dumps(config))
    return path


def write_script(folder: Path, answers: list[Any]) -> Path:
    path = folder / "script.json"
    path.write_text(json.dumps(answers))
    return path


def chat(config: Path, *argv: str, lines: tuple[str, ...]) -> tuple[str, str]:
    """Run ``toolsift chat`` in this process, ``lines`` piped to stdin; it must end well. Returns (stdout, stderr)."""
    done = Piped(*lines)
    assert done.run("-c", str(config), "chat", *argv) == 0, done.err.text
    return done.out.text, done.err.text


def tool_lines(err: str) -> list[str]:
    """The chat's ``[tool] NAME -> ok|error`` lines, in order."""
    return [line for line in err.splitlines() if line.startswith("[tool] ")]


@pytest.mark.usefixtures("general_in_process")
def test_a_skill_edit_between_two_inputs_changes_the_next_turn(tmp_path: Path) -> None:
    script = write_script(tmp_path, [{"tool_calls": [ADD]}, "first answer", {"tool_calls": [ADD]}, "second answer"])
    config = write_config(tmp_path)
    skill_file = tmp_path / "skills" / "sums" / "SKILL.md"

    def edit_the_skill() -> None:  # between two inputs: the first turn has ended
        skill_file.write_text(SKILL.format(tools="general__add"))
        chat.err.wait_for("[reload] skills: changed sums")

    chat = Piped("/use sums", "add 2 and 3", edit_the_skill, "try again", "/quit")
    assert chat.run("-c", str(config), "chat", "--model", f"scripted:{script}") == 0, chat.err.text
    out = chat.out.text
    assert out.index("Using skill 'sums'") < out.index("first answer") < out.index("second answer")
    # The skill allowed echo only, then add.
    assert tool_lines(chat.err.text) == ["[tool] general__add -> error", "[tool] general__add -> ok"]


@pytest.mark.usefixtures("general_in_process")
def test_a_config_edit_is_reported_and_a_broken_one_is_refused_aloud(tmp_path: Path) -> None:
    script = write_script(tmp_path, ["unused"])
    config = write_config(tmp_path)

    def break_the_config() -> None:
        config.write_text("{not json")
        chat.err.wait_for("[reload]")

    chat = Piped(break_the_config, "/quit")
    assert chat.run("-c", str(config), "chat", "--model", f"scripted:{script}") == 0, chat.err.text
    assert "Chatting with scripted:" in chat.err.text
    reloads = [line for line in chat.err.text.splitlines() if line.startswith("[reload]")]
    assert "config.rejected" in reloads[0]


@pytest.mark.usefixtures("general_in_process")
def test_a_broken_skill_is_said_in_words_once_and_leaving_reports_no_reload(tmp_path: Path) -> None:
    script = write_script(tmp_path, ["unused"])
    config = write_config(tmp_path)
    skill_file = tmp_path / "skills" / "sums" / "SKILL.md"

    def break_the_skill() -> None:
        skill_file.write_text("---\nname: sums\n---\n")
        chat.err.wait_for("[reload] skills:")

    chat = Piped(break_the_skill, "/quit")
    assert chat.run("-c", str(config), "chat", "--model", f"scripted:{script}") == 0, chat.err.text
    err = chat.err.text
    assert "SkillProblem(" not in err and err.count("field 'description'") == 1
    reloads = [line for line in err.splitlines() if line.startswith("[reload]")]
    assert len(reloads) == 1 and reloads[0].startswith("[reload] skills:")  # nothing when the servers close at /quit


@pytest.mark.usefixtures("general_in_process")
def test_the_scripted_model_runs_the_whole_loop_offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script = tmp_path / "script.yaml"
    script.write_text(
        "- text: Adding.\n  tool_calls:\n    - name: general__add\n      arguments: {a: 2, b: 3}\n- The sum is 5.\n"
    )
    for key in [key for key in os.environ if key.endswith("_API_KEY")]:
        monkeypatch.delenv(key)
    out, err = chat(write_config(tmp_path), "--model", f"scripted:{script}", lines=("add 2 and 3", "more?"))
    assert "[tool] general__add -> ok" in err and "The sum is 5." in out
    # Past its last answer the script says so, and the chat goes on.
    assert "has no answer left (it has 2)" in out


def test_the_scripted_model_gives_each_answer_in_turn_and_records_what_it_was_told(tmp_path: Path) -> None:
    model = load_model(f"scripted:{write_script(tmp_path, ['one', {'text': 'two', 'tool_calls': [ADD]}])}")
    assert isinstance(model, ScriptedChatModel)

    async def main_() -> None:
        first = await model.complete("be brief", [], [])
        second = await model.complete("be brief", [], [{"name": "general__add"}])
        assert first.text == "one" and not first.tool_calls
        assert second.text == "two" and second.tool_calls[0].name == "general__add"
        assert second.tool_calls[0].arguments == {"a": 2, "b": 3}
        assert model.calls == [("be brief", []), ("be brief", [{"name": "general__add"}])]
        with pytest.raises(AgentError, match="no answer left"):
            await model.complete("", [], [])

    anyio.run(main_)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "Cannot read the model script"),
        ("[unclosed", "is not valid JSON or YAML"),
        ("{}", "must be a non-empty list of answers"),
        ("[3]", "answer 1: must be a string or a mapping"),
        ('["ok", {"txt": "typo"}]', "answer 2: must be a string or a mapping"),
        ('[{"text": 3}]', "answer 1: 'text' must be a string"),
        ('[{"tool_calls": {"name": "x"}}]', "answer 1: 'tool_calls' must be a list"),
        ('[{"tool_calls": [{"arguments": {}}]}]', "answer 1, tool call 1: needs a 'name'"),
        ('[{"tool_calls": [{"name": "x", "arguments": [1]}]}]', "answer 1, tool call 1: only 'name' and 'arguments'"),
    ],
)
def test_a_bad_script_is_refused_with_its_file_and_answer(tmp_path: Path, content: str | None, message: str) -> None:
    path = tmp_path / "script.yaml"
    if content is not None:
        path.write_text(content)
    with pytest.raises(AgentError, match=message) as info:
        load_model(f"scripted:{path}")
    assert str(path) in str(info.value)


def test_ollama_is_pointed_at_its_openai_endpoint(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as info:
        main(["-c", str(write_config(tmp_path)), "chat", "--model", "ollama:llama3.2"])
    err = capsys.readouterr().err
    assert info.value.code == 5
    assert "--model openai:llama3.2 --base-url http://127.0.0.1:11434/v1" in err


@pytest.mark.usefixtures("general_in_process")
def test_an_agent_profile_sets_the_model_and_the_instructions(tmp_path: Path) -> None:
    script = write_script(tmp_path, ["Arr, matey."])
    agents = {"pirate": {"model": f"scripted:{script}", "instructions": "Speak like a pirate."}}
    out, err = chat(write_config(tmp_path, agents=agents), "--agent", "pirate", lines=("/instructions", "hello"))
    assert f"Chatting with scripted:{script}" in err
    assert "Speak like a pirate." in out and "Arr, matey." in out


@pytest.mark.usefixtures("general_in_process")
def test_help_lists_the_chat_commands_in_both_modes(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    manual, _ = chat(config, lines=("/help",))
    scripted, _ = chat(config, "--model", f"scripted:{write_script(tmp_path, ['unused'])}", lines=("/help",))
    for out in (manual, scripted):
        assert "/use <skill>" in out and "call TOOL" in out and "/quit" in out


@pytest.mark.usefixtures("general_in_process")
def test_piped_input_keeps_no_history(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
    chat(write_config(tmp_path), lines=("/skills",))
    assert not (home / "toolsift" / "chat_history").exists()


class Terminal:
    """A chat on a pseudo-terminal, as a person runs it: what it prints is read by a thread."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        self.master, slave = pty.openpty()
        self.process = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env, close_fds=True)
        os.close(slave)
        self.printed = ""
        self._chunks: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        with contextlib.suppress(OSError):  # the chat closed the terminal
            while chunk := os.read(self.master, 4096):
                self._chunks.put(chunk.decode(errors="replace"))

    def type(self, keys: str) -> None:
        os.write(self.master, keys.encode())

    def wait_for(self, text: str, count: int = 1) -> None:
        while self.printed.count(text) < count:
            try:
                self.printed += self._chunks.get(timeout=WAIT)
            except queue.Empty:
                raise AssertionError(f"never printed {text!r} {count} time(s); printed: {self.printed}") from None


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")
def test_at_a_terminal_the_arrow_keys_recall_lines_kept_in_the_user_folder(tmp_path: Path) -> None:
    home = tmp_path / "home"
    argv = [sys.executable, "-m", "toolsift", "-c", str(write_config(tmp_path)), "chat"]
    terminal = Terminal(argv, {**os.environ, "XDG_CONFIG_HOME": str(home), "TERM": "xterm"})
    try:
        terminal.wait_for("you> ")
        terminal.type('call general__add {"a": 20, "b": 22}\r')
        terminal.wait_for("42")
        terminal.wait_for("you> ", count=2)  # readline reads the keys now (before, the terminal would echo them)
        terminal.type("\x1b[A\r")  # up arrow: the same line again, not "^[[A"
        terminal.wait_for("42", count=2)
        terminal.type("/quit\r")
        assert terminal.process.wait(timeout=WAIT) == 0
    finally:
        if terminal.process.poll() is None:
            terminal.process.kill()
        terminal.process.wait()
        os.close(terminal.master)
    assert "^[[A" not in terminal.printed
    history = (home / "toolsift" / "chat_history").read_text()
    assert 'call general__add {"a": 20, "b": 22}' in history and "/quit" in history
