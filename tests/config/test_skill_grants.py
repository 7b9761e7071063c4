"""Approvals of served skills' allowed-tools, bound to the skill's files and digests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolsift import ConfigError
from toolsift.config import SkillGrants

URI = "skill://refunds/SKILL.md"
FILES = {URI: "sha256:" + "a" * 64, "skill://refunds/reference/policy.md": "sha256:" + "b" * 64}


def test_skill_grant_holds_only_for_the_approved_files_and_tools(tmp_path: Path) -> None:
    grants = SkillGrants(tmp_path / "grants.json")
    assert not grants.approved("billing", URI, FILES, ["read_file"])
    grants.approve("billing", URI, FILES, ["read_file"])
    assert grants.approved("billing", URI, FILES, ["read_file"])
    # Another server with a skill at the same URI is another skill.
    assert not grants.approved("other", URI, FILES, ["read_file"])
    rotated = {**FILES, "skill://refunds/reference/policy.md": "sha256:" + "c" * 64}
    added = {**FILES, "skill://refunds/scripts/run.py": "sha256:" + "d" * 64}
    removed = {URI: FILES[URI]}
    for changed in (rotated, added, removed):
        assert not grants.approved("billing", URI, changed, ["read_file"])
    assert not grants.approved("billing", URI, FILES, ["read_file", "exec_shell"])
    assert SkillGrants(tmp_path / "grants.json").approved("billing", URI, FILES, ["read_file"])  # kept on disk
    assert grants.revoke("billing", URI)
    assert not grants.revoke("billing", URI)
    assert not grants.approved("billing", URI, FILES, ["read_file"])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "cannot read the skill grants: Expecting property name"),
        (json.dumps({"version": 9, "grants": []}), "expected version 1 with a 'grants' list"),
        (json.dumps({"version": 1}), "expected version 1 with a 'grants' list"),
    ],
)
def test_skill_grants_refuse_a_store_they_cannot_read(tmp_path: Path, text: str, message: str) -> None:
    store = tmp_path / "grants.json"
    store.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match=message) as caught:
        SkillGrants(store).approved("billing", URI, FILES, [])
    assert caught.value.path == store


def test_skill_grants_skip_records_they_cannot_read(tmp_path: Path) -> None:
    store = tmp_path / "grants.json"
    store.write_text(json.dumps({"version": 1, "grants": [{"server": "billing"}, 3]}), encoding="utf-8")
    grants = SkillGrants(store)
    assert not grants.approved("billing", URI, FILES, [])
    grants.approve("billing", URI, FILES, [])
    assert [record["server"] for record in json.loads(store.read_text())["grants"]] == ["billing"]


def test_skill_grant_says_what_changed_since_it_was_given(tmp_path: Path) -> None:
    grants = SkillGrants(tmp_path / "grants.json")
    grants.approve("billing", URI, FILES, ["read_file"])
    grant = grants.grant("billing", URI)
    assert grant is not None and grants.recorded() == [grant]
    assert grant.changes(FILES, ["read_file"]) == []
    now = {
        URI: "sha256:" + "e" * 64,  # rotated
        "skill://refunds/scripts/run.py": "sha256:" + "d" * 64,  # added; policy.md removed
    }
    assert grant.changes(now, ["read_file", "exec_shell"]) == [
        f"changed: {URI}",
        "removed: skill://refunds/reference/policy.md",
        "added: skill://refunds/scripts/run.py",
        "allowed-tools: read_file -> read_file, exec_shell",
    ]


def test_skill_grants_stamp_changes_with_every_write(tmp_path: Path) -> None:
    grants = SkillGrants(tmp_path / "grants.json")
    assert grants.stamp() is None
    grants.approve("billing", URI, FILES, ["read_file"])
    first = grants.stamp()
    grants.approve("billing", URI, FILES, ["read_file", "list_directory"])
    assert first is not None and grants.stamp() not in (None, first)


def test_skill_grants_name_the_store_they_cannot_write() -> None:
    # Nothing can be created under /proc, whoever runs the test (root included); reading finds no store.
    grants = SkillGrants(Path("/proc/self/no-config/skill-grants.json"))
    with pytest.raises(ConfigError, match=r"skill-grants\.json: cannot save the skill grants: "):
        grants.approve("billing", URI, FILES, ["read_file"])
