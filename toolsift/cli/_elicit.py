"""Asking the person at the terminal what an MCP server wants to know (elicitation), and showing servers' logs."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import anyio
import mcp.types as types

from ..mcp_sessions import LogHandler
from ._output import Output

__all__ = ["TerminalElicitor", "log_printer"]

_BOOLEAN = {"y": True, "yes": True, "true": True, "n": False, "no": False, "false": False}


def _read(prompt: str) -> str | None:
    try:
        return input(prompt)
    except EOFError:
        return None


def _choices(field: dict[str, Any]) -> list[str]:
    """The allowed values of a field: an enum, or the consts of oneOf/anyOf (also of array items)."""
    source = field.get("items", field) if field.get("type") == "array" else field
    if isinstance(source.get("enum"), list):
        return [str(value) for value in source["enum"]]
    options = source.get("oneOf") or source.get("anyOf") or []
    return [str(option["const"]) for option in options if isinstance(option, dict) and "const" in option]


def _convert(field: dict[str, Any], text: str) -> Any:
    """The typed value of an answer; raises ValueError with what was expected."""
    kind, choices = field.get("type"), _choices(field)
    if kind == "array":
        values = [part.strip() for part in text.split(",") if part.strip()]
        wrong = [value for value in values if choices and value not in choices]
        if wrong:
            raise ValueError(f"choose from {', '.join(choices)}")
        return values
    if choices and text not in choices:
        raise ValueError(f"choose one of {', '.join(choices)}")
    if kind == "boolean":
        if text.lower() not in _BOOLEAN:
            raise ValueError("answer y or n")
        return _BOOLEAN[text.lower()]
    if kind == "integer":
        return int(text)
    if kind == "number":
        return float(text)
    return text


class TerminalElicitor:
    """An elicitation callback (``ClientCallbacks.elicitation``) that asks on stdin.

    A form is asked field by field (an empty answer takes the default, or
    leaves an optional field out); a URL is shown to open. The person can
    decline or cancel first. Without a terminal the request is refused.

    Args:
        out: Where the questions are shown.
        interactive: Whether a person can answer (default: stdin is a terminal).
        read: Reads one answer (``input`` by default, run off the event loop).
    """

    def __init__(
        self, out: Output, *, interactive: bool | None = None, read: Callable[[str], str | None] = _read
    ) -> None:
        self._out = out
        self._interactive = sys.stdin.isatty() if interactive is None else interactive
        self._read = read

    async def __call__(self, server: str, params: types.ElicitRequestParams) -> types.ElicitResult | types.ErrorData:
        if not self._interactive:
            return types.ErrorData(
                code=types.INVALID_REQUEST, message="there is no terminal to ask the person; the request is refused"
            )
        self._out.line(f"MCP server {server!r} asks: {params.message}", style="yellow")
        if isinstance(params, types.ElicitRequestURLParams):
            self._out.line(f"Open {params.url}")
        answer = ((await self._ask("[a]nswer / [d]ecline / [c]ancel: ")) or "c").strip().lower()
        if answer in ("d", "decline"):
            return types.ElicitResult(action="decline")
        if answer not in ("a", "answer", "y", "yes"):
            return types.ElicitResult(action="cancel")
        if isinstance(params, types.ElicitRequestURLParams):
            return types.ElicitResult(action="accept")
        return await self._form(params.requested_schema)

    async def _ask(self, prompt: str) -> str | None:
        return await anyio.to_thread.run_sync(self._read, prompt)

    async def _form(self, schema: types.ElicitRequestedSchema) -> types.ElicitResult:
        required = set(schema.get("required", []))
        content: dict[str, Any] = {}
        for name, field in schema.get("properties", {}).items():
            spec: dict[str, Any] = dict(field)
            hint = " | ".join(
                filter(
                    None,
                    [
                        spec.get("description"),
                        ", ".join(_choices(spec)) or None,
                        f"default {spec['default']}" if "default" in spec else None,
                    ],
                )
            )
            while True:
                text = await self._ask(f"{spec.get('title', name)}{f' ({hint})' if hint else ''}: ")
                if text is None:
                    return types.ElicitResult(action="cancel")
                if not text.strip():
                    if "default" in spec:
                        content[name] = spec["default"]
                    elif name in required:
                        self._out.line(f"{name} is required", style="yellow")
                        continue
                    break
                try:
                    content[name] = _convert(spec, text.strip())
                    break
                except ValueError as exc:
                    self._out.line(f"{name}: {exc}", style="yellow")
        return types.ElicitResult(action="accept", content=content)


def log_printer(out: Output) -> LogHandler:
    """A log callback (``ClientCallbacks.logging``) that shows a server's log messages on stderr."""

    async def show(server: str, params: types.LoggingMessageNotificationParams) -> None:
        source = f" {params.logger}" if params.logger else ""
        out.note(f"[{server}{source}] {params.level}: {params.data}")

    return show
