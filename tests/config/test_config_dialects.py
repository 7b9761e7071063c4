"""Other clients' MCP config files, loaded as they are: one realistic fixture per client, then each mechanism."""

from __future__ import annotations

import json
import os
import shutil
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolsift import ConfigError, SecretError
from toolsift.config import ServerConfig, load_config, validate_config
from toolsift.config._dialects import strip_jsonc
from toolsift.config._internal import ConfigReport, resolve_server

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "client_configs"
VSCODE = FIXTURES / "vscode" / ".vscode" / "mcp.json"
CURSOR = FIXTURES / "cursor" / ".cursor" / "mcp.json"
WINDSURF = FIXTURES / "windsurf" / "mcp_config.json"
CLINE = FIXTURES / "cline" / "cline_mcp_settings.json"
GEMINI = FIXTURES / "gemini" / ".gemini" / "settings.json"
FASTMCP = FIXTURES / "fastmcp" / "servers.json"
CLAUDE_CODE = FIXTURES / "claude_code" / ".mcp.json"
EVERY_FIXTURE = {
    "vscode": VSCODE,
    "cursor": CURSOR,
    "windsurf": WINDSURF,
    "cline": CLINE,
    "gemini": GEMINI,
    "fastmcp": FASTMCP,
    "claude": CLAUDE_CODE,
}


def line_of(file: Path, needle: str, after: str = "") -> int:
    """The first line holding ``needle`` at or after the first line holding ``after``."""
    lines = file.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if after in line)
    return next(i for i, line in enumerate(lines) if i >= start and needle in line) + 1


def checked(file: Path) -> ConfigReport:
    report = validate_config(file)
    assert report.ok, [str(p) for p in report.problems]
    assert report.config is not None
    return report


def warnings_by_field(report: ConfigReport) -> dict[str, tuple[int | None, str]]:
    return {str(w.field): (w.line, w.message) for w in report.warnings}


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


# -- one fixture per client -----------------------------------------------------------------------


def test_vscode_file_loads_servers_inputs_and_workspace_variables() -> None:
    report = checked(VSCODE)
    assert report.config is not None and report.dialect == "vscode"
    servers = report.config.servers
    assert set(servers) == {"general", "github", "notes"}
    workspace = FIXTURES / "vscode"
    general = servers["general"]
    assert general.base_dir == workspace  # the folder that holds .vscode/, not .vscode/ itself
    assert dict(general.env) == {"PROJECT_ROOT": str(workspace), "LOG_LEVEL": "${LOG_LEVEL}"}
    assert general.env_file == f"{workspace}/.env"
    assert servers["github"].transport_kind == "http"
    assert servers["github"].headers == {"Authorization": "Bearer ${TOOLSIFT_INPUT_GITHUB_TOKEN}"}
    assert servers["notes"].transport_kind == "sse"
    warnings = warnings_by_field(report)
    line, message = warnings["servers.github.headers.Authorization"]
    assert line == line_of(VSCODE, '"Authorization"')
    assert "TOOLSIFT_INPUT_GITHUB_TOKEN" in message and "GitHub personal access token" in message
    line, message = warnings["servers.notes.dev"]
    assert line == line_of(VSCODE, '"dev"') and message.startswith("ignored:")
    assert len(report.warnings) == 2


def test_cursor_file_loads_env_variables_env_file_and_its_oauth_client() -> None:
    report = checked(CURSOR)
    assert report.config is not None and report.dialect == "cursor" and not report.warnings
    servers = report.config.servers
    general = servers["general"]
    assert dict(general.env) == {"API_KEY": "${GENERAL_API_KEY}"}
    assert general.env_file == ".env" and general.base_dir == FIXTURES / "cursor"
    assert servers["linear"].transport_kind == "http"
    assert servers["linear"].headers == {"Authorization": "Bearer ${LINEAR_TOKEN}"}
    docs = servers["docs"]
    assert docs.transport_kind == "sse"  # Cursor picks SSE for a /sse path
    assert docs.auth is not None and docs.auth.grant == "authorization_code" and docs.auth.scopes == ("read",)
    assert (docs.auth.client_id, docs.auth.client_secret) == ("${DOCS_CLIENT_ID}", "${DOCS_CLIENT_SECRET}")
    resolved = resolve_server(docs, environ={"DOCS_CLIENT_ID": "docs-app", "DOCS_CLIENT_SECRET": "s3cret"})
    assert dict(resolved.auth_secrets) == {"clientId": "docs-app", "clientSecret": "s3cret"}


