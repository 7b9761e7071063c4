"""How to install what an optional feature needs, said the same way by every message that needs it.

``pip install 'toolsift[redis]'`` cannot work while toolsift is not on a
package index (and would install whatever else took the name), so the advice
names the third-party packages themselves, which work in any environment, and
the extra for a clone of toolsift. :data:`EXTRAS` mirrors
``[project.optional-dependencies]`` of ``pyproject.toml`` (a test keeps them
equal).

This module imports nothing of toolsift, so that every package can use it.
"""

from __future__ import annotations

import shlex

__all__ = ["EXTRAS", "install_advice"]

EXTRAS: dict[str, tuple[str, ...]] = {
    "openai": ("openai>=3.57",),
    "anthropic": ("anthropic>=2.14",),
    "semantic": ("tokenizers>=0.15", "safetensors>=0.4", "onnxruntime>=1.22", "onnx>=1.16"),
    "openai-agents": ("openai-agents>=0.24",),
    "pydantic-ai": ("pydantic-ai-slim>=2.60",),
    "langchain": ("langchain-core>=1.0",),
    "langchain-mcp": ("langchain[mcp]>=1.5",),
    "otel": ("opentelemetry-api>=1.20",),
    "redis": ("redis>=5.0",),
}


def install_advice(extra: str, *, then: str = "") -> str:
    """The commands that install ``extra``'s requirements, and the extra's form for a clone.

    Args:
        extra: A key of :data:`EXTRAS`.
        then: A further command both ways need (joined with ``&&``).
    """
    after = f" && {then}" if then else ""
    packages = " ".join(shlex.quote(requirement) for requirement in EXTRAS[extra])
    return f"pip install {packages}{after} (from a clone of toolsift: pip install -e '.[{extra}]'{after})"
