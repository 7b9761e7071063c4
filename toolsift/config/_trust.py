"""Consent before a project's config starts programs or widens what a model may do, remembered per project.

A ``toolsift.json`` or ``.mcp.json`` found in the current folder came with the
project (a cloned repository, a downloaded archive), not from the person
running toolsift: its servers are programs to start and URLs to send headers
to, and its other settings (agents, ``serve``, workspace, tool rules) decide
what agents and served models may do. Before the first use, the person is
asked, once; the answer is remembered for the path the file was found at,
with a fingerprint of what each server launches where it runs and of the
other settings (see ``_fingerprint``). An edit that adds or changes a server's
launch, or changes those settings, is asked about again, and so is the same
file used from another folder through a link. Only fingerprints are kept,
never values, since ``env`` and ``headers`` may hold secrets.

While toolsift runs, :class:`TrustedLaunches` holds the same rule for every
start: an edited file (hot reload), a restart or a lazy server's first use
may start only launches the consent covers.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, final

from .._exceptions import ConfigError
from .._files import write_atomically
from ._fingerprint import configured_settings, launch_fingerprint, launch_fingerprints, settings_fingerprint
from ._server import ServerConfig
from ._toolsift import ToolsiftConfig

__all__ = ["ProjectTrust", "Standing", "TrustCheck", "TrustedLaunches"]

Standing = Literal["trusted", "new", "changed"]
"""Where a launch stands with a file's consent: covered, never trusted for the file, or trusted with another launch."""

# Version 1 fingerprinted launches as written, wherever the file was used from, and keyed records by the
# file's real path: such a record cannot vouch for anything now, so it is ignored (asked again) and dropped
# at the next write.
_STORE_VERSION = 2


@dataclass(frozen=True)
class TrustCheck:
    """What a config would launch or set that its project's remembered consent does not cover.

    Attributes:
        path: The config file, as it was found.
        new: Servers never trusted for this file.
        changed: Servers trusted before whose launch has changed since.
        settings: The settings outside the servers (``agents``, ``serve``, ...)
            when they are not trusted as they stand; empty when they are.
    """

    path: Path
    new: tuple[str, ...]
    changed: tuple[str, ...]
    settings: tuple[str, ...] = ()

    @property
    def trusted(self) -> bool:
        """True when nothing it launches or sets is new or changed."""
        return not self.new and not self.changed and not self.settings

    def refusal(self, server: str) -> str:
        """Why ``server`` of this check may not start at a reload, and how to trust it."""
        return f"{_not_covered(server, new=server in self.new)}, then save the file again"


@dataclass(frozen=True)
class _Record:
    servers: Mapping[str, str]
    settings: str | None


