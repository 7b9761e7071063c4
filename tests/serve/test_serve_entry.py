"""Entry points in process: the stdio error answers, the worker app factory, and the module's ``main``."""

from __future__ import annotations

import gc
import json
import os
from pathlib import Path

import anyio
import mcp.types as types
import pytest
from mcp.shared.message import SessionMessage
from pydantic import ValidationError
from serve_project import write_project
from starlette.applications import Starlette

from toolsift import ConfigError
from toolsift.config._internal import ServeSettings
from toolsift.registry import _heap
from toolsift.serve import build_server
from toolsift.serve._http import ENV_CONFIG, ENV_SETTINGS, _settings_json, app_from_environment
from toolsift.serve._internal import main
from toolsift.serve._stdio import AnsweringReadStream


def _bad_line(text: str) -> Exception:
    try:
        types.jsonrpc_message_adapter.validate_json(text)
    except ValidationError as exc:
        return exc
    raise AssertionError(f"{text!r} is valid")


async def test_answering_stream_answers_bad_lines_and_passes_messages() -> None:
    ping = SessionMessage(types.JSONRPCRequest(jsonrpc="2.0", id=1, method="ping"))
    inbound_send, inbound = anyio.create_memory_object_stream[SessionMessage | Exception](10)
    outbound, answers = anyio.create_memory_object_stream[SessionMessage](10)
    for item in (_bad_line("{x"), ping, _bad_line('{"a": 1}'), ping):
        inbound_send.send_nowait(item)
    inbound_send.close()
    async with AnsweringReadStream(inbound, outbound) as stream:
        assert stream.last_context is None
        assert await stream.receive() is ping
        received = [item async for item in stream]
    assert received == [ping]
    outbound.close()
    errors = [answer.message for answer in [item async for item in answers]]
    assert [(e.id, e.error.code) for e in errors if isinstance(e, types.JSONRPCError)] == [
        (None, types.PARSE_ERROR),
        (None, types.INVALID_REQUEST),
    ]


def test_app_from_environment_builds_a_worker_app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = write_project(tmp_path)
    monkeypatch.setenv(ENV_CONFIG, str(config))
    monkeypatch.delenv(ENV_SETTINGS, raising=False)
    assert isinstance(app_from_environment(), Starlette)
    settings = ServeSettings(stateless=True, workers=2, token="tok", port=0)
    encoded = _settings_json(settings)
    assert json.loads(encoded)["token"] == "tok"
    monkeypatch.setenv(ENV_SETTINGS, encoded)
    assert isinstance(app_from_environment(), Starlette)


def test_a_worker_settles_its_heap_and_a_server_built_by_a_library_does_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_heap, "_frozen_before", False)  # the first registration of a settling process freezes
    monkeypatch.setenv(ENV_CONFIG, str(write_project(tmp_path)))
    monkeypatch.delenv(ENV_SETTINGS, raising=False)
    gc.unfreeze()  # what an earlier test of this process froze
    try:
        build_server(os.environ[ENV_CONFIG])
        assert gc.get_freeze_count() == 0
        app_from_environment()
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


def test_app_from_environment_needs_a_config(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_CONFIG, raising=False)
    with pytest.raises(ConfigError, match="set TOOLSIFT_SERVE_CONFIG to the config file"):
        app_from_environment()


def test_main_reports_config_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = write_project(tmp_path)
    assert main(["--config", str(config), "--workers", "2"]) == 4
    assert "workers = 2 needs stateless = true" in capsys.readouterr().err
    assert main(["--config", str(tmp_path / "missing.json")]) == 4
    assert "cannot read the config file" in capsys.readouterr().err
    assert main(["--config", str(config), "--transport", "http", "--host", "0.0.0.0"]) == 4
    assert "refusing to serve on '0.0.0.0' without a token" in capsys.readouterr().err
