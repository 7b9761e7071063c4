"""The demo's notes server: a real child whose start is waited for, and what is said when it never starts."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolsift import ConfigError
from toolsift.cli import _demo
from toolsift.cli._output import Output


def examples_with(tmp_path: Path, server: str) -> Path:
    """An examples folder whose notes server is ``server`` (Python source)."""
    (tmp_path / "servers").mkdir()
    (tmp_path / "servers" / "notes_http.py").write_text(server)
    return tmp_path


async def test_a_notes_server_that_exits_before_it_listens_is_named_with_its_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_demo, "EXAMPLES", examples_with(tmp_path, "raise SystemExit(3)\n"))
    with pytest.raises(ConfigError, match="the example notes server exited with code 3"):
        async with _demo.notes_server(Output()):
            pass


async def test_a_notes_server_that_never_listens_is_given_up_on_at_the_deadline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A server that never writes its ready file; the deadline is the event this test is about.
    monkeypatch.setattr(_demo, "EXAMPLES", examples_with(tmp_path, "import time\ntime.sleep(600)\n"))
    monkeypatch.setattr(_demo, "READY_SECONDS", 0)
    with pytest.raises(ConfigError, match=r"the example notes server did not start within 0 s"):
        async with _demo.notes_server(Output()):
            pass
