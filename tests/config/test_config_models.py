"""Config models: every key in camelCase and snake_case, defaults, sections, equality."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError
from pydantic.alias_generators import to_camel

from toolsift import ConfigError, InvalidToolName
from toolsift.config import HttpServer, ServerConfig, StdioServer, ToolsiftConfig, parse_config
from toolsift.config._internal import AgentConfig, LimitsConfig
from toolsift.config._toolsift import PermissionsConfig, ToolsConfig
from toolsift.registry import Level, Permissions, ToolRule

# A non-default value for every user-facing field of both server types.
SHARED_VALUES: dict[str, Any] = {
    "internal_only": False,
    "enabled": False,
    "timeout": 5,
    "tool_timeout": 12.5,
    "max_result_bytes": 1000,
    "drain_seconds": 5,
    "restart_on_crash": False,
    "max_restarts": 2,
    "trust": "trusted",
    "tool_prefix": "gh",
    "include_tools": ["get_*"],
    "exclude_tools": ["delete_*"],
    "lazy": True,
    "protocol": "legacy",
    "always_load": True,
    "searchable": False,
    "resources": True,
    "resource_filter": ["file:///docs/*"],
    "instructions": False,
    "tasks": "when-supported",
    "pin_tools": "warn",
}
# ... and of the fields of one transport; each type needs its own key, given as BASES has it.
OWN_VALUES: dict[type[ServerConfig], dict[str, Any]] = {
    StdioServer: {
        "command": "uvx",
        "args": ["mcp-server-git", "--repository", "${REPO:-.}"],
        "env": {"LOG_LEVEL": "debug"},
        "env_file": ".env",
        "cwd": "work",
        "transport": "stdio",
    },
    HttpServer: {
        "url": "https://mcp.example.com/mcp",
        "headers": {"X-Client": "toolsift"},
        "transport": "sse",
        "auth": {"clientId": "toolsift-test", "scopes": ["read"]},
    },
}
BASES: dict[type[ServerConfig], dict[str, Any]] = {StdioServer: {"command": "x"}, HttpServer: {"url": "https://h/mcp"}}
SERVER_CASES = [
    (model, field, value) for model, own in OWN_VALUES.items() for field, value in {**SHARED_VALUES, **own}.items()
]

SECTION_VALUES: dict[str, tuple[str, Any]] = {
    # field -> (section path used in parse_config, value)
    "allowed_tools": ("agents.a", ["git__*"]),
    "plan_mode": ("agents.a", True),
    "tool_discovery": ("agents.a", "search"),
    "max_unlocked_tokens": ("agents.a", 500),
    "auto_unlock": ("search", 3),
    "max_rounds": ("agents.a.limits", 3),
    "call_timeout": ("agents.a.limits", 9),
    "message_timeout": ("agents.a.limits", 99),
    "user_skills": ("skills", False),
    "required_level": ("tools.permissions[]", "admin"),
    "required_permissions": ("tools.permissions[]", ["x.y"]),
}


def nest(section: str, key: str, value: Any) -> dict[str, Any]:
    data: dict[str, Any] = {key: value}
    for part in reversed(section.split(".")):
        # "x[]" puts the key in a list item (a tools.permissions rule, which needs a match).
        data = {part[:-2]: [{"match": "*", **data}]} if part.endswith("[]") else {part: data}
    return data


@pytest.mark.parametrize("model", [StdioServer, HttpServer])
def test_server_fields_are_all_covered_by_the_spelling_test(model: type[ServerConfig]) -> None:
    assert set(model.model_fields) - {"name"} == set(SHARED_VALUES) | set(OWN_VALUES[model])


@pytest.mark.parametrize(
    ("model", "field", "value"), SERVER_CASES, ids=[f"{m.__name__}-{f}" for m, f, _ in SERVER_CASES]
)
def test_server_field_accepts_camel_and_snake_case(model: type[ServerConfig], field: str, value: Any) -> None:
    base = {} if field in BASES[model] else BASES[model]
    camel = model.model_validate({**base, to_camel(field): value})
    snake = model.model_validate({**base, field: value})
    assert camel == snake
    assert getattr(camel, field) != model.model_fields[field].get_default(call_default_factory=True)


@pytest.mark.parametrize("field", sorted(SECTION_VALUES))
def test_section_field_accepts_camel_and_snake_case(field: str) -> None:
    section, value = SECTION_VALUES[field]
    camel = parse_config(nest(section, to_camel(field), value))
    snake = parse_config(nest(section, field, value))
    assert camel == snake
    assert camel != parse_config({})


def test_server_type_and_transport_are_the_same_setting() -> None:
    assert HttpServer.model_validate({"url": "http://h/mcp", "type": "sse"}).transport == "sse"
    assert HttpServer.model_validate({"url": "http://h/mcp", "transport": "sse"}).transport == "sse"


def test_server_defaults_match_the_documented_ones() -> None:
    server = StdioServer(command="x")
    assert server.internal_only is True
    assert server.enabled is True
    assert server.lazy is False
    assert server.trust == "untrusted"
    assert server.protocol == "auto"
    assert (server.always_load, server.searchable, server.resources, server.resource_filter) == (False, True, False, ())
    assert (server.timeout, server.tool_timeout, server.max_restarts) == (30.0, 60.0, 5)


@pytest.mark.parametrize(
    ("settings", "model", "kind"),
    [
        ({"command": "x"}, StdioServer, "stdio"),
        ({"url": "http://h/mcp"}, HttpServer, "http"),
        ({"url": "http://h/mcp", "type": "sse"}, HttpServer, "sse"),
        ({"url": "http://h/mcp", "type": "stdio"}, HttpServer, "http"),
        ({"command": "x", "url": "http://h/mcp", "type": "http"}, StdioServer, "stdio"),
        ({"command": "", "url": "http://h/mcp"}, HttpServer, "http"),
    ],
)
def test_server_type_is_picked_by_the_key_the_entry_gives(
    settings: dict[str, Any], model: type[ServerConfig], kind: str
) -> None:
    server = parse_config({"mcpServers": {"a": settings}}).servers["a"]
    assert type(server) is model and server.transport_kind == kind


@pytest.mark.parametrize("settings", [{}, {"command": "", "url": ""}, {"env": {"A": "1"}, "type": "stdio"}])
def test_server_without_command_or_url_is_refused_when_built(settings: dict[str, Any]) -> None:
    # Decided once: no server lacks a transport, so nothing that runs one has to ask.
    with pytest.raises(ValidationError, match="neither 'command' nor 'url' is set; nothing to connect to"):
        ToolsConfig.model_validate({"mcpServers": {"a": settings}})


def test_server_of_one_transport_has_no_settings_of_the_other() -> None:
    stdio, http = StdioServer(command="x"), HttpServer(url="https://h/mcp")
    assert not any(hasattr(stdio, name) for name in ("url", "headers", "auth"))
    assert not any(hasattr(http, name) for name in ("command", "args", "env", "env_file", "cwd"))
    assert (stdio.transport_kind, http.transport_kind) == ("stdio", "http")


@pytest.mark.parametrize(
    ("model", "settings", "message"),
    [
        (StdioServer, {"command": "x", "url": "https://h/mcp"}, r"both 'command' and 'url' are set; a server is "),
        (StdioServer, {"command": "x", "headers": {"A": "b"}}, r"'headers' is a setting of servers reached at 'url'"),
        (StdioServer, {"command": "x", "auth": {}}, r"'auth' is a setting of servers reached at 'url' \(HTTP\)"),
        (StdioServer, {"command": "x", "type": "sse"}, r"type 'sse' is for servers reached at 'url'"),
        (StdioServer, {"command": ""}, r"command\n.*expected the program to run, found an empty string"),
        (HttpServer, {"url": "https://h/mcp", "envFile": ".env"}, r"'envFile' is a setting of servers started by"),
        (HttpServer, {"url": "https://h/mcp", "type": "stdio"}, r"type 'stdio' is for servers started by 'command'"),
        (HttpServer, {"url": "https://h/mcp", "type": "ws"}, r"expected 'stdio', 'http' or 'sse', found 'ws'"),
        (HttpServer, {"url": "ftp://h/mcp"}, r"expected an http:// or https:// URL, found scheme 'ftp'"),
    ],
)
def test_server_type_refuses_what_belongs_to_the_other_transport(
    model: type[ServerConfig], settings: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValidationError, match=message):
        model.model_validate(settings)


def test_server_copy_keeps_its_type_and_differs_from_the_other_type_with_equal_settings() -> None:
    stdio = StdioServer(command="x").with_name("a")
    copy = stdio.model_copy(update={"lazy": True})
    assert type(copy) is StdioServer and copy.lazy and copy.base_dir == stdio.base_dir
    http = HttpServer(url="https://h/mcp").with_name("a")
    shared = {name: getattr(stdio, name) for name in SHARED_VALUES}
    assert shared == {name: getattr(http, name) for name in SHARED_VALUES} and stdio != http


def test_server_namespace_is_the_prefix_or_the_name() -> None:
    assert StdioServer(command="x").with_name("git").namespace == "git"
    assert StdioServer(command="x", tool_prefix="gh").with_name("github").namespace == "gh"


def test_server_with_name_refuses_bad_names() -> None:
    with pytest.raises(InvalidToolName, match="must not contain '__'"):
        StdioServer(command="x").with_name("a__b")


def test_server_repr_hides_env_and_header_values_and_url_credentials() -> None:
    http = HttpServer(
        url="https://user:hunter2@h.example/mcp?api_key=sk-live-1&x=2", headers={"Authorization": "Bearer sk-live-2"}
    ).with_name("s")
    stdio = StdioServer(command="srv", args=("--token", "sk-live-4"), env={"API_KEY": "sk-live-3"}).with_name("s")
    text = repr(http) + repr(stdio)
    for secret in ("hunter2", "sk-live-1", "sk-live-2", "sk-live-3", "sk-live-4"):
        assert secret not in text
    assert "Authorization" in text and "API_KEY" in text and "h.example" in text and "srv" in text
    assert str(http) + str(stdio) == text


def test_servers_from_two_loads_of_one_file_are_equal(tmp_path: Path) -> None:
    from toolsift.config import load_config

    file = tmp_path / "toolsift.json"
    file.write_text('{"tools": {"mcpServers": {"git": {"command": "git-mcp", "env": {"A": "1"}}}}}')
    first, second = load_config(file), load_config(file)
    assert first.servers["git"] == second.servers["git"]
    assert first == second
    changed = first.servers["git"].model_copy(update={"env": {"A": "2"}})
    assert changed != first.servers["git"]


def test_permissions_config_converts_to_registry_permissions() -> None:
    config = PermissionsConfig.model_validate(
        {"level": "execute", "denylist": ["x__*"], "allowlist": ["y__*"], "custom": ["memory.delete"]}
    )
    assert config.to_permissions() == Permissions(Level.EXECUTE, ("x__*",), ("y__*",), frozenset({"memory.delete"}))
    assert PermissionsConfig().to_permissions() == Permissions()


def test_tool_rules_become_registry_rules_in_file_order() -> None:
    config = parse_config(
        {
            "tools": {
                "permissions": [
                    {"match": "git__push", "requiredLevel": "execute"},
                    {"match": "*", "requiredPermissions": ["audit"]},
                ]
            }
        }
    )
    assert config.tool_rules == (
        ToolRule("git__push", Level.EXECUTE),
        ToolRule("*", None, frozenset({"audit"})),
    )


def test_agent_returns_the_named_the_default_or_an_unrestricted_profile() -> None:
    config = parse_config({"agents": {"review": {"planMode": True}, "default": {"allowedTools": ["git__*"]}}})
    assert config.agent("review").plan_mode is True
    assert config.agent("review").name == "review"
    assert config.agent().allowed_tools == ("git__*",)
    bare = parse_config({}).agent()
    assert bare == AgentConfig()
    assert (bare.name, bare.allowed_tools, bare.limits) == ("default", None, LimitsConfig())


def test_agent_unknown_name_lists_the_configured_ones() -> None:
    config = parse_config({"agents": {"review": {}, "ops": {}}})
    with pytest.raises(ConfigError, match=r"no agent named 'nope'; configured agents: ops, review"):
        config.agent("nope")
    with pytest.raises(ConfigError, match=r"configured agents: none"):
        parse_config({}).agent("nope")


def test_paths_resolve_against_the_config_folder(tmp_path: Path) -> None:
    config = parse_config(
        {"skills": {"paths": ["skills", "/abs/skills", "~/my"]}, "workspace": "src", "audit": {"path": "audit.jsonl"}},
        path=tmp_path / "toolsift.json",
    )
    assert config.skills.paths == (tmp_path / "skills", Path("/abs/skills"), Path("~/my").expanduser())
    assert config.workspace == tmp_path / "src"
    assert config.audit.path == tmp_path / "audit.jsonl"
    assert config.path == tmp_path / "toolsift.json"


def test_path_defaults_follow_the_config_folder(tmp_path: Path) -> None:
    config = parse_config({}, path=tmp_path / "toolsift.json")
    assert config.skills.paths == (tmp_path / ".toolsift" / "skills", tmp_path / ".claude" / "skills")
    assert config.skills.user_skills is True
    assert config.workspace == tmp_path
    assert config.audit.path is None
    assert config.servers == {}


def test_config_without_a_path_resolves_against_the_current_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    config = parse_config({})
    assert config.path is None
    assert config.workspace == tmp_path
    assert ToolsiftConfig().workspace == tmp_path
    assert StdioServer(command="x").base_dir == tmp_path


def test_validating_the_model_directly_names_servers_and_agents() -> None:
    config = ToolsiftConfig.model_validate({"tools": {"mcpServers": {"git": {"command": "x"}}}, "agents": {"a": {}}})
    assert config.servers["git"].name == "git"
    assert config.agents["a"].name == "a"


def test_server_repr_survives_an_unparsable_url() -> None:
    # A url with a reference is only checked once resolved, so it may not parse yet.
    assert "url='***'" in repr(HttpServer(url="http://[${HOST}/mcp?token=abc"))
