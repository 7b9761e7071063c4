"""Other clients' variable forms, rewritten into toolsift's ``${VAR}`` at load time.

Each form becomes either literal text that is no secret (a folder, the path
separator) or a ``${VAR}`` reference, so the values of environment variables
are still looked up at connect time by the one expander
(``toolsift/_secrets``: ``expand_variables``) and never sit in the loaded config:

- ``${env:NAME}`` (VS Code, Cursor, Windsurf) -> ``${NAME}``.
- ``${workspaceFolder}``, ``${workspaceFolderBasename}``, ``${userHome}``,
  ``${pathSeparator}`` and ``${/}`` (VS Code, Cursor) -> the project folder,
  its name, the home folder, the path separator.
- ``${input:ID}`` (VS Code prompts for it) -> ``${TOOLSIFT_INPUT_<ID>}``: toolsift
  does not prompt, so the value comes from that environment variable.
- ``${CLAUDE_PROJECT_DIR}`` and ``${CLAUDE_PLUGIN_ROOT}`` (Claude Code) keep
  the environment's value when it is set and default to the project folder and
  to the config file's folder.
- ``$NAME`` (Gemini CLI) -> ``${NAME}``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import final

from ..._secrets._expand import rewrite_references
from ._dialect import VariableForm

__all__ = ["Places", "input_variable", "rewrite_variables"]

_DOLLAR = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")
_NOT_NAME = re.compile(r"[^A-Za-z0-9]+")
INPUT_PREFIX = "TOOLSIFT_INPUT_"


@final
@dataclass(frozen=True)
class Places:
    """What the folder variables of one file stand for.

    Attributes:
        project: The project folder (``${workspaceFolder}``, ``${CLAUDE_PROJECT_DIR}``).
        config_dir: The config file's folder (``${CLAUDE_PLUGIN_ROOT}``).
        home: The home folder (``${userHome}``).
        inputs: VS Code's declared inputs, by id, with their descriptions.
    """

    project: Path
    config_dir: Path
    home: Path = field(default_factory=Path.home)
    inputs: Mapping[str, str] = field(default_factory=dict)


def input_variable(input_id: str) -> str:
    """The environment variable read for ``${input:ID}``: ``github-token`` -> ``TOOLSIFT_INPUT_GITHUB_TOKEN``."""
    return INPUT_PREFIX + _NOT_NAME.sub("_", input_id).strip("_").upper()


def _reference(name: str, default: str | None) -> str:
    return f"${{{name}}}" if default is None else f"${{{name}:-{default}}}"


def rewrite_variables(value: str, forms: frozenset[VariableForm], places: Places) -> tuple[str, list[str]]:
    """``value`` with the forms a dialect expands rewritten; also a note for each ``${input:...}``.

    References in no form of the dialect stay as written, so the load reports
    a malformed one where it is (``${config:x}`` in a VS Code file).
    """
    notes: list[str] = []
    literals: dict[str, str] = {}
    if "workspace" in forms:
        literals = {
            "workspaceFolder": str(places.project),
            "workspaceFolderBasename": places.project.name,
            "userHome": str(places.home),
            "pathSeparator": os.sep,
            "/": os.sep,
        }
    defaults = {"CLAUDE_PROJECT_DIR": str(places.project), "CLAUDE_PLUGIN_ROOT": str(places.config_dir)}

    def rewrite(name: str, default: str | None) -> str | None:
        kind, colon, rest = name.partition(":")
        if colon and kind == "env" and "env" in forms:
            return _reference(rest, default)
        if colon and kind == "input" and "input" in forms:
            variable = input_variable(rest)
            described = f" ({places.inputs[rest]})" if places.inputs.get(rest) else ""
            notes.append(
                f"${{input:{rest}}}{described} is read from the environment variable {variable}: "
                f"toolsift does not prompt for inputs; set {variable} before starting"
            )
            return _reference(variable, default)
        if name in literals and default is None:
            return literals[name]
        if name in defaults and default is None and "claude" in forms:
            return _reference(name, defaults[name])
        return None

    if "dollar" in forms:
        value = _DOLLAR.sub(r"${\1}", value)
    return rewrite_references(value, rewrite), notes
