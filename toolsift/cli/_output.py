"""How the CLI prints: rich tables on a terminal, tab-separated text when piped, JSON on request."""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

__all__ = ["JsonOption", "Output", "progress_printer", "reported_here"]

# The option of every command that can print for machines.
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON for machines.")]


@contextmanager
def reported_here(logger_name: str) -> Iterator[None]:
    """Keep a library logger quiet while the command prints the same problems itself (each once, not twice)."""
    logger = logging.getLogger(logger_name)

    def drop(record: logging.LogRecord) -> bool:
        return False

    logger.addFilter(drop)
    try:
        yield
    finally:
        logger.removeFilter(drop)


class Output:
    """One place that decides how results look.

    Args:
        json_mode: Print machine-readable JSON only (``--json``).
    """

    def __init__(self, *, json_mode: bool = False) -> None:
        self.json_mode = json_mode
        self.out = Console(soft_wrap=True, highlight=False)
        self.err = Console(stderr=True, soft_wrap=True, highlight=False)

    @property
    def interactive(self) -> bool:
        """True when stdout is a terminal (tables and colour), False when piped."""
        return self.out.is_terminal

    def json(self, data: Any) -> None:
        """Print ``data`` as JSON on stdout."""
        sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")

    def table(self, title: str, columns: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
        """A table on a terminal; tab-separated lines with a header row when piped."""
        if self.interactive:
            table = Table(title=title, title_justify="left")
            for column in columns:
                table.add_column(column)
            for row in rows:
                table.add_row(*(str(cell) for cell in row))
            self.out.print(table)
            return
        lines = [title, "\t".join(columns), *("\t".join(str(cell) for cell in row) for row in rows)]
        sys.stdout.write("\n".join(lines) + "\n")

    def line(self, text: str = "", *, style: str | None = None) -> None:
        """One line on stdout (styled on a terminal)."""
        self.out.print(text, style=style, markup=False)

    def note(self, text: str, *, style: str | None = "dim") -> None:
        """Progress and remarks on stderr, so piped stdout stays clean."""
        self.err.print(text, style=style, markup=False)

    def error(self, text: str) -> None:
        """One clear error line on stderr."""
        self.err.print(f"error: {text}", style="bold red", markup=False)


def progress_printer(out: Output, tool: str) -> Callable[[float, float | None, str | None], Awaitable[None]]:
    """A progress callback that prints each notification of a long call as one line on stderr."""

    async def show(done: float, total: float | None, message: str | None) -> None:
        amount = f"{done:g}/{total:g}" if total else f"{done:g}"
        out.note(f"[{tool}] {amount}{f' {message}' if message else ''}")

    return show
