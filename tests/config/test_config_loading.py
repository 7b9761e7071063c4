"""Loading config files: formats, every bad input with its field and line, warnings, lenient loads."""

from __future__ import annotations

import json
import logging
import re
import textwrap
from pathlib import Path

import pytest

from toolsift import ConfigError
from toolsift.config import load_config, parse_config, validate_config
from toolsift.config._internal import ConfigReport


def write(tmp_path: Path, text: str, name: str = "toolsift.json") -> Path:
    file = tmp_path / name
    file.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return file


def line_of(file: Path, needle: str) -> int:
    for number, line in enumerate(file.read_text().splitlines(), start=1):
        if needle in line:
            return number
    raise AssertionError(f"{needle!r} not in {file}")


def servers_file(tmp_path: Path, servers: dict[str, object]) -> Path:
    return write(tmp_path, json.dumps({"tools": {"mcpServers": servers}}, indent=2))


CLAUDE_DESKTOP = """
{
  "mcpServers": {
    "filesystem": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-filesystem", "/Users/me/Desktop"]
    },
    "github": {
      "command": "docker",
      "args": ["run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server"],
      "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "${GITHUB_TOKEN}"}
    }
  },
  "globalShortcut": "Ctrl+Space"
}
"""


def test_claude_desktop_file_loads_as_is(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    file = write(tmp_path, CLAUDE_DESKTOP, "claude_desktop_config.json")
    with caplog.at_level(logging.WARNING, logger="toolsift.config"):
        report = validate_config(file)
    assert report.ok
    assert report.config is not None
    assert set(report.config.servers) == {"filesystem", "github"}
    github = report.config.servers["github"]
    assert (github.name, github.command, github.transport_kind) == ("github", "docker", "stdio")
    assert github.internal_only is True
    # The other program's keys are ignored, with a warning naming the key and its line.
    (warning,) = report.warnings
    assert warning.field == "globalShortcut"
    assert warning.line == line_of(file, "globalShortcut")
    assert "not a toolsift setting" in warning.message
    assert "globalShortcut" in caplog.text


MCP_JSON = """
{
  "mcpServers": {
    "api": {
      "type": "http",
      "url": "${API_BASE_URL:-https://api.example.com}/mcp",
      "headers": {"Authorization": "Bearer ${API_KEY}"}
    },
    "local": {"type": "stdio", "command": "${TOOLS_BIN:-./bin}/server", "args": [], "env": {}},
    "events": {"type": "sse", "url": "https://events.example.com/sse"}
  }
}
"""


def test_project_mcp_json_loads_with_defaults_and_types(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, MCP_JSON, ".mcp.json"))
    api, local, events = (config.servers[n] for n in ("api", "local", "events"))
    assert api.transport_kind == "http"
    assert api.url == "${API_BASE_URL:-https://api.example.com}/mcp"  # resolved at connect time, not here
    assert local.transport_kind == "stdio"
    assert events.transport_kind == "sse"


def test_snake_case_server_section_loads(tmp_path: Path) -> None:
    file = write(tmp_path, '{"tools": {"mcp_servers": {"git": {"command": "git-mcp", "tool_timeout": 5}}}}')
    assert load_config(file).servers["git"].tool_timeout == 5


def test_toolsift_sections_load_beside_bare_servers(tmp_path: Path) -> None:
    file = write(tmp_path, '{"mcpServers": {"a": {"command": "x"}}, "agents": {"ops": {"planMode": true}}}')
    report = validate_config(file)
    assert report.ok and not report.warnings
    assert report.config is not None and report.config.agent("ops").plan_mode


def test_servers_given_twice_is_a_problem(tmp_path: Path) -> None:
    file = write(tmp_path, '{"mcpServers": {}, "tools": {"mcp_servers": {}}}')
    with pytest.raises(ConfigError, match=r"toolsift.json:1: tools.mcp_servers: servers are already given under"):
        load_config(file)


def test_invalid_json_names_the_line(tmp_path: Path) -> None:
    file = write(tmp_path, '{\n  "tools": {\n    "mcpServers": {,}\n  }\n}')
    with pytest.raises(ConfigError, match=r"toolsift.json:3: invalid JSON: Expecting property name"):
        load_config(file)