def test_windsurf_file_maps_server_url_disabled_and_disabled_tools() -> None:
    report = checked(WINDSURF)
    assert report.config is not None and report.dialect == "windsurf" and not report.warnings
    servers = report.config.servers
    assert servers["general"].exclude_tools == ("slow", "fail")
    assert dict(servers["general"].env) == {"GREETING": "${USER}"}
    context7 = servers["context7"]
    assert (context7.url, context7.transport_kind, context7.enabled) == ("https://mcp.context7.com/mcp", "http", True)
    figma = servers["figma"]
    assert (figma.transport_kind, figma.enabled) == ("sse", False)


def test_cline_file_keeps_every_server_and_warns_about_auto_approve() -> None:
    report = checked(CLINE)
    assert report.config is not None and report.dialect == "cline"
    servers = report.config.servers
    assert set(servers) == {"general", "flow", "search", "events"}
    assert servers["general"].tool_timeout == 120  # Cline's timeout: seconds per request
    assert servers["general"].timeout == 30
    assert (servers["search"].transport_kind, servers["search"].enabled) == ("http", False)
    assert (servers["events"].transport_kind, servers["events"].enabled) == ("sse", False)  # Cline's bare url is SSE
    approvals = [w for w in report.warnings if w.field and w.field.endswith(".autoApprove")]
    assert [w.server for w in approvals] == ["general", "flow", "search", "events"]
    assert approvals[0].line == line_of(CLINE, '"autoApprove"')
    assert "restricts" in approvals[0].message and "agents.<name>.permissions" in approvals[0].message
    line, message = warnings_by_field(report)["mcpServers.search.headers.Authorization"]
    assert line == line_of(CLINE, '"Authorization"') and "plaintext" in message


def test_gemini_settings_map_http_url_timeouts_tool_filters_and_exclusions() -> None:
    report = checked(GEMINI)
    assert report.config is not None and report.dialect == "gemini"
    servers = report.config.servers
    general = servers["general"]
    assert general.tool_timeout == 30  # 30000 ms
    assert general.include_tools == ("echo", "add")
    assert dict(general.env) == {"API_KEY": "${GENERAL_API_KEY}"}  # Gemini's $VAR
    assert general.trust == "untrusted"
    github = servers["github"]
    assert (github.url, github.transport_kind, github.tool_timeout) == ("https://api.githubcopilot.com/mcp/", "http", 5)
    assert github.exclude_tools == ("delete_repository",)
    assert github.headers == {"Authorization": "Bearer ${GITHUB_TOKEN}"}
    assert servers["events"].transport_kind == "sse"  # Gemini's `url` is SSE
    assert servers["experimental"].enabled is False  # mcp.excluded
    warnings = warnings_by_field(report)
    assert set(warnings) == {"theme", "mcpServers.general.trust", "mcpServers.general.description"}
    line, message = warnings["mcpServers.general.trust"]
    assert line == line_of(GEMINI, '"trust"')
    assert "confirmation prompts" in message and '"untrusted"' in message and "boundary markers" in message


def test_fastmcp_config_maps_transport_auth_token_and_milliseconds() -> None:
    report = checked(FASTMCP)
    assert report.config is not None and report.dialect == "fastmcp"
    servers = report.config.servers
    assert servers["general"].transport_kind == "stdio"
    weather = servers["weather"]
    assert weather.transport_kind == "http" and weather.tool_timeout == 30
    assert weather.headers == {"Authorization": "Bearer fmcp-weather-0123456789"}
    assert "fmcp-weather" not in repr(weather)  # the token goes the secret-safe header way
    assert servers["assistant"].transport_kind == "http" and servers["assistant"].headers == {}
    assert servers["legacy"].transport_kind == "sse"  # inferred from the /sse path, as FastMCP does
    warnings = warnings_by_field(report)
    line, message = warnings["mcpServers.weather.auth"]
    assert line == line_of(FASTMCP, '"auth"', after='"weather"') and "plaintext" in message
    line, message = warnings["mcpServers.assistant.auth"]
    assert line == line_of(FASTMCP, '"auth"', after='"assistant"') and "signs in with OAuth" in message
    assert servers["assistant"].auth is not None and servers["assistant"].auth.grant == "authorization_code"


