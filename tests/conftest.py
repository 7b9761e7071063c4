"""Shared pytest fixtures."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

# Property tests check what is generated, not how fast: on a loaded machine generating an example can take
# longer than Hypothesis allows by default, and one slow example is no failure. Hangs are pytest-timeout's job.
settings.register_profile("toolsift", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("toolsift")


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    """Run async tests on asyncio (the MCP SDK's transports are tested there)."""
    return "asyncio"


@pytest.fixture(scope="session", autouse=True)
def _empty_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Run every test with an empty home folder, so a developer's own skills and configs never leak in.

    Toolbox, ``toolsift serve`` and the CLI read ``~/.toolsift/skills``, ``~/.claude/skills`` and the
    user config by default; a test that needs them sets them up under its own ``HOME``.
    """
    home = tmp_path_factory.mktemp("home")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", str(home))
        patch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
        yield


@pytest.fixture
def examples_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """The example servers ``flow.py`` (as ``claude-flow``) and ``general.py`` (as ``general`` and ``lazy``) run in
    this process wherever a config names them: for Toolbox, serve and CLI tests of what is done with their tools,
    prompts and instructions rather than of the child process."""
    from mcp_helpers import example_server, in_memory_everywhere
    from servers import example_module

    in_memory_everywhere(
        monkeypatch,
        {
            "claude-flow": example_module("flow.py").build_server,  # 214 tools: built only for a test that connects
            "general": example_server("general.py"),
            "lazy": example_server("general.py"),
        },
    )
