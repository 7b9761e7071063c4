"""Fixtures of the command-line tests."""

from __future__ import annotations

import pytest


@pytest.fixture
def general_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """The example server ``general.py`` runs in this process wherever a config names a server ``general``.

    Unlike ``examples_in_process``, only ``general``: every other server a config names, ``claude-flow``
    included, starts as a real process.
    """
    from mcp_helpers import example_server, in_memory_everywhere

    in_memory_everywhere(monkeypatch, {"general": example_server("general.py")})