def test_claude_code_file_maps_streamable_http_and_plugin_variables() -> None:
    report = checked(CLAUDE_CODE)
    assert report.config is not None and report.dialect == "claude" and not report.warnings
    servers = report.config.servers
    folder = FIXTURES / "claude_code"
    assert dict(servers["general"].env) == {"PROJECT_DIR": f"${{CLAUDE_PROJECT_DIR:-{folder}}}"}
    assert servers["formatter"].command == f"${{CLAUDE_PLUGIN_ROOT:-{folder}}}/servers/formatter"
    assert dict(servers["formatter"].env) == {"DB_URL": "${DB_URL:-sqlite:///local.db}"}
    assert servers["sentry"].transport_kind == "http"


@pytest.mark.parametrize("dialect", sorted(EVERY_FIXTURE))
def test_every_fixture_is_recognised_by_its_keys_alone(tmp_path: Path, dialect: str) -> None:
    copy = shutil.copy(EVERY_FIXTURE[dialect], tmp_path / "servers.json")
    assert validate_config(copy).dialect == dialect


# -- translation: where problems point, conflicts, file-level keys ------------------------------------


def test_problem_in_a_translated_key_names_the_key_as_written(tmp_path: Path) -> None:
    file = write(
        tmp_path / ".gemini" / "settings.json",
        """
        {
          "mcpServers": {
            "slow": {"command": "x",
                     "timeout": -5},
            "fine": {"command": "y", "disabled": "yes"},
            "typo": {"command": "z", "comand": "z"}
          }
        }
    """,
    )
    report = validate_config(file)
    assert report.config is not None and set(report.config.servers) == set()
    problems = {p.field: p for p in report.problems}
    assert problems["mcpServers.slow.timeout"].line == 4
    assert "expected greater than 0" in problems["mcpServers.slow.timeout"].reason
    assert problems["mcpServers.fine.disabled"].reason.startswith("expected true or false, found the string 'yes'")
    assert "unknown key 'comand'" in problems["mcpServers.typo.comand"].reason  # a typo is still a typo
    assert report.dropped["slow"].startswith("line 4: mcpServers.slow.timeout: expected greater than 0")


def test_client_key_and_toolsift_key_for_one_setting_warn_and_toolsift_wins(tmp_path: Path) -> None:
    file = write(
        tmp_path / "mcp_config.json",
        """
        {"mcpServers": {"a": {"serverUrl": "https://a.example/mcp", "disabled": true, "enabled": true,
                              "auth": "${TOKEN}", "headers": {"authorization": "Bearer ${OTHER}"}}}}
    """,
    )
    report = checked(file)
    assert report.config is not None
    server = report.config.servers["a"]
    assert server.enabled is True and server.headers == {"authorization": "Bearer ${OTHER}"}
    messages = warnings_by_field(report)
    assert "'disabled' and 'enabled' are both set; 'enabled' is used" in messages["mcpServers.a.disabled"][1]
    assert "Authorization is set too" in messages["mcpServers.a.auth"][1]


def test_auth_token_becomes_a_bearer_header_resolved_at_connect(tmp_path: Path) -> None:
    file = write(
        tmp_path / "servers.json", '{"mcpServers": {"w": {"url": "https://w.example/mcp", "auth": "${TOKEN}"}}}'
    )
    server = load_config(file).servers["w"]
    resolved = resolve_server(server, environ={"TOKEN": "s3cret"})
    assert resolved.headers == {"Authorization": "Bearer s3cret"}
    assert "s3cret" not in repr(resolved)


def test_auth_with_a_secret_reference_warns_instead_of_sending_it_as_text(tmp_path: Path) -> None:
    file = write(
        tmp_path / "servers.json",
        """
        {"mcpServers": {"w": {"url": "https://w.example/mcp", "auth": "secret://env/TOKEN"},
                        "bad": {"url": "https://[bad.example/sse"}}}
    """,
    )
    report = validate_config(file)
    assert report.dialect == "fastmcp" and report.config is not None
    assert report.config.servers["w"].headers == {}
    assert "a secret:// reference must be a whole value" in warnings_by_field(report)["mcpServers.w.auth"][1]
    # A URL that cannot be split is reported by validation, not by the transport guess.
    assert report.dropped == {"bad": "line 2: mcpServers.bad.url: Invalid IPv6 URL"}


