"""Fingerprints of what a project's config launches where it runs, and the store that remembers them."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from toolsift import ConfigError
from toolsift.config import HttpServer, ProjectTrust, StdioServer, load_config
from toolsift.config._fingerprint import launch_fingerprint, launch_fingerprints
from toolsift.config._internal import TrustCheck


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project folder, the current one, as the CLI would run in it."""
    folder = tmp_path / "project"
    folder.mkdir()
    monkeypatch.chdir(folder)
    return folder


def write(folder: Path, servers: dict[str, Any], **extra: Any) -> Path:
    path = folder / "toolsift.json"
    path.write_text(json.dumps({"tools": {"mcpServers": servers}, **extra}), encoding="utf-8")
    return path


def check(store: ProjectTrust, path: Path) -> TrustCheck:
    return store.check(load_config(path), path)


SERVER = {"command": sys.executable, "args": ["server.py"], "envFile": ".env"}


def test_env_file_contents_are_part_of_the_launch(project: Path, tmp_path: Path) -> None:
    (project / ".env").write_text("API_URL=https://example.test\n")
    path = write(project, {"s": SERVER})
    store = ProjectTrust(tmp_path / "trusted.json")
    store.remember(load_config(path), path)
    assert check(store, path).trusted
    assert "example.test" not in store.store.read_text()  # a digest, never the values
    with (project / ".env").open("a") as env:
        env.write("PYTHONPATH=/tmp/injected\n")
    assert check(store, path) == TrustCheck(path, (), ("s",))
    (project / ".env").unlink()  # a missing file is a launch of its own
    missing = check(store, path)
    store.remember(load_config(path), path)
    assert missing.changed == ("s",) and check(store, path).trusted
    (project / ".env").write_text("")
    assert check(store, path).changed == ("s",)


def test_fingerprints_stay_those_remembered_before_servers_had_a_type_per_transport() -> None:
    # Consents already in users' stores were given to these digests: a changed digest would ask them again.
    stdio = StdioServer(command="uvx", args=("mcp-server-git",), env={"A": "1"}, type="stdio").with_name("git")
    http = HttpServer(url="https://h.example/mcp", headers={"X-Key": "${KEY}"}, type="sse").with_name("notes")
    root = Path("/")
    assert launch_fingerprint(stdio, cwd=root) == "ee3dcf2fbfe025bf79c707213a46daef8aa399fb9d2a118a6f7151bbf4f881e5"
    assert launch_fingerprint(http, cwd=root) == "932e84b6cb252973d7edf77fd6a9533674485fb133d4bd1ce365bedb75d7935c"


def test_a_project_that_lets_changed_tools_through_is_asked_about_again(project: Path, tmp_path: Path) -> None:
    path = write(project, {"s": {**SERVER, "pinTools": "hold"}})
    store = ProjectTrust(tmp_path / "trusted.json")
    store.remember(load_config(path), path)
    for setting in ("warn", "accept"):
        write(project, {"s": {**SERVER, "pinTools": setting}})
        assert check(store, path).changed == ("s",)
    write(project, {"s": SERVER})  # the default is what was trusted
    assert check(store, path).trusted


