"""README.md and the pages it links to (docs/, benchmarks/README.md) run as written.

Every fenced block is checked. Python blocks run as they are, in a copy of ``examples/`` (the folder a
reader starts from): in the test's interpreter, each as a module of its own, or in an interpreter of its
own where the block changes what a whole process shares (``own_process``). JSON, YAML and SKILL.md blocks must parse
(a JSON block that is a whole config, or a part of one, must also validate). Bash blocks must
parse, and run either in README's walk-through (``<!-- readme-test: walkthrough -->``, run by
``test_readme_walkthrough.py``) or, where they cannot run here (an API key, an install, a server
that runs until stopped), carry a comment just above them, ``<!-- readme-test: skip: why -->``,
whose reason says why. Untagged blocks are program output and file trees, shown, not run. Links
between the pages must reach a file and a heading that exist.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import types
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from toolsift.config import parse_config
from toolsift.skills._internal import parse_skill_text

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = (README, *sorted((ROOT / "docs").glob("*.md")), ROOT / "benchmarks" / "README.md")
MARK = re.compile(
    r"<!-- readme-test: (?:skip: (?P<why>.+?)|walkthrough(?:: (?P<kind>install|chat|transcript))?) -->\s*$"
)
CHECKED = ("python", "bash", "json", "yaml", "markdown")
CONFIG_SECTIONS = {"tools", "agents", "skills", "workspace", "audit", "serve", "search", "drainSeconds"}


@dataclass(frozen=True)
class Block:
    doc: Path
    language: str
    body: str
    line: int
    skip: str | None
    walkthrough: str | None  # the kind of walk-through step: "run", "install", "chat" or "transcript"

    def __str__(self) -> str:
        return f"{self.doc.relative_to(ROOT)}:{self.line} ({self.language or 'shown'})"


def blocks(doc: Path) -> list[Block]:
    """Every fenced block of a page, with the marker on the line above it."""
    text = doc.read_text(encoding="utf-8")
    found = []
    for match in re.finditer(r"^```(\w*)\n(.*?)^```", text, re.S | re.M):
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        mark = MARK.match(before)
        walkthrough = None
        if mark and mark.group("why") is None:
            walkthrough = mark.group("kind") or "run"
        found.append(
            Block(
                doc,
                match.group(1),
                match.group(2),
                text[: match.start()].count("\n") + 1,
                mark.group("why") if mark else None,
                walkthrough,
            )
        )
    return found


ALL = [block for doc in DOCS for block in blocks(doc)]
RUN = [block for block in ALL if block.language in CHECKED and block.skip is None and block.walkthrough is None]


@pytest.mark.parametrize("doc", DOCS, ids=lambda doc: str(doc.relative_to(ROOT)))
def test_every_block_is_checked_or_says_why_not(doc: Path) -> None:
    for block in blocks(doc):
        assert block.language in (*CHECKED, ""), f"{block}: no check for {block.language!r} blocks"
        assert block.skip is None or len(block.skip.split()) >= 4, f"{block}: say why it is skipped"
        assert block.walkthrough is None or doc == README, f"{block}: only README's walk-through is run as one"
        if block.language == "bash":
            assert block.skip or block.walkthrough, f"{block}: a bash block runs in the walk-through or says why not"


def test_most_blocks_run() -> None:
    assert len(RUN) >= 20


@pytest.mark.parametrize("block", [b for b in ALL if b.language == "bash"], ids=str)
def test_bash_block_parses(block: Block) -> None:
    done = subprocess.run(["bash", "-n"], input=block.body, capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"{block} is not valid bash:\n{done.stderr}"


@pytest.fixture(scope="module")
def examples(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("readme") / "examples"
    shutil.copytree(ROOT / "examples", folder, ignore=shutil.ignore_patterns("__pycache__"))
    return folder


PYTHON = [b for b in RUN if b.language == "python"]
# What a block may change for the whole process it runs in, beyond files, its folder and the environment.
PROCESS_WIDE = ("register_secret_resolver(",)


def own_process(block: Block) -> bool:
    """Whether ``block`` runs in an interpreter of its own, as a reader runs it, rather than in the test's.

    The others run in this process (the same code, without a fresh interpreter importing toolsift for each).
    A block that registers something for the whole process would outlive its test here, so it gets a
    process of its own.
    """
    return any(change in block.body for change in PROCESS_WIDE)


def opens_the_examples(block: Block) -> bool:
    """Whether ``block`` opens ``examples/toolsift.json``, whose servers ``general`` and ``claude-flow`` it then
    reaches in memory: such blocks show the Python API, not the servers' processes."""
    return 'from_config("toolsift.json"' in block.body


