"""What checking a config file found: the usable config, its problems and warnings, and the servers left out."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import final

from pydantic import BaseModel, ValidationError

from .._exceptions import ConfigError
from ._errors import format_field, validation_problems
from ._json_lines import JsonLines, Loc
from ._toolsift import ToolsiftConfig

__all__ = ["Checker", "ConfigReport", "ConfigWarning", "Written", "as_written", "located"]

logger = logging.getLogger("toolsift.config")


@final
@dataclass(frozen=True)
class ConfigWarning:
    """Something valid but doubtful in a config file; it never stops a load.

    Attributes:
        message: What was found and what to do; never a setting's value.
        path: The config file, when there is one.
        field: Dotted field path as written (``tools.mcpServers.git.env.API_KEY``).
        line: 1-based line, where it can be known.
        server: The server concerned, if any.
    """

    message: str
    path: Path | None = None
    field: str | None = None
    line: int | None = None
    server: str | None = None

    def __str__(self) -> str:
        # The same shape as a ConfigError's message: "file:line: field: message".
        parts = [] if self.path is None else [f"{self.path}:{self.line}" if self.line is not None else str(self.path)]
        return ": ".join([*parts, *([self.field] if self.field else []), self.message])


@final
@dataclass(frozen=True)
class ConfigReport:
    """The outcome of checking one config: the usable config, problems and warnings.

    Attributes:
        config: The config without the servers that had problems, or None when
            a problem outside the servers makes the file unusable.
        problems: Every problem found, in file order where known.
        warnings: Every warning (already logged on ``toolsift.config``).
        skipped: Servers left out of ``config`` because of a problem.
        path: The file checked, if any.
        dropped: Every server of the file that is not in ``config`` (those in
            ``skipped``, and those with nothing to connect to), with why.
        dialect: Which client's format the file was read as (``toolsift``,
            ``claude``, ``vscode``, ``cursor``, ``windsurf``, ``cline``, ``gemini``, ``fastmcp``).
    """

    config: ToolsiftConfig | None
    problems: tuple[ConfigError, ...] = ()
    warnings: tuple[ConfigWarning, ...] = ()
    skipped: tuple[str, ...] = ()
    path: Path | None = None
    dropped: Mapping[str, str] = field(default_factory=dict)
    dialect: str = "toolsift"

    @property
    def ok(self) -> bool:
        """True when the file loaded with no problem at all."""
        return self.config is not None and not self.problems

    def error(self) -> ConfigError:
        """One ``ConfigError`` for all problems: the problem itself when there is one.

        Raises:
            ValueError: When there is no problem to report.
        """
        if not self.problems:
            raise ValueError("The config has no problems to report")
        if len(self.problems) == 1:
            return self.problems[0]
        listing = "\n".join(f"  {located(p)}" for p in self.problems)
        return ConfigError(f"{len(self.problems)} problems:\n{listing}", path=self.path)

    def usable(self) -> ToolsiftConfig:
        """The config without the servers that have problems, each problem logged at ERROR (a lenient load).

        Raises:
            ConfigError: When a problem outside the servers leaves no usable config.
        """
        if self.config is None:
            raise self.error()
        for problem in self.problems:
            logger.error("server skipped: %s", problem)
        return self.config

    def raise_for_problems(self) -> ToolsiftConfig:
        """Return the config when there is no problem, else raise :meth:`error`."""
        if self.config is None or self.problems:
            raise self.error()
        return self.config


def located(problem: ConfigError) -> str:
    line = f"line {problem.line}: " if problem.line is not None else ""
    return f"{line}{problem.field + ': ' if problem.field else ''}{problem.reason}"


# Where a field of an entry stands in the file, given where it is in the model (a client's keys differ).
Written = Callable[[Loc], Loc]


def as_written(loc: Loc) -> Loc:
    return loc


class Checker:
    """Collects the problems and warnings of one file."""

    def __init__(self, path: Path | None, lines: JsonLines) -> None:
        self.path = path
        self.lines = lines
        self.problems: list[ConfigError] = []
        self.warnings: list[ConfigWarning] = []

    def problem(self, loc: Loc, reason: str, *, line: int | None = None) -> None:
        line = self.lines.line_of(loc) if line is None else line
        self.problems.append(ConfigError(reason, path=self.path, field=format_field(loc) or None, line=line))

    def invalid(self, exc: ValidationError, model: type[BaseModel], prefix: Loc, written: Written = as_written) -> None:
        for loc, reason in validation_problems(exc, model):
            self.problem((*prefix, *written(loc)), reason)

    def warn(self, loc: Loc, message: str, *, server: str | None = None, line: int | None = None) -> None:
        line = self.lines.line_of(loc) if line is None else line
        warning = ConfigWarning(message, self.path, format_field(loc) or None, line, server)
        logger.warning("%s", warning)
        self.warnings.append(warning)
