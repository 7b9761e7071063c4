"""The package's shape: imports point one way, and a package uses of another only what that one offers: its
public names, or the names its ``_internal`` module lists for the other packages.
"""

from __future__ import annotations

import ast
import functools
import importlib
from pathlib import Path
from types import ModuleType

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "toolsift"
# What each room may import (besides the shared root modules in SHARED); docs/architecture.md.
ALLOWED = {
    "registry": set(),
    "config": {"registry"},
    "skills": {"registry"},
    "mcp_sessions": {"registry", "config"},
    "builtins": {"registry", "config"},
    "pipeline": {"registry", "config", "builtins"},
    "search": {"registry", "config", "mcp_sessions", "skills"},
    # The servers skills and plugins own: read, owned, run as skills are used.
    "_skill_servers": {"registry", "config", "mcp_sessions", "skills"},
    # The composition root: what a config describes, built once for the toolbox and the server.
    "_assembly": {"registry", "config", "mcp_sessions", "skills", "search", "builtins", "pipeline", "_skill_servers"},
    "serve": {"registry", "config", "mcp_sessions", "skills", "search", "builtins", "pipeline", "_assembly", "(root)"},
    "agent": {"registry", "config", "mcp_sessions", "skills", "search", "builtins", "pipeline"},
    "toolbox": {"registry", "config", "mcp_sessions", "skills", "search", "builtins", "pipeline", "_assembly", "agent"},
    "cli": {
        "registry",
        "config",
        "mcp_sessions",
        "skills",
        "search",
        "builtins",
        "pipeline",
        "agent",
        "serve",
        "_assembly",
        "_skill_servers",
        "toolbox",
        "(root)",
    },
}
# Root modules every room may use: what several packages share. Each is a leaf with one job (it imports only other
# shared modules); what users need of one, a package publishes (docs/architecture.md).
SHARED = {
    "_exceptions",  # the exception tree (published by the root package)
    "_public",  # publishing a package's names under its public path
    "_redaction",  # the two secret markers and the helpers that put them in
    "_names",  # server and tool naming rules, the ``server__tool`` convention
    "_globs",  # tool-name globs compiled into one matcher
    "_folders",  # where toolsift looks: config file names, the user folder, the config to use, skill folders
    "_net",  # hosts and URLs: loopback binds, the URLs in a call's arguments
    "_fence",  # the untrusted fence: writing it, reading it back, neutralising look-alikes
    "_secrets",  # ${VAR} and secret:// in config values: expansion, resolvers, masking for display
    "_install",  # how to install what an optional feature needs, the same in every message
    "_tokens",  # the one estimate of what a text costs a model (bytes per token)
    "_skill_files",  # a skill's own files: the SkillFiles protocol, digests, the note naming them
    "_files",  # every file toolsift writes: never through a planted link or second name, swapped in whole
}
# What a package offers the other packages and not its users: the names of its ``_internal`` module, the one
# private module another package may import. Public names are for users (tests/test_public_api.py caps them); these
# are plumbing, listed so that a package's contract with the others is written down and does not grow unseen.
INTERNAL = {
    "builtins": ["FolderFiles", "FollowedProtection", "SkillFileTool", "builtin_tool_names"],
    "config": [
        "AgentConfig",
        "ArgumentRule",
        "CommandSettings",
        "ConfigReport",
        "ConfigWarning",
        "LimitsConfig",
        "OAuthConfig",
        "ServeSettings",
        "SharedSettings",
        "TrustCheck",
        "UrlPolicy",
        "absolute_path",
        "child_environment",
        "configured_settings",
        "expanded_now",
        "found_in",
        "launch_folder",
        "permission_glob_warnings",
        "resolve_server",
        "validate_serve_settings",
    ],
    "mcp_sessions": [
        "Era",
        "FileTokenStorage",
        "InstructionsChange",
        "ListMcpResources",
        "ManagerEvent",
        "McpToolWrapper",
        "ReadMcpResource",
        "Sender",
        "ServerCatalog",
        "SessionState",
        "ToolChange",
        "ToolPins",
        "guard_result",
        "mask_wire",
        "present_result",
        "resource_context",
        "send_as_client",
        "server_instructions",
        "token_file",
        "tool_spec",
    ],
    "pipeline": ["profile_scope", "refuse", "trace_configured_calls"],
    "registry": [
        "AuditEvent",
        "Forward",
        "FunctionTool",
        "ProgressCallback",
        "RegistryChange",
        "Unlocks",
        "check_permissions",
        "repeatable_by",
    ],
    "search": ["BackendName", "McpServedSkill", "ServedSkills", "format_ranking", "server_descriptions"],
    "serve": ["main"],
    "skills": ["SkillProblem", "SkillVariable", "parse_skill_text", "shared_sandbox"],
}


