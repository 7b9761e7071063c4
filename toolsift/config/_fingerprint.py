"""Fingerprints of what a config makes happen, for remembering consent without keeping values.

A server's launch fingerprint covers its settings as written (command,
arguments, folder, environment, env file, URL, headers, and ``pinTools`` when
it lets changed tool definitions through) and what they resolve
to where it runs: the real folder the child starts in, the real path of each
relative command or argument that names a file there, and the bytes of its
env file. So the same file used from another folder (a symlinked
``toolsift.json``) or an env file that gained ``PYTHONPATH`` fingerprints
differently, and is asked about again.

The content of the program a server runs (``server.py``) is not part of it:
that file and everything it imports are the project's code, trusted with the
folder, and hashing one of them would re-ask at every edit of a server under
development without covering what it imports.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from ._launch_folder import absolute_path, expanded_now, found_in, launch_folder
from ._server import HttpServer, ServerConfig, StdioServer
from ._toolsift import ToolsiftConfig

__all__ = ["configured_settings", "launch_fingerprint", "launch_fingerprints", "settings_fingerprint"]

# What decides which program runs, or where requests and their headers go.
_LAUNCH_FIELDS = ("transport", "command", "args", "cwd", "env", "env_file", "url", "headers")
# The launch fields a server's type lacks, as it would have them unset: a fingerprint covers all eight, so
# the consents remembered before servers had a type per transport stay valid.
_UNSET: dict[str, Any] = {
    name: None if info.is_required() else info.get_default(call_default_factory=True)
    for model in (StdioServer, HttpServer)
    for name, info in model.model_fields.items()
    if name in _LAUNCH_FIELDS
}


def _digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _resolved_paths(server: StdioServer, folder: Path) -> dict[str, str]:
    """The real path of each relative command or argument that names something in ``folder``.

    A bare command (``python``) is looked up on ``PATH``, not in the folder, so
    only a command with a separator (``./run.sh``) counts.
    """
    values = [*server.args]
    if os.sep in server.command:
        values.insert(0, server.command)
    resolved = {}
    for value in values:
        plain = expanded_now(value)
        real = None if plain is None else found_in(plain, folder)
        if real is not None:
            resolved[value] = str(real)
    return resolved


def _env_file_digest(env_file: str, base_dir: Path) -> str:
    """A digest of the env file's bytes, or why there are none (a missing file is part of the launch too)."""
    plain = expanded_now(env_file)
    if plain is None:
        return "unresolved"
    try:
        return hashlib.sha256(absolute_path(plain, base_dir).read_bytes()).hexdigest()
    except FileNotFoundError:
        return "missing"
    except OSError as exc:
        return f"unreadable: {exc.strerror or type(exc).__name__}"


def _launch(server: ServerConfig, cwd: Path) -> dict[str, Any]:
    launch = _UNSET | server.model_dump(mode="json", include=set(_LAUNCH_FIELDS))
    if server.pin_tools != "hold":  # a project that stops holding changed tools back is asked about again
        launch["pinTools"] = server.pin_tools
    if isinstance(server, StdioServer):
        if server.env_file is not None:
            launch["envFileDigest"] = _env_file_digest(server.env_file, server.base_dir)
        folder = launch_folder(server, cwd)
        launch["runsIn"] = None if folder is None else str(folder)
        launch["resolvedPaths"] = {} if folder is None else _resolved_paths(server, folder)
    return launch


def launch_fingerprint(server: ServerConfig, *, cwd: Path | None = None) -> str:
    """A fingerprint of what ``server`` launches, where it runs; see :func:`launch_fingerprints`."""
    return _digest(_launch(server, Path.cwd() if cwd is None else cwd))


def launch_fingerprints(config: ToolsiftConfig, *, cwd: Path | None = None) -> dict[str, str]:
    """A fingerprint of what each enabled server launches, by server name.

    It reads the file system (folders, links, env files): from async code,
    call it in a worker thread.

    Args:
        config: The loaded config.
        cwd: The folder a stdio server without ``cwd`` starts in (this
            process's current folder by default, as when it is spawned).
    """
    return {
        name: launch_fingerprint(server, cwd=cwd) for name, server in sorted(config.servers.items()) if server.enabled
    }


def _pruned(value: Any) -> Any:
    if isinstance(value, dict):
        kept = {key: _pruned(item) for key, item in value.items()}
        return {key: item for key, item in kept.items() if item != {}}
    return value


def configured_settings(config: ToolsiftConfig) -> dict[str, Any]:
    """What the file sets outside its servers (agents, serve, workspace, rules...), by key as written.

    Those settings decide what agents and served models may do. Defaults are
    left out: they are toolsift's, not the project's choice. Paths are as
    loaded, made absolute against the file's folder.
    """
    data = config.model_dump(
        mode="json", by_alias=True, exclude_unset=True, exclude={"path": True, "tools": {"mcp_servers": True}}
    )
    return dict(_pruned(data))


def settings_fingerprint(config: ToolsiftConfig) -> str | None:
    """A fingerprint of :func:`configured_settings`; None when the file sets nothing there."""
    settings = configured_settings(config)
    return _digest(settings) if settings else None
