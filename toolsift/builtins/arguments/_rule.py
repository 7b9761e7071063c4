"""The policy a configured ``ProgramRule`` gives a program, on top of (or instead of) the built-in one.

A rule adds to the built-in policy of the program (or of the one it names
with ``builtin``); ``"builtin": "none"`` drops the built-in checks, for
instance to let ``env`` print the environment::

    "commands": {
      "allowedPrograms": ["git", "mytool", "gsed", "env"],
      "programs": {
        "mytool": {"deniedOptions": {"--hook": "runs a hook script"}, "valueOptions": ["-o"]},
        "gsed": {"builtin": "sed"},
        "git": {"deniedWords": ["push"]},
        "env": {"builtin": "none"}
      }
    }
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from ...config import ProgramRule
from ._declared import OptionRules
from ._defaults import BUILTIN_POLICIES
from ._policy import NO_CHECKS, AllOf, ArgumentPolicy

__all__ = ["argument_policy", "rule_problems"]

_NONE = "none"


def rule_problems(rules: Mapping[str, ProgramRule]) -> list[tuple[str, str]]:
    """(program, message) for each rule whose ``builtin`` names no built-in policy."""
    return [
        (program, f"no built-in argument policy is named {rule.builtin!r}; available: "
                  f"{', '.join(sorted(BUILTIN_POLICIES))}, or 'none'")
        for program, rule in rules.items()
        if rule.builtin is not None and rule.builtin != _NONE and rule.builtin not in BUILTIN_POLICIES
    ]


def _rule_policy(rule: ProgramRule, program: str) -> ArgumentPolicy:
    """The policy ``rule`` gives ``program`` (a base name)."""
    base_name = rule.builtin or program
    base = NO_CHECKS if base_name == _NONE else BUILTIN_POLICIES.get(base_name, NO_CHECKS)
    if not (rule.denied_options or rule.denied_words):
        return base
    generic = f"is denied by commands.programs.{program}"
    own = OptionRules.of(
        {name: reason or generic for name, reason in rule.denied_options.items()},
        words={word: reason or generic for word, reason in rule.denied_words.items()},
        values=rule.value_options,
    )
    return AllOf((base, own))


def argument_policy(program: str, rules: Mapping[str, ProgramRule]) -> ArgumentPolicy:
    """The policy of ``program`` (a bare name or an absolute path), looked up by its base name."""
    name = os.path.basename(program)
    rule = rules.get(name)
    return _rule_policy(rule, name) if rule is not None else BUILTIN_POLICIES.get(name, NO_CHECKS)
