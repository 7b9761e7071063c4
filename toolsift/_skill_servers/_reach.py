"""Where a skill's or a plugin's server reaches when it starts, and whether the person's trust covers all of it.

A server file found in a project may be a link to a file of the person's own
(an installed plugin's ``.mcp.json``), and a plugin's manifest may name such a
file through ``..`` or by an absolute path. The file is then theirs, but its
entry resolves where it was found: ``${CLAUDE_PLUGIN_ROOT}`` is the project's
folder, a relative ``cwd`` or ``envFile`` is taken from the project's folder,
and a relative argument names a file in the folder the server starts in. Who
wrote the file says nothing of what it runs there.

So each server is judged on its own, on every path its start depends on, each
by its real path (:func:`launch_paths`): it runs unasked only when all of them
lie in folders the person trusts (:func:`untrusted_path`); anything else needs
a consent recorded for its file that covers its launch (:func:`trust_refusal`).
A path written absolute in the file (not through ``${CLAUDE_PLUGIN_ROOT}``)
leads to the same place wherever the file is found: it is the file's own
choice, judged with the file.
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import final

from dotenv import dotenv_values

from .._exceptions import ToolsiftError
from .._secrets._expand import expand_variables
from .._secrets._resolvers import is_secret_reference, parse_secret_reference
from ..config import ProjectTrust, ServerConfig, StdioServer, TrustedLaunches
from ..config._internal import absolute_path, expanded_now, found_in, launch_folder
from ._server_file import PLUGIN_ROOT, Declared

__all__ = ["LaunchPath", "launch_paths", "trust_refusal", "untrusted_path"]


@final
@dataclass(frozen=True)
class LaunchPath:
    """One path a server's start depends on.

    Attributes:
        what: What names it, as a noun phrase (``its argument 'server.py'``).
        real: Where it leads, links and ``..`` resolved.
        shown: Whether a message may show ``real``: not for an environment value, which may be a secret.
    """

    what: str
    real: Path
    shown: bool = True

    def describe(self) -> str:
        """``what`` and where it leads, for a message that has just said "outside your own folders"."""
        return f"{self.what} is {self.real}" if self.shown else f"{self.what} names a path there"


def launch_paths(declared: Declared, *, cwd: Path) -> Iterator[LaunchPath]:
    """Every path the start of ``declared`` depends on, except those its file fixes by itself; the file first.

    The file that declares it; ``${CLAUDE_PLUGIN_ROOT}`` where its entry uses it; a relative ``cwd``,
    ``envFile`` or ``secret://file/`` path (taken from the file's folder as found); a relative program,
    argument (or ``--flag=value`` value) and ``env`` value (each piece of a ``:`` list, the env file's too)
    that names something in the folder the server starts in. It reads the file system: call it in a
    worker thread from async code.

    Args:
        declared: The server, with the file that declares it and the root its entry uses.
        cwd: The folder a server without ``cwd`` starts in (toolsift's own).
    """
    server = declared.server
    yield LaunchPath("its file", Path(os.path.realpath(declared.file)))
    if declared.root is not None:
        yield LaunchPath(PLUGIN_ROOT, Path(os.path.realpath(declared.root)))
    yield from _from_file_folder(server)
    if isinstance(server, StdioServer):
        folder = launch_folder(server, cwd)
        if folder is not None:  # else its cwd is known only at the start, and the start resolves nothing else
            yield from _from_launch_folder(server, folder)


def untrusted_path(declared: Declared, trusted: Iterable[Path], *, cwd: Path) -> LaunchPath | None:
    """The first path the start of ``declared`` depends on outside the folders ``trusted``; None when all are inside.

    It reads the file system: call it in a worker thread from async code.
    """
    folders = [Path(os.path.realpath(folder)) for folder in trusted]
    return next(
        (path for path in launch_paths(declared, cwd=cwd) if not any(path.real.is_relative_to(f) for f in folders)),
        None,
    )


def trust_refusal(declared: Declared, store: ProjectTrust, trusted: Iterable[Path], *, cwd: Path) -> str | None:
    """Why ``declared`` may not start under a project's consent, or None when it may.

    It may when every path its start depends on lies in ``trusted`` (the person's own folders), or
    when the consent recorded for its file (``toolsift trust``) covers its launch as it is now.
    It reads files: call it in a worker thread from async code.
    """
    outside = untrusted_path(declared, trusted, cwd=cwd)
    if outside is None:
        return None
    standing = TrustedLaunches(store, declared.file, {}).standing(declared.server)
    if standing == "trusted":
        return None
    covers = "has no record of it" if standing == "new" else "was given to another launch of it"
    return (
        f"server {declared.server.name!r} of {declared.file} reaches outside your own folders "
        f"({outside.describe()}), and the trust given to this project {covers}; "
        f"run 'toolsift trust' in {cwd} to trust it"
    )


def _from_file_folder(server: ServerConfig) -> Iterator[LaunchPath]:
    """The relative paths the start takes from the folder of the file, as found: ``cwd``, ``envFile``, secret files."""
    written = [(f"its secret file {path!r}", path) for path in _secret_files(server.model_dump(mode="json"))]
    if isinstance(server, StdioServer):
        for key, raw in (("cwd", server.cwd), ("envFile", server.env_file)):
            plain = None if raw is None else expanded_now(raw)
            if plain is not None:
                written.append((f"its {key} {raw!r}", plain))
    for what, plain in written:
        if plain and not Path(plain).expanduser().is_absolute():
            yield LaunchPath(what, Path(os.path.realpath(server.base_dir / plain)))


def _secret_files(value: object) -> Iterator[str]:
    """The path of every ``secret://file/PATH`` reference among the settings ``value`` holds, as written."""
    if isinstance(value, dict | list):
        for item in value.values() if isinstance(value, dict) else value:
            yield from _secret_files(item)
    elif isinstance(value, str) and is_secret_reference(value):
        try:
            reference = parse_secret_reference(expand_variables(value, os.environ), base_dir=Path())
        except (ToolsiftError, ValueError):
            return  # it reads no file: the start says why
        if reference.scheme == "file":
            yield reference.path


def _from_launch_folder(server: StdioServer, folder: Path) -> Iterator[LaunchPath]:
    """The relative program, arguments and environment paths, as they resolve in the folder the server starts in."""
    command = expanded_now(server.command)
    if command is not None and os.sep in command and not Path(command).expanduser().is_absolute():
        yield LaunchPath(f"its program {server.command!r}", Path(os.path.realpath(folder / command)))
    for arg in server.args:
        plain = expanded_now(arg) or ""
        # name=value, --flag=value: the value may be a path too (--config=./x.json, PYTHONPATH=lib).
        for value in dict.fromkeys((plain, plain.partition("=")[2])):
            real = found_in(value, folder)
            if real is not None:
                yield LaunchPath(f"its argument {arg!r}", real)
    for what, value in _environment(server):
        for piece in value.split(os.pathsep):
            real = found_in(piece, folder)
            if real is not None:
                yield LaunchPath(what, real, shown=False)


def _environment(server: StdioServer) -> Iterator[tuple[str, str]]:
    """What the child's environment gets from its ``env`` and its env file (``env`` wins), with what names each."""
    yield from ((f"its env variable {key!r}", expanded_now(raw) or "") for key, raw in server.env.items())
    plain = None if server.env_file is None else expanded_now(server.env_file)
    if plain is None:
        return
    try:
        text = absolute_path(plain, server.base_dir).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError):
        return  # the start refuses a file it cannot read
    # As the start reads it: no interpolation, every value taken as written.
    for key, value in dotenv_values(stream=io.StringIO(text), interpolate=False).items():
        if value is not None and key not in server.env:
            yield f"the variable {key!r} of its envFile", value