def test_top_level_must_be_an_object(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"toolsift.json:1: expected a JSON object at the top level, found list"):
        load_config(write(tmp_path, "[1, 2]"))


def test_unreadable_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"missing.json: cannot read the config file: No such file"):
        load_config(tmp_path / "missing.json")


def test_non_utf8_file_is_a_config_error(tmp_path: Path) -> None:
    file = tmp_path / "toolsift.json"
    file.write_bytes(b'{"a": "\xff"}')
    with pytest.raises(ConfigError, match=r"not UTF-8 text"):
        load_config(file)


def test_byte_order_mark_is_accepted(tmp_path: Path) -> None:
    file = tmp_path / "toolsift.json"
    file.write_bytes('{"mcpServers": {"a": {"command": "x"}}}'.encode("utf-8-sig"))
    assert set(load_config(file).servers) == {"a"}


BAD_SERVERS = [
    # (entry or name, field suffix, needle on the reported line, message)
    (
        {"url": "https://h/mcp", "type": "websocket"},
        "type",
        '"type"',
        r"expected 'stdio', 'http' or 'sse', found 'websocket'",
    ),
    ({"command": "x", "timeout": -1}, "timeout", '"timeout"', r"expected greater than 0, found -1"),
    ({"command": "x", "toolTimeout": 0}, "toolTimeout", '"toolTimeout"', r"expected greater than 0, found 0"),
    ({"command": "x", "max_restarts": -2}, "max_restarts", '"max_restarts"', r"greater than or equal to 0"),
    ({"command": "x", "lazy": "maybe"}, "lazy", '"lazy"', r"expected true or false, found the string 'maybe'"),
    ({"command": "x", "trust": "yes"}, "trust", '"trust"', r"expected 'untrusted' or 'trusted'"),
    ({"command": "x", "toolPrefix": "a__b"}, "toolPrefix", '"toolPrefix"', r"toolPrefix must not contain '__'"),
    ({"command": "x", "includeTools": ["get_[ab]"]}, "includeTools", '"includeTools"', r"character classes"),
    ({"command": "x", "resourceFilter": [""]}, "resourceFilter", '"resourceFilter"', r"it is empty"),
    ({"url": "ftp://h/mcp"}, "url", '"url"', r"expected an http:// or https:// URL, found scheme 'ftp'"),
    ({"command": "x", "args": "--verbose"}, "args", '"args"', r"expected a valid tuple, found a string$"),
    ({"command": "x", "args": ["${1X}"]}, "args[0]", '"${1X}"', r"reference to '1X' is not valid"),
    ({"command": "x", "cwd": "${HOME"}, "cwd", '"cwd"', r"a '\$\{' is not closed by '\}'"),
    ({"command": "x", "env": {"A": "secret://"}}, "env.A", '"A"', r"expected secret://<scheme>/<name>"),
    ({"command": "x", "env": {"A": "secret://env/"}}, "env.A", '"A"', r"expected secret://<scheme>/<name>"),
    ({"command": "x", "env": {"A=B": "1"}}, "env.A=B", '"A=B"', r"must be non-empty and hold no '='"),
    ({"url": "https://h/mcp", "headers": {"Bad Name": "1"}}, "headers.Bad Name", "Bad Name", r"not a valid HTTP"),
    (
        {"command": "x", "tiemout": 3},
        "tiemout",
        '"tiemout"',
        r"unknown key 'tiemout'; did you mean 'timeout'\? Valid keys: alwaysLoad, args,",
    ),
    (
        {"command": "x", "zzz": 3},
        "zzz",
        '"zzz"',
        # The keys of the entry's own type: a stdio server has no url, headers or auth.
        r"unknown key 'zzz'\. Valid keys: alwaysLoad, args, command, cwd, .*toolTimeout, transport, trust, type$",
    ),
    ({"command": "x", "toolTimeout": 1, "tool_timeout": 2}, "tool_timeout", '"tool_timeout"', r"repeats a setting"),
    ("not an object", "", '"bad"', r"expected an object of server settings"),
]


