"""README.md runs as written: every code block is run or checked, and the demo's table is what the demo prints.

Python blocks run as they are, each in its own interpreter, in a copy of
``examples/`` (the folder a reader starts from). JSON, YAML and SKILL.md
blocks must parse (a JSON block that is a whole config must also validate).
A block that cannot run here (it needs an API key, installs packages or
starts a server that runs until stopped) carries a comment just above it,
``<!-- readme-test: skip: why -->``, and the reason must say why.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from toolsift.config import parse_config
from toolsift.skills import parse_skill_text

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
SKIP = re.compile(r"<!-- readme-test: skip: (?P<why>.+?) -->\s*$")
# Untagged blocks are program output and file trees, shown, not run.
CHECKED = ("python", "bash", "json", "yaml", "markdown")
CONFIG_SECTIONS = {"tools", "agents", "skills", "workspace", "audit", "serve", "search", "drainSeconds"}


@dataclass(frozen=True)
class Block:
    language: str
    body: str
    line: int
    skip: str | None

    def __str__(self) -> str:
        return f"README.md:{self.line} ({self.language})"


def _blocks() -> list[Block]:
    found = []
    for match in re.finditer(r"^```(\w*)\n(.*?)^```", README, re.S | re.M):
        before = README[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        skip = SKIP.match(before)
        found.append(
            Block(
                match.group(1),
                match.group(2),
                README[: match.start()].count("\n") + 1,
                skip.group("why") if skip else None,
            )
        )
    return found


BLOCKS = [block for block in _blocks() if block.language in CHECKED]
RUN = [block for block in BLOCKS if block.skip is None]


def test_every_block_is_checked_or_says_why_not() -> None:
    assert {block.language for block in _blocks()} <= {*CHECKED, ""}
    assert len(RUN) >= 10
    for block in BLOCKS:
        assert block.skip is None or len(block.skip.split()) >= 4, f"{block}: say why it is skipped"
    assert not [str(b) for b in BLOCKS if b.language == "bash" and b.skip is None], "bash blocks are run by CI"


@pytest.fixture(scope="module")
def examples(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("readme") / "examples"
    shutil.copytree(ROOT / "examples", folder, ignore=shutil.ignore_patterns("__pycache__"))
    return folder


@pytest.mark.parametrize("block", [b for b in RUN if b.language == "python"], ids=str)
def test_python_block_runs(block: Block, examples: Path, tmp_path: Path) -> None:
    script = tmp_path / "snippet.py"
    script.write_text(block.body, encoding="utf-8")
    env = {
        "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
        "HOME": str(tmp_path),
        "TOOLSIFT_PYTHON": sys.executable,
    }
    done = subprocess.run(
        [sys.executable, str(script)], cwd=examples, env=env, capture_output=True, text=True, timeout=150, check=False
    )
    assert done.returncode == 0, f"{block} failed:\n{done.stderr}"


@pytest.mark.parametrize("block", [b for b in RUN if b.language in ("json", "yaml", "markdown")], ids=str)
def test_data_block_parses(block: Block, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in re.findall(r"\$\{([A-Z_][A-Z0-9_]*)\}", block.body):  # the reader's own values, set at run time
        monkeypatch.setenv(name, "redis://example:6379/0" if "REDIS" in name else "example")
    if block.language == "markdown":
        assert parse_skill_text(block.body).name
    elif block.language == "yaml":
        for paragraph in block.body.split("\n\n"):
            assert yaml.safe_load(paragraph) is not None, block
    else:
        text = block.body.strip()
        data = json.loads(text if text.startswith("{") else "{" + text + "}")
        assert set(data) <= CONFIG_SECTIONS, f"{block}: not a part of toolsift.json"
        parse_config(data)  # raises ConfigError naming the field when the example is wrong


def test_demo_table_is_what_the_demo_prints() -> None:
    shown = next(b.body for b in _blocks() if b.language == "" and b.body.startswith("turn "))
    expected = [re.split(r"\s{2,}", row.strip()) for row in shown.strip().splitlines()[1:]]
    done = subprocess.run(
        [sys.executable, "-m", "toolsift", "demo"], capture_output=True, text=True, timeout=150, check=False, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    printed = [line.split("\t") for line in done.stdout.splitlines()]
    for row in expected:
        assert row in printed, f"README's demo row {row} is not what the demo prints"
