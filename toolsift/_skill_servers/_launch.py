"""Whether a server's program can be found, known without starting it."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from .._exceptions import SecretError
from .._secrets._expand import expand_variables
from ..config import ServerConfig, StdioServer

__all__ = ["launch_problem"]


def launch_problem(server: ServerConfig) -> str | None:
    """Why a stdio server's program cannot be found, known without starting it; None when it can (or is HTTP).

    Only ``${VAR}`` references are expanded (from the environment); ``secret://`` ones are left to the start.
    """
    if not isinstance(server, StdioServer):
        return None
    try:
        command = expand_variables(server.command, os.environ, server=server.name, field="command")
    except SecretError as exc:
        return str(exc)
    if "secret://" in command:
        return None
    if os.sep not in command:
        if shutil.which(command) is None:
            return f"server {server.name!r}: its command {command!r} is not found on PATH"
        return None
    if server.cwd is not None and "${" in server.cwd:
        return None  # where it runs is known only at the start
    # As at the start: a relative program is found from the folder the server runs in (toolsift's own by default).
    program = (server.base_dir / server.cwd if server.cwd is not None else Path.cwd()) / command
    if not (program.is_file() and os.access(program, os.X_OK)):
        return f"server {server.name!r}: its command {str(program)!r} is not an executable file"
    return None
