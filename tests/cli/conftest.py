"""Fixtures of the command-line tests."""

from __future__ import annotations

import pytest


@pytest.fixture
def general_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """The example server ``general.py`` runs in this process wherever a config names a server ``general``.

    For the many tests whose config starts that one server: unlike ``examples_in_process``, it builds no
    214-tool ``claude-flow`` server (about 0.6 s of CPU) that such a test never reaches.
    """
    from mcp_helpers import example_server, in_memory_everywhere

    in_memory_everywhere(monkeypatch, {"general": example_server("general.py")})