@pytest.mark.parametrize(
    ("entry", "field", "needle", "message"), BAD_SERVERS, ids=[b[1] or "entry" for b in BAD_SERVERS]
)
def test_bad_server_setting_names_server_field_and_line(
    tmp_path: Path, entry: object, field: str, needle: str, message: str
) -> None:
    file = servers_file(tmp_path, {"good": {"command": "ok"}, "bad": entry})
    line = line_of(file, needle) if needle != '"bad"' else line_of(file, '"bad"')
    where = f"tools.mcpServers.bad.{field}" if field else "tools.mcpServers.bad"
    pattern = rf"toolsift.json:{line}: {re.escape(where)}: .*{message}"
    with pytest.raises(ConfigError, match=pattern) as caught:
        load_config(file)
    assert (caught.value.field, caught.value.line) == (where, line)


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("git__hub", r"must not contain '__'"),
        ("git hub", r"must match \[A-Za-z0-9\]\[A-Za-z0-9_-\]\*"),
        ("-git", r"must match"),
        ("gît", r"must match"),
    ],
)
def test_bad_server_name_is_refused_with_its_line(tmp_path: Path, name: str, message: str) -> None:
    file = servers_file(tmp_path, {name: {"command": "x"}})
    field = f"tools.mcpServers.{name}"
    with pytest.raises(ConfigError, match=rf"toolsift.json:4: {field}: bad server name: .*{message}"):
        load_config(file)


def test_secret_bearing_values_are_never_echoed_in_errors(tmp_path: Path) -> None:
    file = servers_file(tmp_path, {"a": {"command": "x", "env": {"API_KEY": 12345678}, "args": [987654]}})
    report = validate_config(file)
    text = "\n".join(map(str, report.problems))
    assert "tools.mcpServers.a.env.API_KEY: expected a valid string, found a number" in text
    assert "12345678" not in text and "987654" not in text


def test_a_server_entry_with_a_bad_name_and_bad_settings_reports_both(tmp_path: Path) -> None:
    report = validate_config(servers_file(tmp_path, {"a__b": {"command": "x", "timeout": -1}}))
    assert [p.field for p in report.problems] == ["tools.mcpServers.a__b", "tools.mcpServers.a__b.timeout"]
    assert report.skipped == ("a__b",)


def test_namespace_clash_is_a_problem_of_the_later_server(tmp_path: Path) -> None:
    file = servers_file(tmp_path, {"gh": {"command": "x"}, "github": {"command": "y", "toolPrefix": "gh"}, "c": {}})
    report = validate_config(file)
    problem, empty = report.problems
    assert empty.field == "tools.mcpServers.c" and "neither 'command'" in empty.reason
    assert problem.field == "tools.mcpServers.github.toolPrefix"
    assert problem.line == line_of(file, '"toolPrefix"')
    assert "tool namespace 'gh' is already used by server 'gh'" in problem.reason
    report = validate_config(servers_file(tmp_path, {"a": {"command": "x", "tool_prefix": "b"}, "b": {"command": "y"}}))
    assert report.problems[0].field == "tools.mcpServers.b"


def test_servers_section_must_be_an_object(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"toolsift.json:1: mcpServers: expected an object mapping server names"):
        load_config(write(tmp_path, '{"mcpServers": ["a"]}'))


