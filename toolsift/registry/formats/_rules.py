"""The function-name rules of the providers toolsift exports to."""

from __future__ import annotations

import re

from ._base import NameRule

__all__ = ["GEMINI_NAMES", "OPENAI_ANTHROPIC_NAMES"]

# OpenAI and Anthropic document the same rule for tool/function names.
OPENAI_ANTHROPIC_NAMES = NameRule(
    key="openai-anthropic",
    pattern=re.compile(r"[a-zA-Z0-9_-]{1,64}"),
    max_length=64,
    invalid_char=re.compile(r"[^a-zA-Z0-9_-]"),
)
# Gemini: start with a letter or underscore; letters, digits, '_', '.', '-'; at most 64.
GEMINI_NAMES = NameRule(
    key="gemini",
    pattern=re.compile(r"[a-zA-Z_][a-zA-Z0-9_.-]{0,63}"),
    max_length=64,
    invalid_char=re.compile(r"[^a-zA-Z0-9_.-]"),
    must_start=re.compile(r"[a-zA-Z_]"),
)
