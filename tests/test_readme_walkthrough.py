"""README's walk-through, run as written: the demo, your own server, your own skill, a chat that sees an edit.

The blocks marked ``<!-- readme-test: walkthrough -->`` run in order with bash, in a copy of the
repository's ``examples/`` beside a ``.venv`` that is this interpreter's environment, so the README's
``.venv/bin/...`` and ``. .venv/bin/activate`` mean what they mean in a clone. The ``install`` block is
the README's first: its commands that create the environment and install are left to ``.ci/run``
(which runs them from a fresh clone); the rest of its first line, the demo, runs here beside the other
steps. The ``chat`` block starts a process whose stdin is a pipe; each ``transcript`` block after it is
driven line by line: a line after ``you> `` is typed once every line shown before it has been printed,
and a plain block met in between (the skill's edit) runs while the chat is open.
"""

from __future__ import annotations

import os
import queue
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_readme import README, ROOT, Block, blocks

PROMPT = "you> "
INSTALLING = re.compile(r"-m venv|pip install")
# How long one expected line may take to appear: a deadline on an event, not a pause.
PATIENCE = 150


def walkthrough() -> list[Block]:
    """The walk-through's blocks of README.md, in order."""
    return [block for block in blocks(README) if block.walkthrough is not None]


def demo_rows() -> list[list[str]]:
    """The demo's table as README shows it, one list of cells per row."""
    shown = next(b.body for b in blocks(README) if b.language == "" and b.body.startswith("turn "))
    return [re.split(r"\s{2,}", row.strip()) for row in shown.strip().splitlines()[1:]]


def test_the_walkthrough_has_every_step() -> None:
    kinds = [step.walkthrough for step in walkthrough()]
    assert kinds[:1] == ["install"] and kinds.count("chat") == 1 and kinds.count("transcript") >= 2
    bodies = "\n".join(step.body for step in walkthrough())
    for command in (
        "toolsift demo",
        "toolsift mcp add",
        "toolsift builtins on",
        "toolsift skills new",
        "toolsift check",
        "--model scripted:",
    ):
        assert command in bodies, f"the walk-through does not run {command!r}"


# What writes a file by hand: a redirection, a heredoc, an in-place edit.
HAND_EDIT = re.compile(r"(?<![&|])>(?!&)|<<|\bsed -i\b|\btee\b")


def test_the_quick_start_is_ten_commands_and_none_an_edit() -> None:
    """From ``git clone`` to a chat over an own server and skill: the clone, the install line, the steps to the chat."""
    steps = walkthrough()
    path = steps[: next(i for i, step in enumerate(steps) if step.walkthrough == "chat") + 1]
    commands = [line for step in path[1:] for line in step.body.splitlines() if line.split("#", 1)[0].strip()]
    assert 1 + 1 + len(commands) <= 10, commands  # git clone and cd, then README's first line
    edits = [command for command in commands if HAND_EDIT.search(command)]
    assert not edits, f"the quick start edits a file by hand: {edits}"


class Chat:
    """A running ``toolsift chat``: its merged output read by a thread, waited on line by line."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.process = process
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.seen: list[str] = []  # printed since the last line typed
        self.printed: list[str] = []  # everything, for the failure message
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def expect(self, wanted: list[str], where: Block) -> None:
        """Wait until every line of ``wanted`` has been printed since the last input."""
        missing = [line for line in wanted if line not in self.seen]
        while missing:
            try:
                line = self.lines.get(timeout=PATIENCE)
            except queue.Empty:
                line = None
            if line is None:
                printed = "\n".join(self.printed)
                pytest.fail(f"{where}: the chat did not print {missing}; it printed:\n{printed}")
            self.seen.append(line)
            self.printed.append(line)
            missing = [wanted_line for wanted_line in missing if wanted_line != line]

    def type(self, text: str) -> None:
        assert self.process.stdin is not None
        self.seen = []
        self.process.stdin.write(text + "\n")
        self.process.stdin.flush()


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    """A folder laid out like a clone: ``examples/`` and a ``.venv`` that is this test's environment."""
    venv = Path(sys.executable).parent.parent  # not resolved: a venv's python is a link out of it
    if not (venv / "bin" / "toolsift").exists() or not (venv / "bin" / "activate").exists():
        pytest.skip(f"{venv} is not a virtual environment with toolsift installed")
    shutil.copytree(ROOT / "examples", tmp_path / "examples", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / ".venv").symlink_to(venv)
    return tmp_path


