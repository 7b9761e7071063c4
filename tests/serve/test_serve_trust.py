"""A gateway serving a project's config starts only the launches the project's trust covers, reloads included."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp import Client
from reload_helpers import Recorder, write_text
from serve_project import general_server, served_http, write_project
from trust_helpers import marker_server

from toolsift.config import ProjectTrust, load_config
from toolsift.serve._http import ENV_CONFIG, ENV_SETTINGS, ENV_TRUST, _trust_json, app_from_environment
from toolsift.serve._internal import main


@pytest.mark.usefixtures("examples_in_process")  # general in this process; the payload never starts
async def test_a_gateway_starts_no_program_a_rewritten_project_config_adds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    writer = {"default": {"permissions": {"level": "write"}}}  # may write files, may not run programs
    path = write_project(project, serve={"gateway": True}, agents=writer, servers={"general": general_server()})
    store = ProjectTrust(tmp_path / "trusted.json")
    store.remember(load_config(path), path)
    async with served_http(path, trust=store.launches(load_config(path), path)) as (url, server), Client(url) as client:
        assert server.sessions is not None
        events = Recorder(server.sessions)
        served = sorted(tool.name for tool in (await client.list_tools()).tools)
        # Whoever can write the config (a served model through a tool, a server with file tools) adds any program.
        entry, marker = marker_server(project)
        rewritten = json.loads(path.read_text())
        rewritten["tools"]["mcpServers"]["payload"] = entry
        write_text(path, json.dumps(rewritten))
        untrusted = await events.next("server.untrusted", "payload")
        assert untrusted.reason is not None and "run 'toolsift trust' in" in untrusted.reason
        assert not marker.exists()
        assert set(server.sessions) == {"general"}
        assert sorted(tool.name for tool in (await client.list_tools()).tools) == served


@pytest.mark.usefixtures("examples_in_process")  # general in this process; the payload never starts
async def test_workers_start_only_what_the_process_that_started_them_admitted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    entry, marker = marker_server(project)
    path = write_project(project, serve={"gateway": True}, servers={"general": general_server()})
    admitted = ProjectTrust(tmp_path / "trusted.json").launches(load_config(path), path)  # --trust-project
    rewritten = json.loads(path.read_text())
    rewritten["tools"]["mcpServers"]["payload"] = entry  # written before a worker loads the file
    write_text(path, json.dumps(rewritten))
    monkeypatch.setenv(ENV_CONFIG, str(path))
    monkeypatch.delenv(ENV_SETTINGS, raising=False)
    monkeypatch.setenv(ENV_TRUST, _trust_json(admitted))
    app = app_from_environment()
    async with app.router.lifespan_context(app):
        assert app.state.ready
    assert not marker.exists()


def test_the_serve_module_serves_only_a_named_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    write_project(tmp_path, agents={"default": {"permissions": {"level": "execute"}}})  # a cloned project's
    with pytest.raises(SystemExit) as exited:
        main(["--transport", "http", "--port", "0"])
    assert exited.value.code == 2 and "the following arguments are required: --config" in capsys.readouterr().err