class ProjectTrust:
    """The remembered consents: one JSON file mapping config files to what was trusted for them.

    A record is keyed by the absolute path the file was found at, links not
    followed: ``B/toolsift.json -> ../A/toolsift.json`` is B's file, trusted
    apart from A's.

    Args:
        store: The file (``trusted-projects.json`` beside the user config by default).
    """

    def __init__(self, store: Path) -> None:
        self.store = store

    def _read(self) -> dict[str, _Record]:
        try:
            data = json.loads(self.store.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            raise ConfigError(
                f"cannot read the trusted projects: {exc}; fix or delete the file", path=self.store
            ) from exc
        projects = data.get("projects") if isinstance(data, dict) else None
        if not isinstance(projects, dict):
            raise ConfigError(
                "cannot read the trusted projects: expected an object with 'projects'; fix or delete the file",
                path=self.store,
            )
        version = data.get("version", 1)
        if version != _STORE_VERSION:
            if isinstance(version, int) and version < _STORE_VERSION:
                return {}  # older consents are asked again
            raise ConfigError(
                f"cannot read the trusted projects: version {version!r} is not one this toolsift "
                f"knows ({_STORE_VERSION}); fix or delete the file",
                path=self.store,
            )
        return {key: record for key, value in projects.items() if (record := _parse(value)) is not None}

    def _write(self, projects: Mapping[str, _Record]) -> None:
        self.store.parent.mkdir(parents=True, exist_ok=True)
        data = {key: {"servers": dict(record.servers), "settings": record.settings} for key, record in projects.items()}
        text = json.dumps({"version": _STORE_VERSION, "projects": data}, indent=2, sort_keys=True) + "\n"
        write_atomically(self.store, text, what="the trusted projects store")

    @staticmethod
    def _key(path: Path) -> str:
        return os.path.abspath(path)

    def _record(self, path: Path) -> _Record:
        return self._read().get(self._key(path), _Record({}, None))

    def trusted_launches(self, path: Path) -> Mapping[str, str]:
        """The launch fingerprints trusted for the file at ``path``, by server name."""
        return self._record(path).servers

    def check(self, config: ToolsiftConfig, path: Path) -> TrustCheck:
        """Compare what ``config`` (found at ``path``) launches and sets with what was trusted for ``path``.

        It reads the file system (see :func:`launch_fingerprints`): from async
        code, call it in a worker thread.
        """
        record = self._record(path)
        settings = settings_fingerprint(config)
        untrusted = settings is not None and settings != record.settings
        return _compare(
            path,
            launch_fingerprints(config),
            record.servers,
            {},
            tuple(configured_settings(config)) if untrusted else (),
        )

    def remember(self, config: ToolsiftConfig, path: Path) -> None:
        """Trust what ``config`` launches and sets now, for ``path``.

        Servers trusted before and absent from ``config`` stay trusted with
        the launch they had, so trusting part of a file never forgets the rest.
        """
        projects = self._read()
        key = self._key(path)
        before = projects.get(key, _Record({}, None))
        projects[key] = _Record({**before.servers, **launch_fingerprints(config)}, settings_fingerprint(config))
        self._write(projects)

    def remember_launch(self, path: Path, server: ServerConfig) -> None:
        """Trust ``server``'s launch as it is now, for ``path``, and nothing else of the file.

        For an entry the person wrote themselves (``toolsift mcp add``): it
        needs no question, while the file's other servers and settings, which
        they did not review, keep what was trusted for them.
        """
        projects = self._read()
        key = self._key(path)
        before = projects.get(key, _Record({}, None))
        projects[key] = _Record({**before.servers, server.name: launch_fingerprint(server)}, before.settings)
        self._write(projects)

    def remember_settings(self, path: Path, config: ToolsiftConfig) -> None:
        """Trust ``config``'s settings outside its servers as they are now, for ``path``; its servers keep theirs.

        For a setting the person changed themselves (``toolsift builtins on``) in
        settings they had trusted: the file's servers stay as they were trusted.
        """
        projects = self._read()
        key = self._key(path)
        before = projects.get(key, _Record({}, None))
        projects[key] = _Record(before.servers, settings_fingerprint(config))
        self._write(projects)

    def revoke(self, path: Path) -> bool:
        """Forget the consent for ``path``; False when there was none."""
        projects = self._read()
        if projects.pop(self._key(path), None) is None:
            return False
        self._write(projects)
        return True

    def launches(self, config: ToolsiftConfig, path: Path) -> TrustedLaunches:
        """What the file at ``path`` may launch from now on, ``config`` being what was admitted at start."""
        return TrustedLaunches(self, path, launch_fingerprints(config))


@final
class TrustedLaunches:
    """What one project config file may launch while toolsift runs it: at hot reload and at every connect.

    A launch may start when the project's remembered consent covers it (read
    again at each check, so ``toolsift trust`` in the meantime counts) or when
    it is what the file launched when it was admitted at start (which
    ``--trust-project`` covers for that run).

    Args:
        store: The remembered consents.
        path: The config file, as it was found.
        accepted: The launch fingerprints admitted at start, by server name.
    """

    def __init__(self, store: ProjectTrust, path: Path, accepted: Mapping[str, str]) -> None:
        self.store = store
        self.path = path
        self.accepted = dict(accepted)

    def __repr__(self) -> str:
        return f"TrustedLaunches(path={str(self.path)!r}, accepted={sorted(self.accepted)!r})"

    def refusal(self, server: ServerConfig) -> str | None:
        """Why ``server`` may not be spawned now, or None when its launch is covered.

        Checked before every connect (a restart, a lazy server's first use),
        since what a launch resolves to (its env file, where its paths point)
        may change while the file does not. It reads files: call it in a
        worker thread.
        """
        standing = self.standing(server)
        return None if standing == "trusted" else _not_covered(server.name, new=standing == "new")

    def standing(self, server: ServerConfig) -> Standing:
        """Whether ``server``'s launch is covered now, new to this file's consent, or changed since it was trusted.

        It reads files: call it in a worker thread.
        """
        print_ = launch_fingerprint(server)
        remembered = self.store.trusted_launches(self.path)
        if print_ in (remembered.get(server.name), self.accepted.get(server.name)):
            return "trusted"
        return "changed" if server.name in remembered or server.name in self.accepted else "new"

    def check(self, config: ToolsiftConfig) -> TrustCheck:
        """Which of ``config``'s launches neither the consent nor the start covers.

        Settings outside the servers are not part of it: a reload does not
        apply them. It reads the file system: call it in a worker thread.
        """
        remembered = self.store.trusted_launches(self.path)
        return _compare(self.path, launch_fingerprints(config), remembered, self.accepted, ())


def _not_covered(server: str, *, new: bool) -> str:
    what = "is new" if new else "launches something other than what was trusted"
    return (
        f"server {server!r} {what}, and the trust given to this project's config does not cover it; "
        f"run 'toolsift trust' in {Path.cwd()} to trust it"
    )


def _compare(
    path: Path,
    now: Mapping[str, str],
    remembered: Mapping[str, str],
    accepted: Mapping[str, str],
    settings: tuple[str, ...],
) -> TrustCheck:
    known = {**remembered, **accepted}.keys()
    new = tuple(name for name in now if name not in known)
    changed = tuple(
        name
        for name, print_ in now.items()
        if name in known and print_ not in (remembered.get(name), accepted.get(name))
    )
    return TrustCheck(path, new, changed, settings)


def _parse(value: Any) -> _Record | None:
    """A record of the store, or None for one this version cannot read (it is asked again)."""
    if not isinstance(value, dict):
        return None
    servers, settings = value.get("servers"), value.get("settings")
    if not isinstance(servers, dict) or not (settings is None or isinstance(settings, str)):
        return None
    return _Record({name: print_ for name, print_ in servers.items() if isinstance(print_, str)}, settings)
