"""LLM adapters: provider SDKs behind the ``ChatModel`` protocol.

Each adapter lives in its own module and imports its SDK only when built, so
toolsift works without either SDK installed.
"""

from __future__ import annotations

import os
from typing import Any

from ..._exceptions import AgentError
from ..._install import install_advice
from .._turn import ChatModel
from .prices import PriceTable

__all__ = ["load_model"]

# provider -> (module, class, environment variable with the key, pip extra)
PROVIDERS: dict[str, tuple[str, str, str, str]] = {
    "openai": ("toolsift.agent.llm.openai", "OpenAIChatModel", "OPENAI_API_KEY", "openai"),
    "openai-responses": ("toolsift.agent.llm.openai_responses", "OpenAIResponsesModel", "OPENAI_API_KEY", "openai"),
    "anthropic": ("toolsift.agent.llm.anthropic", "AnthropicChatModel", "ANTHROPIC_API_KEY", "anthropic"),
}


def load_model(
    spec: str,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    prices: PriceTable | None = None,
    **options: Any,
) -> ChatModel:
    """Build a chat model from ``provider:model`` (``openai:gpt-4.1-mini``, ``anthropic:claude-sonnet-5-5``,
    ``openai-responses:gpt-5.4`` for OpenAI's Responses API).

    The API key comes from ``api_key`` or the provider's environment variable;
    ``base_url`` (or ``OPENAI_BASE_URL``) reaches OpenAI-compatible local servers.
    ``scripted:FILE`` is the offline model of :mod:`toolsift.agent.llm.scripted`: answers read from FILE.
    ``prices`` prices each reply's ``usage.cost`` (default: the table shipped; see
    :class:`toolsift.agent.llm.prices.PriceTable`).

    Raises:
        AgentError: Unknown provider, missing SDK (with the pip command), missing key, or a bad script.
    """
    provider, sep, model = spec.partition(":")
    if not sep or not model:
        raise AgentError(f"Model {spec!r} must look like provider:model, e.g. openai:gpt-4.1-mini")
    if provider == "scripted":
        from .scripted import ScriptedChatModel

        return ScriptedChatModel(model)
    if provider == "ollama":  # Ollama serves the OpenAI API
        raise AgentError(
            f"Ollama is reached through its OpenAI-compatible API: use --model openai:{model} "
            "--base-url http://127.0.0.1:11434/v1"
        )
    if provider not in PROVIDERS:
        known = ", ".join(sorted([*PROVIDERS, "scripted"]))
        raise AgentError(f"Unknown model provider {provider!r}; available: {known}")
    module_name, class_name, key_variable, extra = PROVIDERS[provider]
    try:
        module = __import__(module_name, fromlist=[class_name])
    except ImportError as exc:
        raise AgentError(f"The {provider} SDK is not installed: {install_advice(extra)}") from exc
    key = api_key or os.environ.get(key_variable)
    if not key and not (key_variable == "OPENAI_API_KEY" and (base_url or os.environ.get("OPENAI_BASE_URL"))):
        raise AgentError(f"No API key for {provider}: set {key_variable}")
    model_class: Any = getattr(module, class_name)
    if prices is not None:
        options["prices"] = prices
    built: ChatModel = model_class(model, api_key=key or "unused", base_url=base_url, **options)
    return built