# -- OAuth blocks: carried into toolsift's auth, what cannot map named ----------------------------------


def test_claude_code_oauth_block_becomes_auth_and_its_metadata_url_warns(tmp_path: Path) -> None:
    file = write(
        tmp_path / ".mcp.json",
        """
        {"mcpServers": {"sentry": {"type": "http", "url": "https://mcp.sentry.dev/mcp",
                                   "oauth": {"clientId": "sentry-app", "callbackPort": 8765, "scopes": "read write",
                                             "authServerMetadataUrl": "https://auth.sentry.dev/.well-known/x"}}}}
    """,
    )
    report = checked(file)
    assert report.config is not None
    auth = report.config.servers["sentry"].auth
    assert auth is not None and (auth.client_id, auth.redirect_port, auth.scopes) == (
        "sentry-app",
        8765,
        ("read", "write"),
    )
    (warning,) = report.warnings
    line = line_of(file, '"authServerMetadataUrl"')
    assert (warning.server, warning.field, warning.line) == (
        "sentry",
        "mcpServers.sentry.oauth.authServerMetadataUrl",
        line,
    )
    assert str(warning).startswith(f"{file}:{line}: ") and "finds the authorization server's" in warning.message


def test_gemini_oauth_block_maps_its_redirect_and_names_what_it_cannot_use(tmp_path: Path) -> None:
    file = write(
        tmp_path / ".gemini" / "settings.json",
        """
        {"mcpServers": {
          "loopback": {"httpUrl": "https://a.example/mcp", "authProviderType": "dynamic_discovery",
                       "oauth": {"enabled": true, "clientId": "g", "clientSecret": "$G_SECRET", "scopes": ["x"],
                                 "redirectUri": "http://127.0.0.1:7777/callback"}},
          "elsewhere": {"httpUrl": "https://b.example/mcp",
                        "oauth": {"clientId": "h", "redirectUri": "http://localhost:7777/oauth/callback",
                                  "tokenUrl": "https://b.example/token", "audiences": ["b"]}},
          "off": {"httpUrl": "https://c.example/mcp", "oauth": {"enabled": false, "clientId": "i"}},
          "google": {"httpUrl": "https://d.example/mcp", "authProviderType": "google_credentials"}}}
    """,
    )
    report = checked(file)
    assert report.config is not None
    servers = report.config.servers
    loopback = servers["loopback"].auth
    assert loopback is not None
    assert (loopback.client_id, loopback.client_secret, loopback.scopes, loopback.redirect_port) == (
        "g",
        "${G_SECRET}",
        ("x",),
        7777,
    )
    elsewhere = servers["elsewhere"].auth
    assert elsewhere is not None and elsewhere.client_id == "h" and elsewhere.redirect_port == 33418
    assert servers["off"].auth is None and servers["google"].auth is None
    warnings = warnings_by_field(report)
    assert set(warnings) == {
        "mcpServers.elsewhere.oauth.redirectUri",
        "mcpServers.elsewhere.oauth.tokenUrl",
        "mcpServers.elsewhere.oauth.audiences",
        "mcpServers.google.authProviderType",
    }
    assert "http://127.0.0.1:<redirectPort>/callback" in warnings["mcpServers.elsewhere.oauth.redirectUri"][1]
    assert (
        "'audiences' has no meaning in toolsift's auth (assertion, assertionFile, clientId,"
        in warnings["mcpServers.elsewhere.oauth.audiences"][1]
    )
    assert "OAuth settings are not read" in warnings["mcpServers.google.authProviderType"][1]


def test_toolsift_auth_keys_in_a_client_file_are_taken_as_written(tmp_path: Path) -> None:
    file = write(
        tmp_path / ".mcp.json",
        """
        {"mcpServers": {"svc": {"url": "https://svc.example/mcp",
                                "auth": {"grant": "client_credentials", "clientId": "svc", "clientSecret": "${S}"},
                                "oauth": {"clientId": "other"}}}}
    """,
    )
    report = checked(file)
    assert report.config is not None
    auth = report.config.servers["svc"].auth
    assert auth is not None and (auth.grant, auth.client_id, auth.client_secret) == (
        "client_credentials",
        "svc",
        "${S}",
    )
    assert warnings_by_field(report)["mcpServers.svc.oauth"][1] == "ignored: 'auth' is set too and is used"


