"""``toolsift skills new``: a skeleton that ``/use NAME`` activates as it is, with its tools and description."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_cli import run, write_config

from toolsift.skills import SkillsLoader
from toolsift.toolbox import Toolbox


@pytest.mark.usefixtures("examples_in_process")
async def test_a_new_skill_is_used_bare_or_with_text(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    config = write_config(tmp_path, skills={"paths": [str(tmp_path / "skills")], "userSkills": False})
    argv = ["skills", "new", "sums", "--tools", "general__add general__echo", "--description", "Adds: numbers, #tags"]
    code, out, _ = run(capsys, "-c", str(config), *argv)
    assert code == 0 and "sums" in out
    skill = SkillsLoader(extra=[tmp_path / "skills"]).get("sums")
    assert skill.allowed_tools == ("general__add", "general__echo") and skill.description == "Adds: numbers, #tags"
    async with Toolbox.from_config(config) as box:
        chat = box.conversation()
        bare = await chat.handle_command("/use sums")
        assert bare is not None and bare.ok and "2 tool(s) in scope" in bare.text
        assert "You are helping with" not in chat.instructions_now()
        given = await chat.handle_command("/use sums add the invoices")
        assert given is not None and given.ok and "You are helping with: add the invoices" in chat.instructions_now()


def test_a_new_skill_with_a_bad_pattern_is_refused_and_not_written(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    config = write_config(tmp_path)
    code, _, err = run(capsys, "-c", str(config), "skills", "new", "odd", "--dir", str(tmp_path), "--tools", "a[b")
    assert code != 0 and "a[b" in err and not (tmp_path / "odd").exists()
