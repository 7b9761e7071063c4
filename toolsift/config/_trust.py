"""Consent before a project's config starts programs, remembered per project.

A ``toolsift.json`` or ``.mcp.json`` found in the current folder came with the
project (a cloned repository, a downloaded archive), not from the person
running toolsift, and its servers are programs to start and URLs to send
headers to. Before the first start, the person is asked, once; the answer is
remembered for that file together with a fingerprint of what it launches, so
an edit that adds or changes a server (its command, arguments, folder,
environment, URL or headers) is asked about again. Only fingerprints are
kept, never the values, since ``env`` and ``headers`` may hold secrets.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._exceptions import ConfigError
from ._toolsift import ToolsiftConfig

__all__ = ["ProjectTrust", "TrustCheck", "launch_fingerprints"]

_STORE_VERSION = 1
# What decides which program runs, or where requests and their headers go.
_LAUNCH_FIELDS = ("transport", "command", "args", "cwd", "env", "env_file", "url", "headers")


def launch_fingerprints(config: ToolsiftConfig) -> dict[str, str]:
    """A fingerprint of what each enabled server launches, by server name."""
    fingerprints = {}
    for name, server in sorted(config.servers.items()):
        if not server.enabled:
            continue
        launch = server.model_dump(mode="json", include=set(_LAUNCH_FIELDS))
        text = json.dumps(launch, sort_keys=True, ensure_ascii=False)
        fingerprints[name] = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return fingerprints


@dataclass(frozen=True)
class TrustCheck:
    """What a config would launch that its project's remembered consent does not cover.

    Attributes:
        path: The config file.
        new: Servers never trusted for this file.
        changed: Servers trusted before whose launch has changed since.
    """

    path: Path
    new: tuple[str, ...]
    changed: tuple[str, ...]

    @property
    def trusted(self) -> bool:
        """True when nothing it launches is new or changed."""
        return not self.new and not self.changed


class ProjectTrust:
    """The remembered consents: one JSON file mapping config files to the launches trusted for them.

    Args:
        store: The file (``trusted-projects.json`` beside the user config by default).
    """

    def __init__(self, store: Path) -> None:
        self.store = store

    def _read(self) -> dict[str, Mapping[str, str]]:
        try:
            data = json.loads(self.store.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            raise ConfigError(f"cannot read the trusted projects: {exc}; fix or delete the file",
                              path=self.store) from exc
        projects = data.get("projects") if isinstance(data, dict) else None
        if not isinstance(projects, dict):
            raise ConfigError("cannot read the trusted projects: expected an object with 'projects'; "
                              "fix or delete the file", path=self.store)
        return {key: value for key, value in projects.items() if isinstance(value, dict)}

    def _write(self, projects: Mapping[str, Any]) -> None:
        self.store.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps({"version": _STORE_VERSION, "projects": projects}, indent=2, sort_keys=True) + "\n"
        # A crash mid-write must not lose every consent: write beside it, then swap.
        handle, temporary = tempfile.mkstemp(dir=self.store.parent, prefix=".trusted-", suffix=".json")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as file:
                file.write(text)
            os.replace(temporary, self.store)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise

    @staticmethod
    def _key(path: Path) -> str:
        return str(path.resolve())

    def check(self, config: ToolsiftConfig, path: Path) -> TrustCheck:
        """Compare what ``config`` (loaded from ``path``) launches with what was trusted for ``path``."""
        remembered = self._read().get(self._key(path), {})
        now = launch_fingerprints(config)
        new = tuple(name for name in now if name not in remembered)
        changed = tuple(name for name, print_ in now.items() if name in remembered and remembered[name] != print_)
        return TrustCheck(path, new, changed)

    def remember(self, config: ToolsiftConfig, path: Path) -> None:
        """Trust what ``config`` launches now, for ``path``."""
        projects = dict(self._read())
        projects[self._key(path)] = launch_fingerprints(config)
        self._write(projects)

    def revoke(self, path: Path) -> bool:
        """Forget the consent for ``path``; False when there was none."""
        projects = dict(self._read())
        if projects.pop(self._key(path), None) is None:
            return False
        self._write(projects)
        return True