def _environment(clone: Path) -> dict[str, str]:
    """A reader's shell: nothing of toolsift's own settings, a home and user config of its own."""
    home = clone / "home"
    home.mkdir()
    return {
        "PATH": f"{clone / '.venv' / 'bin'}:/usr/bin:/bin",
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "LANG": "C.UTF-8",
        # A terminal flushes each line; a pipe would hold the chat's answers until it exits.
        "PYTHONUNBUFFERED": "1",
    }


def _run(step: Block, body: str, cwd: Path, env: dict[str, str]) -> tuple[str, Path]:
    """Run one block with bash, stopping at its first failure; returns its output and the folder it ended in."""
    where = Path(env["HOME"]) / ".walkthrough-cwd"
    script = f"set -euo pipefail\n{body}\nprintf '%s' \"$PWD\" > {where}\n"
    done = subprocess.run(
        ["bash", "-c", script], cwd=cwd, env=env, capture_output=True, text=True, timeout=PATIENCE, check=False
    )
    assert done.returncode == 0, f"{step} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
    return done.stdout, Path(where.read_text(encoding="utf-8"))


def _transcript(body: str) -> Iterator[tuple[str, str]]:
    """``("type", text)`` for a line after the prompt, ``("expect", line)`` for a line shown."""
    for line in body.splitlines():
        if line.startswith(PROMPT):
            yield "type", line[len(PROMPT) :]
        elif line.strip():
            yield "expect", line


def _start_demo(step: Block, clone: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    """The first line of README's first block without its install commands: the demo, started beside the rest.

    It shares nothing with the steps after it, so it runs while they do (two cores, half the wait).
    """
    first = step.body.splitlines()[0].split("#", 1)[0]
    demo = " && ".join(part.strip() for part in first.split("&&") if not INSTALLING.search(part))
    assert demo, f"{step}: nothing left to run once the install is left out"
    return subprocess.Popen(
        ["bash", "-c", demo], cwd=clone, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def _start_chat(step: Block, cwd: Path, env: dict[str, str]) -> Chat:
    process = subprocess.Popen(
        ["bash", "-c", f"exec {step.body.strip()}"],
        cwd=cwd,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        bufsize=1,
    )
    return Chat(process)


def _follow(chat: Chat, step: Block) -> None:
    """Type each ``you>`` line of a transcript once the lines shown before it have been printed."""
    wanted: list[str] = []
    for what, text in _transcript(step.body):
        if what == "expect":
            wanted.append(text)
            continue
        chat.expect(wanted, step)
        wanted = []
        chat.type(text)
    chat.expect(wanted, step)


def test_readme_walkthrough_runs_as_written(clone: Path) -> None:
    env = _environment(clone)
    cwd = clone
    demo: subprocess.Popen[str] | None = None
    chat: Chat | None = None
    try:
        for step in walkthrough():
            if step.walkthrough == "install":
                demo = _start_demo(step, clone, env)
            elif step.walkthrough == "run":
                _, cwd = _run(step, step.body, cwd, env)
            elif step.walkthrough == "chat":
                chat = _start_chat(step, cwd, env)
            else:
                assert chat is not None, f"{step}: a transcript before the chat started"
                _follow(chat, step)
        assert chat is not None and chat.process.stdin is not None
        chat.process.stdin.close()
        assert chat.process.wait(timeout=PATIENCE) == 0, "\n".join(chat.printed)
        assert (cwd / "sum.txt").read_text(encoding="utf-8") == "5"  # the call the edit allowed really ran

        assert demo is not None
        printed, errors = demo.communicate(timeout=PATIENCE)
        assert demo.returncode == 0, f"the demo failed:\n{printed}\n{errors}"
        rows = [line.split("\t") for line in printed.splitlines()]
        for row in demo_rows():
            assert row in rows, f"README's demo row {row} is not what the demo prints:\n{printed}"
    finally:
        for process in (demo, chat.process if chat else None):
            if process is not None and process.poll() is None:
                process.kill()
                process.wait()


def test_a_transcript_line_that_is_not_printed_fails_the_walkthrough() -> None:
    process = subprocess.Popen(
        ["bash", "-c", 'read line; echo "got $line"'],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
    )
    chat = Chat(process)
    step = walkthrough()[-1]
    chat.type("hello")
    chat.expect(["got hello"], step)
    with pytest.raises(pytest.fail.Exception, match="did not print \\['never'\\]"):
        chat.expect(["never"], step)
    process.wait()