def test_auth_shapes_that_cannot_map_warn_and_the_server_stays(tmp_path: Path) -> None:
    file = write(
        tmp_path / "servers.json",
        """
        {"mcpServers": {
          "number": {"url": "https://a.example/mcp", "auth": 5},
          "flag": {"url": "https://b.example/mcp", "oauth": true},
          "twice": {"url": "https://c.example/mcp", "auth": {"CLIENT_ID": "x", "clientId": "y"}},
          "port": {"url": "https://d.example/mcp", "oauth": {"redirectUri": "http://127.0.0.1:99999/callback"}}}}
    """,
    )
    report = checked(file)
    assert report.config is not None and set(report.config.servers) == {"number", "flag", "twice", "port"}
    servers = report.config.servers
    assert servers["number"].auth is None and servers["flag"].auth is None
    assert servers["twice"].auth is not None and servers["twice"].auth.client_id == "x"
    assert servers["port"].auth is not None and servers["port"].auth.redirect_port == 33418
    warnings = warnings_by_field(report)
    assert warnings["mcpServers.number.auth"][1] == "ignored: expected an OAuth object or a bearer token string"
    assert "OAuth settings are not read" in warnings["mcpServers.flag.oauth"][1]
    assert warnings["mcpServers.twice.auth.clientId"][1] == "ignored: 'CLIENT_ID' gives this setting already"
    assert "set redirectPort" in warnings["mcpServers.port.oauth.redirectUri"][1]


def test_a_bad_value_in_an_oauth_block_is_reported_at_the_key_as_written(tmp_path: Path) -> None:
    file = write(
        tmp_path / ".cursor" / "mcp.json",
        """
        {"mcpServers": {"docs": {"url": "https://docs.example/mcp",
                                 "auth": {"CLIENT_ID": 42}},
                        "fine": {"url": "https://fine.example/mcp"}}}
    """,
    )
    report = validate_config(file)
    assert report.config is not None and set(report.config.servers) == {"fine"}
    (problem,) = report.problems
    assert (problem.field, problem.line) == ("mcpServers.docs.auth.CLIENT_ID", 2)


def test_gemini_allowed_list_disables_the_others_and_odd_mcp_keys_warn(tmp_path: Path) -> None:
    file = write(
        tmp_path / ".gemini" / "settings.json",
        """
        {"mcp": {"allowed": ["a"], "excluded": "b", "serverCommand": "run"},
         "mcpServers": {"a": {"command": "x"}, "b": {"command": "y"}}}
    """,
    )
    report = checked(file)
    assert report.config is not None
    assert {n: s.enabled for n, s in report.config.servers.items()} == {"a": True, "b": False}
    fields = warnings_by_field(report)
    assert "expected a list of server names" in fields["mcp.excluded"][1]
    assert "starts each server from its own entry" in fields["mcp.serverCommand"][1]


def test_malformed_vscode_inputs_warn_and_the_servers_still_load(tmp_path: Path) -> None:
    file = write(
        tmp_path / ".vscode" / "mcp.json",
        """
        {"inputs": [{"type": "promptString"}], "servers": {"a": {"command": "x", "env": {"T": "${input:tok}"}}}}
    """,
    )
    report = checked(file)
    assert report.config is not None and report.config.servers["a"].env == {"T": "${TOOLSIFT_INPUT_TOK}"}
    fields = warnings_by_field(report)
    assert fields["inputs[0]"][1] == "ignored: an input needs a string 'id'"
    assert "TOOLSIFT_INPUT_TOK" in fields["servers.a.env.T"][1]


@pytest.mark.parametrize(
    ("place", "text", "field", "message"),
    [
        (
            ".vscode/mcp.json",
            '{"inputs": {"id": "x"}, "servers": {"a": {"command": "x"}}}',
            "inputs",
            "ignored: expected a list of inputs",
        ),
        (
            ".gemini/settings.json",
            '{"mcp": ["a"], "mcpServers": {"a": {"command": "x"}}}',
            "mcp",
            "ignored: expected an object with 'allowed' and 'excluded' lists",
        ),
    ],
)
def test_misshapen_client_sections_warn_and_the_servers_still_load(
    tmp_path: Path, place: str, text: str, field: str, message: str
) -> None:
    report = checked(write(tmp_path / place, text))
    assert report.config is not None and report.config.servers["a"].enabled
    assert warnings_by_field(report)[field][1].startswith(message)