def test_the_same_file_used_from_another_folder_launches_something_else(project: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    config = load_config(write(project, {"s": SERVER, "web": {"url": "https://example.test/mcp"}}))
    here, there = launch_fingerprints(config), launch_fingerprints(config, cwd=other)
    assert here["s"] != there["s"]  # server.py and the folder it starts in are another folder's
    assert here["web"] == there["web"]  # a URL goes to the same place wherever it is used from


def test_a_relative_program_is_fingerprinted_by_its_real_target(project: Path) -> None:
    (project / "a.py").write_text("")
    (project / "b.py").write_text("")
    (project / "server.py").symlink_to("a.py")
    path = write(
        project, {"s": {"command": sys.executable, "args": ["server.py"]}, "t": {"command": "./run.sh", "cwd": "sub"}}
    )
    (project / "sub").mkdir()
    (project / "sub" / "run.sh").write_text("")
    before = launch_fingerprints(load_config(path))
    (project / "server.py").unlink()
    (project / "server.py").symlink_to("b.py")
    (project / "sub" / "run.sh").unlink()
    (project / "sub" / "run.sh").symlink_to(project / "a.py")
    after = launch_fingerprints(load_config(path))
    assert before["s"] != after["s"] and before["t"] != after["t"]


def test_a_config_found_through_a_link_is_trusted_apart_from_its_target(project: Path, tmp_path: Path) -> None:
    store = ProjectTrust(tmp_path / "trusted.json")
    path = write(project, {"s": SERVER})
    store.remember(load_config(path), path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    link = elsewhere / "toolsift.json"
    link.symlink_to(path)
    assert not store.check(load_config(link), link).trusted
    assert check(store, path).trusted


def test_settings_outside_the_servers_need_trust_and_toolsifts_defaults_do_not(project: Path, tmp_path: Path) -> None:
    store = ProjectTrust(tmp_path / "trusted.json")
    path = write(project, {})
    assert check(store, path).trusted  # a file that sets nothing launches and widens nothing
    profile = {"default": {"permissions": {"level": "execute"}}}
    path = write(project, {}, agents=profile, serve={"commands": {"allowedPrograms": ["python3"]}})
    assert check(store, path) == TrustCheck(path, (), (), ("agents", "serve"))
    store.remember(load_config(path), path)
    assert check(store, path).trusted
    path = write(project, {}, agents=profile, serve={"commands": {"allowedPrograms": ["python3", "sh"]}})
    assert check(store, path).settings == ("agents", "serve")


def test_trusting_part_of_a_file_keeps_what_was_trusted_before(project: Path, tmp_path: Path) -> None:
    store = ProjectTrust(tmp_path / "trusted.json")
    path = write(project, {"a": SERVER, "b": {**SERVER, "args": ["other.py"]}})
    store.remember(load_config(path), path)
    store.remember(load_config(write(project, {"a": SERVER})), path)
    assert check(store, write(project, {"a": SERVER, "b": {**SERVER, "args": ["other.py"]}})).trusted


def test_trusted_launches_cover_the_consent_and_what_was_admitted_at_start(project: Path, tmp_path: Path) -> None:
    store = ProjectTrust(tmp_path / "trusted.json")
    path = write(project, {"a": SERVER})
    launches = store.launches(load_config(path), path)  # admitted for this run only (--trust-project)
    assert launches.check(load_config(path)).trusted
    added = load_config(write(project, {"a": SERVER, "b": {**SERVER, "args": ["b.py"]}}))
    moved = load_config(write(project, {"a": {**SERVER, "args": ["elsewhere.py"]}}))
    assert launches.check(added) == TrustCheck(path, ("b",), ())
    assert launches.check(moved) == TrustCheck(path, (), ("a",))
    store.remember(added, path)  # 'toolsift trust' while it runs: read again at the next check
    assert launches.check(added).trusted
    refusal = launches.check(moved).refusal("a")
    assert refusal == (
        "server 'a' launches something other than what was trusted, and the trust given to this "
        f"project's config does not cover it; run 'toolsift trust' in {project} to trust it, "
        "then save the file again"
    )


def test_records_of_an_older_store_are_asked_again_and_replaced(project: Path, tmp_path: Path) -> None:
    path = write(project, {"s": SERVER})
    store = ProjectTrust(tmp_path / "trusted.json")
    old = {"version": 1, "projects": {os.path.realpath(path): {"s": "0" * 64}}}
    store.store.write_text(json.dumps(old))
    assert check(store, path) == TrustCheck(path, ("s",), ())  # never trusted as it is now: new, not changed
    store.remember(load_config(path), path)
    data = json.loads(store.store.read_text())
    assert data["version"] == 2 and list(data["projects"]) == [str(path)]
    assert set(data["projects"][str(path)]) == {"servers", "settings"}


@pytest.mark.parametrize("text", ['{"version": 3, "projects": {}}', '{"version": "2", "projects": {}}'])
def test_a_store_of_an_unknown_version_is_named_and_left_alone(project: Path, tmp_path: Path, text: str) -> None:
    path = write(project, {"s": SERVER})
    store = ProjectTrust(tmp_path / "trusted.json")
    store.store.write_text(text)
    with pytest.raises(
        ConfigError,
        match=r"trusted.json: cannot read the trusted projects: version .* is not "
        r"one this toolsift knows \(2\); fix or delete the file",
    ):
        check(store, path)
    assert store.store.read_text() == text
