"""Fixtures of the command-line tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture
def general_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """The example server ``general.py`` runs in this process wherever a config names a server ``general``.

    Unlike ``examples_in_process``, only ``general``: every other server a config names, ``claude-flow``
    included, starts as a real process.
    """
    from mcp_helpers import example_server, in_memory_everywhere

    in_memory_everywhere(monkeypatch, {"general": example_server("general.py")})


@pytest.fixture
def empty_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An empty project folder as the working directory, with a user folder of the test's own."""
    from toolsift.cli._app import state

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("TOOLSIFT_CONFIG", raising=False)
    folder = tmp_path / "project"
    folder.mkdir()
    monkeypatch.chdir(folder)
    yield folder
    state.config = None  # the CLI's global state outlives one in-process run