def test_servers_given_under_two_vscode_keys_is_a_problem(tmp_path: Path) -> None:
    file = write(tmp_path / ".vscode" / "mcp.json", '{"servers": {}, "mcpServers": {}}')
    with pytest.raises(ConfigError, match="mcpServers: servers are already given under 'servers'"):
        load_config(file)


# -- variable forms, per dialect --------------------------------------------------------------------


def one_server(path: Path, server: str) -> ServerConfig:
    key = "servers" if path.parent.name == ".vscode" else "mcpServers"
    return load_config(write(path, f'{{"{key}": {{"s": {server}}}}}')).servers["s"]


def test_env_form_reads_the_environment_at_connect(tmp_path: Path) -> None:
    server = one_server(
        tmp_path / ".cursor" / "mcp.json",
        '{"command": "x", "env": {"A": "${env:API_KEY}", "B": "${env:MISSING:-fallback}"}}',
    )
    assert dict(server.env) == {"A": "${API_KEY}", "B": "${MISSING:-fallback}"}
    assert resolve_server(server, environ={"API_KEY": "k"}).env == {"A": "k", "B": "fallback"}
    with pytest.raises(SecretError, match=r"environment variable 'API_KEY' is not set"):
        resolve_server(server, environ={})


def test_workspace_forms_are_the_project_folder_its_name_home_and_separator(tmp_path: Path) -> None:
    server = one_server(
        tmp_path / "proj" / ".vscode" / "mcp.json",
        """{"command": "x", "args": [
        "${workspaceFolder}", "${workspaceFolderBasename}", "${userHome}", "a${pathSeparator}b${/}c"]}""",
    )
    project = tmp_path / "proj"
    assert server.args == (str(project), "proj", str(Path.home()), f"a{os.sep}b{os.sep}c")


def test_input_form_reads_its_documented_variable_and_warns_naming_it(tmp_path: Path) -> None:
    file = write(
        tmp_path / ".vscode" / "mcp.json",
        '{"servers": {"s": {"url": "https://s.example/mcp", "headers": {"X-Key": "${input:api-key}"}}}}',
    )
    report = checked(file)
    assert report.config is not None
    (warning,) = report.warnings
    assert warning.field == "servers.s.headers.X-Key" and "TOOLSIFT_INPUT_API_KEY" in warning.message
    resolved = resolve_server(report.config.servers["s"], environ={"TOOLSIFT_INPUT_API_KEY": "v"})
    assert resolved.headers == {"X-Key": "v"}


def test_claude_plugin_variables_default_to_the_folders_unless_set(tmp_path: Path) -> None:
    server = one_server(
        tmp_path / "plugin" / ".mcp.json",
        '{"command": "${CLAUDE_PLUGIN_ROOT}/bin/server", "args": ["${CLAUDE_PROJECT_DIR}"]}',
    )
    plugin = tmp_path / "plugin"
    defaults = resolve_server(server, environ={})
    assert (defaults.command, defaults.args) == (f"{plugin}/bin/server", (str(plugin),))
    chosen = resolve_server(server, environ={"CLAUDE_PLUGIN_ROOT": "/opt/p", "CLAUDE_PROJECT_DIR": "/src"})
    assert (chosen.command, chosen.args) == ("/opt/p/bin/server", ("/src",))


def test_gemini_unbraced_variables_expand(tmp_path: Path) -> None:
    server = one_server(
        tmp_path / ".gemini" / "settings.json", '{"command": "x", "env": {"K": "$API_KEY", "P": "${HOME_DIR}/$SUB/$1"}}'
    )
    assert dict(server.env) == {"K": "${API_KEY}", "P": "${HOME_DIR}/${SUB}/$1"}


def test_forms_are_expanded_only_in_the_files_of_clients_that_write_them(tmp_path: Path) -> None:
    entry = '{"command": "x", "args": ["${workspaceFolder}"]}'
    assert one_server(tmp_path / ".cursor" / "mcp.json", entry).args == (str(tmp_path),)
    # In a Claude Code file ${workspaceFolder} names an environment variable, and ${env:A} is malformed.
    assert one_server(tmp_path / ".mcp.json", entry).args == ("${workspaceFolder}",)
    with pytest.raises(ConfigError, match=r"mcpServers.s.env.A: the reference to 'env:A' is not valid"):
        one_server(tmp_path / "other" / ".mcp.json", '{"command": "x", "env": {"A": "${env:A}"}}')


