"""The public names of every package, pinned: a change to them is a deliberate change to this file."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "toolsift"
PUBLIC = {
    "toolsift": [
        "AgentError",
        "ConfigError",
        "DuplicateTool",
        "InvalidArguments",
        "InvalidPattern",
        "InvalidToolName",
        "LimitExceeded",
        "PermissionDenied",
        "PolicyDenied",
        "RegistryError",
        "SecretError",
        "ServerDraining",
        "ServerUnavailable",
        "SessionError",
        "SignInRequired",
        "SkillArgumentError",
        "SkillError",
        "SkillNotFound",
        "SkillParseError",
        "SkillRenderError",
        "SkillUnavailable",
        "TemplateError",
        "ToolHeld",
        "ToolNotFound",
        "ToolsiftError",
        "UnknownFormat",
    ],
    "toolsift.registry": [
        "ApprovalRequest",
        "Approver",
        "AuditLog",
        "CallHandler",
        "CallRecord",
        "Level",
        "Permissions",
        "Tool",
        "ToolContext",
        "ToolRegistry",
        "ToolResult",
        "ToolRule",
        "ToolSpec",
        "TurnScope",
        "tool",
    ],
    "toolsift.registry.formats": [
        "FORMATS",
        "SchemaFormat",
        "get_format",
    ],
    "toolsift.cli": ["main"],
    "toolsift.config": [
        "HttpServer",
        "ProjectTrust",
        "ServerConfig",
        "SkillGrants",
        "StdioServer",
        "ToolsiftConfig",
        "TrustedLaunches",
        "load_config",
        "parse_config",
        "validate_config",
    ],
    "toolsift.config.secrets": [
        "SecretReference",
        "SecretResolver",
        "register_secret_resolver",
        "unregister_secret_resolver",
    ],
    "toolsift.mcp_sessions": [
        "ClientCallbacks",
        "ElicitationHandler",
        "LogHandler",
        "McpSession",
        "McpSessionGroup",
        "SamplingHandler",
        "SessionOptions",
        "SignInHandler",
        "register_mcp_tools",
    ],
    "toolsift.mcp_sessions.reload": ["McpServerManager"],
    "toolsift.skills": [
        "Skill",
        "SkillSet",
        "SkillsLoader",
        "SkillsReloaded",
        "TemplateSandbox",
        "bind_arguments",
        "default_user_dirs",
        "parse_skill",
    ],
    "toolsift.search": [
        "Discovery",
        "SearchHit",
        "SearchIndex",
        "SearchToolsTool",
        "SkillCatalog",
        "index_tools",
        "semantic_available",
    ],
    "toolsift.pipeline": [
        "AuditTrail",
        "Middleware",
        "PermissionFilter",
        "Pipeline",
        "ResultGuard",
        "SecurityGuard",
        "trace_tool_calls",
    ],
    "toolsift.builtins": [
        "CommandPolicy",
        "Workspace",
        "builtin_tools",
        "protected_paths",
    ],
    "toolsift.agent": [
        "AssistantMessage",
        "ChatModel",
        "ContextMessage",
        "Conversation",
        "Message",
        "ToolCall",
        "ToolMessage",
        "Usage",
        "UserMessage",
        "model_sampler",
        "result_text",
    ],
    "toolsift.agent.adapters": [],
    "toolsift.agent.adapters.langchain": ["LangChainTools"],
    "toolsift.agent.adapters.openai_agents": ["ToolsiftAgentsServer"],
    "toolsift.agent.adapters.pydantic_ai": ["ToolsiftToolset"],
    "toolsift.agent.llm": ["load_model"],
    "toolsift.agent.llm.anthropic": ["AnthropicChatModel"],
    "toolsift.agent.llm.openai": ["OpenAIChatModel"],
    "toolsift.agent.llm.openai_responses": ["OpenAIResponsesModel"],
    "toolsift.agent.llm.scripted": ["ScriptedChatModel"],
    "toolsift.serve": [
        "build_server",
        "create_http_app",
        "load_serve_config",
        "serve_http",
        "serve_stdio",
    ],
    "toolsift.toolbox": ["Toolbox"],
}
# Every public module is above (a module whose path has no ``_`` part), and every entry counts. Each name has one
# home: the root publishes the exception tree, and nothing is published twice. What packages share and users do not
# need lives in the root's private modules or in a package's ``_internal`` list (tests/test_architecture.py), so
# that this stays small (a ratchet: lowered when names go).
MOST_PUBLIC_NAMES = 120


def _public_modules() -> list[str]:
    """Every module of the package whose dotted path has no private part, by walking the files."""
    found = []
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] in ("__init__", "__main__"):
            parts = parts[:-1] if parts[-1] == "__init__" else []
        if parts and not any(part.startswith("_") for part in parts[1:]):
            found.append(".".join(parts))
    return sorted(found)


def test_the_public_surface_stays_small() -> None:
    assert sum(len(names) for names in PUBLIC.values()) <= MOST_PUBLIC_NAMES


def test_every_public_module_is_counted() -> None:
    assert _public_modules() == sorted(PUBLIC)


def test_every_public_name_has_one_home() -> None:
    homes: dict[str, list[str]] = {}
    for module, names in PUBLIC.items():
        for name in names:
            homes.setdefault(name, []).append(module)
    assert {name: found for name, found in homes.items() if len(found) > 1} == {}


@pytest.mark.parametrize("package", sorted(PUBLIC))
def test_public_names_are_pinned(package: str) -> None:
    module = importlib.import_module(package)
    assert sorted(module.__all__) == PUBLIC[package]
    missing = [name for name in module.__all__ if not hasattr(module, name)]
    assert missing == []


@pytest.mark.parametrize("package", sorted(PUBLIC))
def test_public_classes_and_functions_report_a_public_module(package: str) -> None:
    module = importlib.import_module(package)
    private = []
    for name in module.__all__:
        obj = getattr(module, name)
        home = getattr(obj, "__module__", None)
        is_code = isinstance(obj, type) or callable(obj)
        if is_code and isinstance(home, str) and any(part.startswith("_") for part in home.split(".")[1:]):
            private.append(f"{name}: {home}")
    assert private == []


def test_importing_the_root_loads_no_room() -> None:
    """``import toolsift`` (and so ``toolsift --version``) pays for the exception tree only."""
    import subprocess
    import sys

    code = (
        "import sys, toolsift; "
        "loaded = sorted(m for m in sys.modules if m.startswith('toolsift.') and not m.split('.')[1].startswith('_')); "
        "assert loaded == [], loaded"
    )
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0