def _is_internal(parts: list[str]) -> bool:
    """``toolsift.<room>._internal``: the one private module of a room that other rooms may import."""
    return len(parts) == 3 and parts[2] == "_internal"


@functools.cache
def imports() -> list[tuple[str, str, list[str], str]]:
    """(importing room, imported module, the names imported, where) for every import of a toolsift module.

    Parsed when a test first asks (not at collection, in every worker)."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        package = parts[:-1]  # the package a relative import starts from, for modules and __init__ alike
        if parts[-1] == "__init__":
            parts = parts[:-1]
        room = parts[1] if len(parts) > 1 else "(root)"
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            if target == "toolsift" or target.startswith("toolsift."):
                names = [alias.name for alias in node.names]
                found.append((room, target, names, f"{path.relative_to(PACKAGE.parent)}:{node.lineno}"))
    return found


def test_the_walk_finds_imports_between_rooms() -> None:
    assert any(room == "serve" and target.startswith("toolsift.mcp_sessions") for room, target, _, _ in imports())


@pytest.mark.parametrize("room", sorted(ALLOWED))
def test_imports_point_one_way(room: str) -> None:
    wrong = []
    for importer, target, _, where in imports():
        parts = target.split(".")
        imported = parts[1] if len(parts) > 1 else "(root)"
        if importer == room and imported != room and imported not in SHARED and imported not in ALLOWED[room]:
            wrong.append(f"{where}: {target}")
    assert wrong == []


def test_no_room_imports_another_rooms_private_module() -> None:
    wrong = []
    for importer, target, _, where in imports():
        parts = target.split(".")
        room = parts[1] if len(parts) > 1 else "(root)"
        private = [p for p in parts[2:] if p.startswith("_")]
        if room != importer and room not in SHARED and private and not _is_internal(parts):
            wrong.append(f"{where}: {target}")
    assert wrong == []


def test_a_room_imports_from_another_only_the_names_it_publishes() -> None:
    """What packages share and users do not need lives in a SHARED module or an ``_internal`` list, not in a
    package's public names; from an ``_internal`` module, only what it lists."""
    wrong = []
    for importer, target, names, where in imports():
        parts = target.split(".")
        room = parts[1] if len(parts) > 1 else "(root)"
        if room == importer or room in SHARED:
            continue
        if any(p.startswith("_") for p in parts[2:]) and not _is_internal(parts):
            continue  # another rule's business: test_no_room_imports_another_rooms_private_module
        module = importlib.import_module(target)
        public = set(getattr(module, "__all__", ()))
        for name in names:
            submodule = isinstance(getattr(module, name, None), ModuleType) and not name.startswith("_")
            if name not in public and not name.startswith("__") and not submodule:
                wrong.append(f"{where}: {target}.{name}")
    assert wrong == []


def test_shared_root_modules_are_leaves() -> None:
    wrong = [
        f"{where}: {target}"
        for importer, target, _, where in imports()
        if importer in SHARED and [*target.split("."), "(root)"][1] not in SHARED
    ]
    assert wrong == []


@pytest.mark.parametrize("room", sorted(INTERNAL))
def test_internal_names_are_pinned(room: str) -> None:
    module = importlib.import_module(f"toolsift.{room}._internal")
    assert sorted(module.__all__) == INTERNAL[room]
    assert [name for name in module.__all__ if not hasattr(module, name)] == []


def test_only_the_pinned_rooms_have_an_internal_module() -> None:
    found = sorted(path.parent.name for path in PACKAGE.glob("*/_internal.py"))
    assert found == sorted(INTERNAL)


@pytest.mark.parametrize("room", sorted(INTERNAL))
def test_internal_names_are_neither_public_nor_unused(room: str) -> None:
    """A name is for users (public) or for the other rooms (internal), never both; and one no other room imports
    goes back to being its room's own."""
    public = set(importlib.import_module(f"toolsift.{room}").__all__)
    used = {
        name
        for importer, target, names, _ in imports()
        if importer != room and target == f"toolsift.{room}._internal"
        for name in names
    }
    assert sorted(set(INTERNAL[room]) & public) == []
    assert sorted(set(INTERNAL[room]) - used) == []