def test_a_block_still_runs_as_a_reader_runs_it() -> None:
    assert any(own_process(block) for block in PYTHON)
    assert any(opens_the_examples(block) for block in PYTHON)  # the rule still recognises README's kind of block


def _reader_environment(home: Path) -> dict[str, str]:
    return {
        "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
        "HOME": str(home),
        "TOOLSIFT_PYTHON": sys.executable,
    }


@pytest.mark.parametrize("block", [b for b in PYTHON if own_process(b)], ids=str)
def test_python_block_runs_as_a_process(block: Block, examples: Path, tmp_path: Path) -> None:
    script = tmp_path / "snippet.py"
    script.write_text(block.body, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)],
        cwd=examples,
        env=_reader_environment(tmp_path),
        capture_output=True,
        text=True,
        timeout=150,
        check=False,
    )
    assert done.returncode == 0, f"{block} failed:\n{done.stderr}"


@pytest.mark.parametrize("block", [b for b in PYTHON if not own_process(b)], ids=str)
def test_python_block_runs(
    block: Block, examples: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    """The block as a script of its own module, in ``examples/``, with a reader's home and ``sys.argv``."""
    if opens_the_examples(block):
        request.getfixturevalue("examples_in_process")
    monkeypatch.chdir(examples)
    monkeypatch.setattr(sys, "argv", [str(tmp_path / "snippet.py")])
    module = types.ModuleType("readme_snippet")
    module.__file__ = sys.argv[0]
    monkeypatch.setitem(sys.modules, module.__name__, module)
    environment = dict(os.environ)
    os.environ.update(_reader_environment(tmp_path), XDG_CONFIG_HOME=str(tmp_path / ".config"))
    try:
        exec(compile(block.body, str(block), "exec"), module.__dict__)  # an exception fails the test, naming the block
    finally:
        os.environ.clear()
        os.environ.update(environment)


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


def _anchors(doc: Path) -> set[str]:
    """The anchors GitHub gives a page's headings (lower case, punctuation dropped, spaces as hyphens)."""
    text = re.sub(r"^```.*?^```", "", doc.read_text(encoding="utf-8"), flags=re.S | re.M)
    return {
        re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")
        for title in re.findall(r"^#+ (.+)$", text, re.M)
    }


@pytest.mark.parametrize("doc", DOCS, ids=lambda doc: str(doc.relative_to(ROOT)))
def test_links_reach_a_page_and_a_heading(doc: Path) -> None:
    text = re.sub(r"^```.*?^```", "", doc.read_text(encoding="utf-8"), flags=re.S | re.M)
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):  # a web address
            continue
        path, _, anchor = target.partition("#")
        page = (doc.parent / path).resolve() if path else doc
        assert page.exists(), f"{doc.relative_to(ROOT)}: link to {target!r}: no such file"
        assert not anchor or anchor in _anchors(page), f"{doc.relative_to(ROOT)}: link to {target!r}: no such heading"


def test_readme_links_every_page_of_the_documentation() -> None:
    linked = {
        (ROOT / target).resolve() for target in re.findall(r"\]\(([\w/.-]+\.md)(?:#[^)]*)?\)", README.read_text())
    }
    assert set(DOCS[1:]) <= linked


def test_readme_takes_a_newcomer_in_few_lines() -> None:
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 400


def test_no_page_advises_an_extra_from_an_index() -> None:
    """toolsift is not on a package index: ``pip install 'toolsift[x]'`` would install someone else's package."""
    for doc in DOCS:
        assert "pip install 'toolsift[" not in doc.read_text(encoding="utf-8"), doc


def test_ci_runs_the_readme_commands_from_a_fresh_clone() -> None:
    """README's first two lines are the demo and the tests; .ci/run runs exactly those in its fresh venv."""
    first = blocks(README)[0]
    assert first.walkthrough == "install"
    commands = [line.split("#", 1)[0].strip() for line in first.body.splitlines()]
    assert len(commands) == 2
    assert commands[0].startswith("python3 -m venv .venv && "), "the first command makes its own environment"
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    for command, expected in zip(commands, ("toolsift demo", "pytest --cov"), strict=True):
        last = command.rsplit("&&", 1)[-1].strip()
        assert last == f".venv/bin/{expected}", f"README's command {command!r} does not end in {expected!r}"
        assert expected in ci, f".ci/run does not run {expected!r} as README gives it"
        assert re.search(r"(^|&& )\.venv/bin/pip install -e ", command), f"{command!r} installs outside .venv"
