"""The public names of every package, pinned: a change to them is a deliberate change to this file."""

from __future__ import annotations

import importlib

import pytest

PUBLIC = {
    "toolsift": [
        "AgentError", "ApprovalRequest", "ConfigError", "DuplicateTool", "InvalidArguments", "InvalidPattern",
        "InvalidToolName",
        "Level", "LimitExceeded", "PermissionDenied", "Permissions", "PolicyDenied", "RegistryError", "SecretError",
        "ServerDraining", "ServerUnavailable", "SessionError", "SignInRequired", "SkillArgumentError", "SkillError",
        "SkillNotFound",
        "SkillParseError", "SkillRenderError", "TemplateError", "ToolNotFound", "ToolRegistry", "ToolResult",
        "Toolbox", "ToolsiftError", "TurnScope", "UnknownFormat", "tool",
    ],
    "toolsift.registry": [
        "ApprovalRequest", "Approver", "AuditEvent", "AuditLog", "CallHandler", "CallRecord", "ContentBlock", "FORMATS",
        "FunctionTool", "Level",
        "PatternSet",
        "PermissionLayer", "Permissions", "ProgressCallback", "RegistryChange", "SERVED_BUILTIN_NAMESPACE",
        "SchemaFormat", "Tool",
        "ToolContext", "ToolRegistry", "ToolResult", "ToolRule", "ToolSpec", "TurnScope", "check_permissions",
        "compile_patterns", "get_format", "literal_server", "looks_like_secret", "redact", "split_name", "tool",
        "validate_pattern",
        "validate_server_name", "validate_tool_name",
    ],
    "toolsift.registry.formats": [
        "AnthropicFormat", "FORMATS", "GeminiFormat", "MCPFormat", "NameRule", "OpenAIFormat",
        "OpenAIResponsesFormat", "SchemaFormat", "drop_optional_nulls", "get_format", "strict_schema",
    ],
    "toolsift.config": [
        "AgentConfig", "ArgumentRule", "AuditConfig", "CONFIG_NAME", "CommandSettings", "ConfigDiff", "ConfigReport",
        "ConfigWarning", "LimitsConfig", "OAuthConfig", "PROJECT_CONFIGS", "PermissionsConfig", "ProjectTrust",
        "ResolvedServer", "SearchConfig", "ServeSettings", "ServerConfig", "SharedSettings", "SkillsConfig",
        "ToolRuleConfig", "ToolsConfig",
        "ToolsiftConfig", "TransportKind", "TrustCheck", "TrustedLaunches", "UrlPolicy", "argument_values",
        "child_environment",
        "configured_settings", "diff_servers", "is_loopback", "launch_fingerprints", "load_config", "parse_config",
        "permission_glob_warnings", "resolve_server", "urls_in", "user_folder", "validate_config",
        "validate_serve_settings",
    ],
    "toolsift.config.secrets": [
        "EnvSecretResolver", "FileSecretResolver", "SecretReference", "SecretResolver", "expand_variables",
        "has_references", "is_secret_reference", "mask_settings", "mask_url", "parse_secret_reference",
        "reference_problem", "register_secret_resolver", "resolve_secret", "rewrite_references",
        "unregister_secret_resolver",
    ],
    "toolsift.mcp_sessions": [
        "ClientCallbacks", "ElicitationHandler", "FileTokenStorage", "ListMcpResources", "LogHandler", "ManagerEvent",
        "ManagerEventKind", "McpServerManager", "McpSession", "McpSessionGroup", "McpToolWrapper", "ReadMcpResource",
        "ResourceSession", "RestartPolicy", "SamplingHandler", "ServerCatalog",
        "ServerStatus", "SessionEvent", "SessionOptions", "SessionState", "SessionStatus", "SignInHandler",
        "default_session_options", "fence", "format_status", "guard_result", "neutralise_markers",
        "register_mcp_tools", "resource_context", "searchable_lazy", "server_instructions", "split_fence",
        "status_rows", "token_file", "tool_spec", "verbatim_results",
    ],
    "toolsift.mcp_sessions.reload": [
        "ManagerEvent", "ManagerEventKind", "McpServerManager", "ServerStatus",
    ],
    "toolsift.skills": [
        "Skill", "SkillProblem", "SkillSet", "SkillVariable", "SkillWarning", "SkillsLoader", "SkillsReloaded",
        "TemplateSandbox", "bind_arguments", "default_user_dir", "default_user_dirs", "parse_skill", "parse_skill_text",
        "render_skill", "shared_sandbox", "split_tool_list", "user_folders",
    ],
    "toolsift.search": [
        "BACKENDS", "BackendName", "Bm25Backend", "Discovery", "Embedder", "HybridBackend", "IndexedSkill",
        "McpPromptSkill", "PromptSession", "Ranker", "SEARCH_TOOL_NAME", "SearchBackend", "SearchDocument",
        "SearchHit", "SearchIndex", "SearchToolsTool", "SemanticBackend", "SkillCatalog", "SkillProvider",
        "ToolListing", "UnlockMode", "default_cache_folder", "format_ranking", "index_tools", "load_local_embedder",
        "prompt_skills", "semantic_available", "server_descriptions",
    ],
    "toolsift.pipeline": [
        "AuditTrail", "Fence", "Middleware", "MiddlewareFactory", "OTEL_EXTRA_HINT", "PermissionFilter",
        "Pipeline", "REFUSAL_KEY", "Refusal", "RegistryHandler", "ResultGuard", "SecurityGuard",
        "profile_scope", "refusal_of", "refuse", "result_size", "trace_configured_calls", "trace_tool_calls",
    ],
    "toolsift.builtins": [
        "CommandPolicy", "FileTools", "ProtectedPath", "ProtectionGuard", "SHELL_METACHARACTERS", "ShellTool",
        "Workspace", "builtin_tools", "protected_paths",
    ],
    "toolsift.agent": [
        "AgentReply", "AssistantMessage", "ChatModel", "Command", "CommandReply", "Conversation",
        "Message", "ResultPart", "SkillSource", "ToolCall", "ToolMessage", "Turn", "UserMessage", "describe_result",
        "model_sampler", "parse_command", "result_text",
    ],
    "toolsift.agent.adapters": ["ExportedTool", "LiveTools"],
    "toolsift.agent.adapters.langchain": ["LangChainTools"],
    "toolsift.agent.adapters.openai_agents": ["ToolsiftAgentsServer"],
    "toolsift.agent.adapters.pydantic_ai": ["ToolsiftToolset"],
    "toolsift.serve": [
        "ToolsiftServer", "app_from_environment", "build_server", "create_http_app", "load_serve_config", "main",
        "run_http_workers", "serve_http", "serve_stdio",
    ],
}


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


def test_toolbox_is_importable_from_the_root_without_loading_it_eagerly() -> None:
    import subprocess
    import sys

    code = ("import sys, toolsift; assert 'toolsift.toolbox' not in sys.modules; "
            "from toolsift import Toolbox; assert Toolbox.__name__ == 'Toolbox'")
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0