@pytest.mark.parametrize(
    ("text", "field", "message"),
    [
        (
            '{"tools": {"permissions": [{"match": "x", "requiredLevel": "root"}]}}',
            r"tools.permissions\[0\].requiredLevel",
            r"Unknown permission level 'root'; expected one of read, write, execute, admin",
        ),
        (
            '{"tools": {"permissions": [{"requiredLevel": "admin"}]}}',
            r"tools.permissions\[0\].match",
            "this key is required",
        ),
        ('{"tools": {"permissions": [{"match": "x{y}"}]}}', r"tools.permissions\[0\].match", "brace expansion"),
        ('{"agents": {"a": {"limits": {"maxRounds": 0}}}}', "agents.a.limits.maxRounds", "greater than or equal to 1"),
        ('{"agents": {"a": {"limits": {"callTimeout": -3}}}}', "agents.a.limits.callTimeout", "greater than 0"),
        ('{"agents": {"a": {"allowedTools": ["a b"]}}}', "agents.a.allowedTools", "space character"),
        ('{"agents": {"a": {"permissions": {"denylist": ["x[1]"]}}}}', "agents.a.permissions.denylist", "character"),
        (
            '{"agents": {"a": {"toolDiscovery": "magic"}}}',
            "agents.a.toolDiscovery",
            "expected 'auto', 'skills' or 'search'",
        ),
        ('{"skills": {"paths": "skills"}}', "skills.paths", "expected a valid tuple, found 'skills'"),
        ('{"skills": {"userSkils": true}}', "skills.userSkils", "did you mean 'userSkills'"),
        ('{"audit": {"path": 3}}', "audit.path", r"expected a path \(a string\), found 3"),
        ('{"tools": 3}', "tools", "expected a valid dictionary or instance of ToolsConfig, found 3"),
        ('{"agnets": {}}', "agnets", "did you mean 'agents'"),
        ('{"agents": {"a": {"limits": {"maxRoundz": 1}}}}', "agents.a.limits.maxRoundz", "did you mean 'maxRounds'"),
        (
            '{"tools": {"permissions": [{"match": "x", "level": 1}]}}',
            r"tools.permissions\[0\].level",
            r"unknown key 'level'. Valid keys: match, requiredLevel, requiredPermissions$",
        ),
        ('{"agents": {"a": {"planMode": null}}}', "agents.a.planMode", "expected a valid boolean, found null"),
    ],
)
def test_bad_section_setting_is_reported(tmp_path: Path, text: str, field: str, message: str) -> None:
    with pytest.raises(ConfigError, match=rf"toolsift.json:1: {field}: .*{message}"):
        load_config(write(tmp_path, text))


def test_every_problem_of_a_file_is_reported(tmp_path: Path) -> None:
    file = write(
        tmp_path,
        """
        {
          "tools": {
            "mcpServers": {
              "a": {"command": "x", "timeout": -1},
              "b__c": {"command": "y"},
              "ok": {"command": "z"}
            }
          },
          "agents": {"x": {"limits": {"maxRounds": 0}}}
        }
        """,
    )
    report = validate_config(file)
    assert report.config is None
    assert [(p.field, p.line) for p in report.problems] == [
        ("tools.mcpServers.a.timeout", 4),
        ("tools.mcpServers.b__c", 5),
        ("agents.x.limits.maxRounds", 9),
    ]
    pattern = r"toolsift.json: 3 problems:\n  line 4: tools.mcpServers.a.timeout: .*\n  line 5: .*\n  line 9: "
    with pytest.raises(ConfigError, match=pattern):
        load_config(file)
    with pytest.raises(ConfigError, match="3 problems"):
        load_config(file, lenient=True)  # a bad agent is not skippable


