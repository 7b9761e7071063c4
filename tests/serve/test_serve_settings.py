"""The ``serve`` section: defaults, validation messages, loading next to the config, overrides."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from serve_project import write_project

from toolsift import ConfigError, SecretError
from toolsift._net import is_loopback
from toolsift.config._internal import ServeSettings
from toolsift.serve import build_server, load_serve_config


def test_serve_settings_defaults_are_safe() -> None:
    settings = ServeSettings()
    assert (settings.transport, settings.host, settings.token, settings.stateless) == (
        "stdio",
        "127.0.0.1",
        None,
        False,
    )
    assert settings.commands.allowed_programs == ()
    assert settings.untrusted_tools == ("read_file", "exec_shell")
    assert settings.command_arguments == {"exec_shell": "command"}


def test_serve_settings_accept_camel_case_and_resolve_paths(tmp_path: Path) -> None:
    config = write_project(
        tmp_path,
        serve={
            "maxResultBytes": 10,
            "allowedOrigins": ["https://a.example"],
            "workspace": "ws",
            "urls": {"deniedHosts": ["X.example"]},
        },
    )
    _, settings = load_serve_config(config)
    assert settings.max_result_bytes == 10
    assert settings.allowed_origins == ("https://a.example",)
    assert settings.workspace == tmp_path / "ws"
    assert settings.urls.denied_hosts == ("x.example",)


@pytest.mark.parametrize(
    ("serve", "message"),
    [
        ({"port": 70000}, r"serve\.port: "),
        ({"workers": 2}, "workers = 2 needs stateless = true"),
        ({"path": "mcp"}, "expected a path starting with '/', found 'mcp'"),
        ({"allowedOrigins": ["example.com"]}, "must look like scheme://host"),
        ({"gateway": []}, "an empty list of gateway patterns serves nothing"),
        ({"gateway": ""}, "expected true, false, a skill name or a list of tool globs"),
        ({"gateway": ["a b"]}, "is not a valid glob"),
        ({"token": "  "}, "the token is empty"),
        ({"maxResultBytes": 0}, r"serve\.maxResultBytes: "),
        ({"untrustedTools": ["{x}"]}, "serve.untrusted_tools"),
        ({"commands": {"allowedPrograms": ["./x"]}}, "must be a bare name"),
        ({"transport": "sse"}, r"serve\.transport: "),
        ({"nope": 1}, r"serve\.nope: "),
    ],
)
def test_serve_settings_report_the_field_at_fault(tmp_path: Path, serve: dict[str, object], message: str) -> None:
    config = write_project(tmp_path, serve=serve)
    with pytest.raises(ConfigError, match=message):
        load_serve_config(config)


def test_serve_token_reference_must_resolve(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TOOLSIFT_UNSET_TOKEN", raising=False)
    config = write_project(tmp_path, serve={"token": "${TOOLSIFT_UNSET_TOKEN}"})
    with pytest.raises(SecretError, match=r"environment variable 'TOOLSIFT_UNSET_TOKEN' is not set"):
        load_serve_config(config)


@pytest.mark.parametrize(
    ("content", "message"),
    [("{", "invalid JSON"), ("[1]", "expected a JSON object at the top level, found list")],
)
def test_load_serve_config_reports_broken_files(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "toolsift.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ConfigError, match=message):
        load_serve_config(path)


def test_load_serve_config_reports_missing_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read the config file"):
        load_serve_config(tmp_path / "missing.json")


def test_load_serve_config_reads_files_without_a_serve_section(tmp_path: Path) -> None:
    path = tmp_path / "toolsift.json"
    path.write_text(json.dumps({"workspace": "."}), encoding="utf-8")
    config, settings = load_serve_config(path)
    assert settings == ServeSettings()
    assert config.workspace == tmp_path


def test_build_server_applies_overrides(tmp_path: Path) -> None:
    config = write_project(tmp_path, serve={"maxResultBytes": 99})
    server = build_server(config, port=0, transport="http")
    assert (server.settings.port, server.settings.transport, server.settings.max_result_bytes) == (0, "http", 99)
    with pytest.raises(ConfigError, match="workers = 3 needs stateless = true"):
        build_server(config, workers=3)
    loaded, settings = load_serve_config(config)
    assert build_server(loaded).settings == ServeSettings()
    assert build_server(loaded, settings).settings.max_result_bytes == 99


def test_build_server_refuses_unknown_profiles_and_workspaces(tmp_path: Path) -> None:
    config = write_project(tmp_path)
    with pytest.raises(ConfigError, match="no agent named 'ghost'; configured agents: default"):
        build_server(config, profile="ghost")
    with pytest.raises(ConfigError, match="is not an existing directory"):
        build_server(config, workspace=str(tmp_path / "missing"))


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("::1", True),
        ("[::1]", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("example.com", False),
    ],
)
def test_is_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_serve_settings_repr_hides_the_token() -> None:
    settings = ServeSettings(token="very-secret")
    assert "very-secret" not in repr(settings) + str(settings)
    assert "token=set" in repr(settings)