# -- envFile: read when the server starts ----------------------------------------------------------


def test_env_file_is_read_at_connect_under_env_and_never_enters_the_config() -> None:
    server = load_config(CURSOR).servers["general"]
    assert "hello from the env file" not in repr(server) and "hello" not in server.model_dump_json()
    resolved = resolve_server(server, environ={"GENERAL_API_KEY": "from-env"})
    assert resolved.env["GENERAL_GREETING"] == "hello from the env file"
    assert resolved.env["API_KEY"] == "from-env"  # `env` wins over the file
    assert "hello" not in repr(resolved)


def test_missing_env_file_is_a_clear_error_at_its_line(tmp_path: Path) -> None:
    file = write(
        tmp_path / ".cursor" / "mcp.json",
        """
        {"mcpServers": {"s": {"command": "x",
                              "envFile": "missing.env"}}}
    """,
    )
    server = load_config(file).servers["s"]
    with pytest.raises(SecretError, match=r"in server 's' field 'envFile': cannot read the env file: No such file"):
        resolve_server(server)
    report = validate_config(file, resolve_references=True)
    (problem,) = report.problems
    assert (problem.field, problem.line) == ("mcpServers.s.envFile", 2)


def test_env_file_that_is_not_utf8_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / ".env").write_bytes(b"A=\xff\n")
    file = write(tmp_path / ".mcp.json", '{"mcpServers": {"s": {"command": "x", "envFile": ".env"}}}')
    with pytest.raises(SecretError, match="the env file is not UTF-8 text"):
        resolve_server(load_config(file).servers["s"])


# -- JSONC: comments and trailing commas, with the lines kept ---------------------------------------


def test_jsonc_problems_keep_their_lines(tmp_path: Path) -> None:
    file = write(
        tmp_path / ".vscode" / "mcp.json",
        """
        // a comment with "quotes" and a brace {
        {
          /* a block comment
             over two lines, with a comma, ] */
          "servers": {
            "web": {"url": "https://example.com/a//b", "type": "http",},  // the // in the URL is text
            "slow": {
              "command": "x",
              "timeout": -1,
            },
          },
        }
    """,
    )
    report = validate_config(file)
    assert report.config is not None and report.config.servers["web"].url == "https://example.com/a//b"
    (problem,) = report.problems
    assert (problem.field, problem.line) == ("servers.slow.timeout", line_of(file, '"timeout"'))


def test_invalid_json_after_comments_names_the_right_line(tmp_path: Path) -> None:
    file = write(tmp_path / "mcp.json", '// one\n/* two\n three */\n{"mcpServers": {\n  "a": {,}\n}}\n')
    with pytest.raises(ConfigError, match=r"mcp.json:5: invalid JSON: Expecting property name"):
        load_config(file)


def test_unclosed_block_comment_is_a_problem_at_its_line(tmp_path: Path) -> None:
    file = write(tmp_path / "mcp.json", '{\n  "mcpServers": {}\n  /* never closed\n}\n')
    with pytest.raises(ConfigError, match=r"mcp.json:3: invalid JSON: a /\* comment that starts on line 3 is not"):
        load_config(file)


_TRICKY_TEXT = st.text(st.sampled_from(list('ab/*,]}"\\ \n')), max_size=8)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-9, 9) | _TRICKY_TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TRICKY_TEXT, inner, max_size=3),
    max_leaves=12,
)


@given(JSON_VALUES)
def test_plain_json_passes_through_unchanged(value: Any) -> None:
    text = json.dumps(value, indent=2)
    assert strip_jsonc(text) == text


@given(JSON_VALUES)
def test_comments_at_line_ends_and_trailing_commas_read_as_the_json_they_annotate(value: Any) -> None:
    lines = json.dumps({"v": value, "end": 1}, indent=2).splitlines()
    lines[-2] += ","  # a trailing comma after the last member
    text = "\n".join(f"{line}  // note, ] }} /* {i}" for i, line in enumerate(lines))
    stripped = strip_jsonc(text)
    assert json.loads(stripped) == {"v": value, "end": 1}
    assert len(stripped) == len(text) and stripped.count("\n") == text.count("\n")