def test_lenient_load_keeps_good_servers_and_logs_the_bad(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    file = servers_file(
        tmp_path,
        {
            "bad": {"command": "x", "timeout": -1},
            "worse": {"url": "https://h/mcp", "type": "ws"},
            "good": {"command": "y"},
        },
    )
    with pytest.raises(ConfigError, match="2 problems"):
        load_config(file)
    with caplog.at_level(logging.ERROR, logger="toolsift.config"):
        config = load_config(file, lenient=True)
    assert set(config.servers) == {"good"}
    assert "server skipped" in caplog.text and "tools.mcpServers.worse.type" in caplog.text
    report = validate_config(file)
    assert report.skipped == ("bad", "worse")
    assert report.config == config
    assert not report.ok


def test_parse_config_accepts_text_and_dicts(tmp_path: Path) -> None:
    text = '{"mcpServers": {"a": {"command": "x"}}}'
    assert parse_config(text) == parse_config(json.loads(text))
    with pytest.raises(ConfigError, match=r"^mcpServers.a.timeout: expected greater than 0"):
        parse_config({"mcpServers": {"a": {"command": "x", "timeout": -1}}})
    lenient = parse_config({"mcpServers": {"a": {"command": "x", "timeout": -1}}}, lenient=True)
    assert lenient.servers == {}
    named = parse_config({"mcpServers": {"a": {"command": "x"}}}, path=tmp_path / "cfg.json")
    assert named.servers["a"].base_dir == tmp_path


def test_values_of_python_types_are_named_by_type() -> None:
    with pytest.raises(ConfigError, match=r"mcpServers.a.timeout: expected a valid number, found object$"):
        parse_config({"mcpServers": {"a": {"command": "x", "timeout": object()}}})


def test_report_error_needs_a_problem() -> None:
    with pytest.raises(ValueError, match="no problems to report"):
        ConfigReport(config=None).error()


def test_both_command_and_url_runs_stdio_with_a_warning(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    file = servers_file(tmp_path, {"a": {"command": "x", "url": "https://h/mcp"}})
    with caplog.at_level(logging.WARNING, logger="toolsift.config"):
        report = validate_config(file)
    assert report.ok and report.config is not None
    assert report.config.servers["a"].transport_kind == "stdio"
    (warning,) = report.warnings
    assert (warning.server, warning.field, warning.line) == ("a", "tools.mcpServers.a.url", line_of(file, '"url"'))
    assert "the server runs over stdio and 'url' is ignored" in caplog.text


def test_a_server_without_command_or_url_is_a_problem_and_left_out(tmp_path: Path) -> None:
    file = servers_file(tmp_path, {"empty": {"env": {}}, "ok": {"command": "x"}})
    report = validate_config(file)
    assert report.config is not None and set(report.config.servers) == {"ok"}
    assert not report.ok and report.skipped == ("empty",) and not report.warnings
    (problem,) = report.problems
    assert (problem.field, problem.line) == ("tools.mcpServers.empty", line_of(file, '"empty"'))
    assert (
        problem.reason
        == "server 'empty' has neither 'command' (a program to run) nor 'url' (a server to reach): set one"
    )


def test_disabled_servers_stay_in_the_config(tmp_path: Path) -> None:
    config = load_config(servers_file(tmp_path, {"off": {"command": "x", "enabled": False}}))
    assert config.servers["off"].enabled is False


@pytest.mark.parametrize(
    ("entry", "field", "message"),
    [
        ({"command": "x", "type": "http"}, "type", "type 'http' is ignored: 'command' is set"),
        ({"url": "https://h/mcp", "transport": "stdio"}, "transport", "type 'stdio' needs a 'command'"),
    ],
)
def test_contradicting_type_gets_a_warning(tmp_path: Path, entry: dict[str, str], field: str, message: str) -> None:
    report = validate_config(servers_file(tmp_path, {"a": entry}))
    (warning,) = report.warnings
    assert warning.field == f"tools.mcpServers.a.{field}"
    assert message in warning.message


@pytest.mark.parametrize(
    ("entry", "field", "message"),
    [
        ({"command": "x", "headers": {"A": "b"}}, "headers", "'headers' is ignored: it is a setting of servers"),
        ({"url": "https://h/mcp", "env": {"A": "1"}}, "env", "'env' is ignored: it is a setting of servers started by"),
        ({"url": "https://h/mcp", "args": ["-v"]}, "args", "'args' is ignored: it is a setting of servers started by"),
        ({"url": "https://h/mcp", "env_file": ".env"}, "env_file", "'env_file' is ignored: it is a setting of servers"),
        ({"url": "https://h/mcp", "cwd": "work"}, "cwd", "this one is reached at 'url' (HTTP)"),
    ],
)
def test_setting_of_the_other_transport_is_dropped_with_a_warning(
    tmp_path: Path, entry: dict[str, object], field: str, message: str
) -> None:
    file = servers_file(tmp_path, {"a": entry})
    report = validate_config(file)
    assert report.ok and report.config is not None
    (warning,) = report.warnings
    assert (warning.server, warning.field, warning.line) == ("a", f"tools.mcpServers.a.{field}", line_of(file, field))
    assert message in warning.message
    assert not hasattr(report.config.servers["a"], field)


def test_type_of_an_ignored_url_gets_no_warning_of_its_own(tmp_path: Path) -> None:
    report = validate_config(servers_file(tmp_path, {"a": {"command": "x", "url": "https://h/mcp", "type": "sse"}}))
    (warning,) = report.warnings
    assert warning.field == "tools.mcpServers.a.url" and "'url' is ignored" in warning.message
    assert report.config is not None and report.config.servers["a"].transport_kind == "stdio"


def test_empty_setting_of_the_other_transport_is_dropped_without_a_word(tmp_path: Path) -> None:
    report = validate_config(servers_file(tmp_path, {"a": {"command": "", "url": "https://h/mcp", "env": {}}}))
    assert report.ok and report.warnings == () and report.config is not None
    assert report.config.servers["a"].transport_kind == "http"


def test_auth_on_a_server_started_by_command_is_a_problem(tmp_path: Path) -> None:
    file = servers_file(tmp_path, {"a": {"command": "x", "auth": {}}, "b": {"command": "y"}})
    report = validate_config(file)
    (problem,) = report.problems
    assert (problem.field, problem.line) == ("tools.mcpServers.a", line_of(file, '"a"'))
    assert "'auth' is a setting of servers reached at 'url' (HTTP); this server is started by 'command'" in str(problem)
    assert report.config is not None and set(report.config.servers) == {"b"} and report.skipped == ("a",)


def test_entry_without_command_or_url_still_names_a_misspelt_key(tmp_path: Path) -> None:
    file = servers_file(tmp_path, {"a": {"comand": "x"}})
    report = validate_config(file)
    (problem,) = report.problems
    assert (problem.field, problem.line) == ("tools.mcpServers.a.comand", line_of(file, "comand"))
    assert "unknown key 'comand'; did you mean 'command'?" in str(problem)
    assert report.skipped == ("a",) and report.warnings == ()


@pytest.mark.parametrize(
    ("entry", "field"),
    [
        ({"command": "x", "env": {"GITHUB_TOKEN": "ghp_plain_1"}}, "env.GITHUB_TOKEN"),
        ({"command": "x", "env": {"OPENAI_API_KEY": "sk-plain-1"}}, "env.OPENAI_API_KEY"),
        ({"command": "x", "env": {"DB_PASSWORD": "plain-pw-1"}}, "env.DB_PASSWORD"),
        ({"command": "x", "env": {"STRIPE_KEY": "sk-plain-2"}}, "env.STRIPE_KEY"),
        ({"url": "https://h/mcp", "headers": {"Authorization": "Bearer plain-2"}}, "headers.Authorization"),
        ({"url": "https://h/mcp", "headers": {"X-Api-Key": "plain-3"}}, "headers.X-Api-Key"),
        ({"command": "x", "args": ["--token=plain-4"]}, "args[0]"),
        ({"command": "x", "args": ["--api-key", "plain-5"]}, "args[1]"),
        ({"url": "https://h/mcp?access_token=plain-6"}, "url"),
        ({"url": "https://me:plain-7@h/mcp"}, "url"),
    ],
)
def test_plaintext_credential_gets_a_warning_without_the_value(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, entry: dict[str, object], field: str
) -> None:
    file = servers_file(tmp_path, {"a": entry})
    with caplog.at_level(logging.WARNING, logger="toolsift.config"):
        report = validate_config(file)
    (warning,) = report.warnings
    assert warning.field == f"tools.mcpServers.a.{field}"
    assert warning.server == "a"
    assert "plaintext" in warning.message and "secret://" in warning.message
    assert "plain-" not in caplog.text and "plain-" not in str(warning)
    assert "ghp_plain" not in caplog.text


@pytest.mark.parametrize(
    "entry",
    [
        {"command": "x", "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}"}},
        {"command": "x", "env": {"API_KEY": "secret://env/API_KEY"}},
        {"command": "x", "env": {"USE_TOKEN_CACHE": "true", "TOKEN_TTL": "300", "AUTH_TOKEN": ""}},
        {"command": "x", "env": {"LOG_LEVEL": "debug"}, "args": ["--verbose", "--token=${T}", "--port", "80"]},
        {"url": "https://h/mcp", "headers": {"Authorization": "Bearer ${API_KEY}", "Accept": "text/plain"}},
        {"url": "https://h/mcp?page=2"},
    ],
)
def test_referenced_or_harmless_values_get_no_credential_warning(tmp_path: Path, entry: dict[str, object]) -> None:
    assert validate_config(servers_file(tmp_path, {"a": entry})).warnings == ()


def test_duplicate_keys_warn_and_keep_the_last(tmp_path: Path) -> None:
    file = write(
        tmp_path,
        """
        {
          "mcpServers": {
            "a": {"command": "first"},
            "a": {"command": "second"}
          }
        }
        """,
    )
    report = validate_config(file)
    assert report.config is not None and report.config.servers["a"].command == "second"
    (warning,) = report.warnings
    assert (warning.field, warning.line) == ("mcpServers.a", 4)
    assert "given more than once" in warning.message


def test_resolve_references_reports_unresolvable_ones_with_their_line(tmp_path: Path) -> None:
    file = servers_file(
        tmp_path,
        {
            "a": {"command": "x", "env": {"TOKEN": "${MISSING_TOKEN}"}},
            "b": {"command": "x", "args": ["-v", "secret://file/nope.txt"]},
            "c": {"url": "https://h/mcp", "headers": {"Authorization": "Bearer ${PRESENT}"}},
        },
    )
    assert validate_config(file).ok  # references are left alone unless asked
    report = validate_config(file, resolve_references=True, environ={"PRESENT": "s3cr3t-value"})
    assert report.skipped == ("a", "b")
    first, second = report.problems
    assert (first.field, first.line) == ("tools.mcpServers.a.env.TOKEN", line_of(file, '"TOKEN"'))
    assert "${MISSING_TOKEN}" in first.reason and "is not set" in first.reason
    assert (second.field, second.line) == ("tools.mcpServers.b.args[1]", line_of(file, "nope.txt"))
    assert "cannot read" in second.reason
    assert report.config is not None and set(report.config.servers) == {"c"}
    assert "s3cr3t-value" not in repr(report)


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("internalOnly", "false", "expected true or false, found the string 'false'; write it without quotes"),
        ("enabled", 1, "expected true or false, found int 1"),
        ("timeout", "30", "expected a number, found the string '30'; write it without quotes"),
        ("maxRestarts", 2.5, "expected a whole number, found float 2.5"),
        ("maxRestarts", "3", "expected a whole number, found the string '3'"),
    ],
)
def test_quoted_or_wrong_scalars_are_refused_naming_the_field(
    tmp_path: Path, key: str, value: object, message: str
) -> None:
    file = servers_file(tmp_path, {"git": {"command": "git-mcp", key: value}})
    with pytest.raises(ConfigError, match=re.escape(f"tools.mcpServers.git.{key}: {message}")):
        load_config(file)


def test_a_whole_number_is_accepted_where_a_number_is_expected(tmp_path: Path) -> None:
    config = load_config(servers_file(tmp_path, {"git": {"command": "git-mcp", "timeout": 30}}))
    assert config.servers["git"].timeout == 30.0


@pytest.mark.parametrize("depth", [65, 900, 100_000])
def test_absurdly_nested_file_is_one_clear_problem(tmp_path: Path, depth: int) -> None:
    nested = '{"k": ' * depth + '"v"' + "}" * depth
    file = write(tmp_path, '{"tools": {"mcpServers": {"a": {"command": "x",\n"env": ' + nested + "}}}}")
    with pytest.raises(ConfigError, match=re.escape(f"{file}:2: nested more than 64 levels deep")):
        load_config(file)


def test_brackets_inside_strings_do_not_count_as_nesting(tmp_path: Path) -> None:
    file = servers_file(tmp_path, {"a": {"command": "x", "args": ["[" * 100, '{"' * 100]}})
    assert load_config(file).servers["a"].args == ("[" * 100, '{"' * 100)
