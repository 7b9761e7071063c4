"""The template budget set from toolsift.json's ``skills`` section, for every loader built from a config."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolsift import ConfigError, SkillRenderError
from toolsift.config import load_config
from toolsift.config._toolsift import SkillsConfig
from toolsift.serve._server import ToolsiftServer
from toolsift.skills import TemplateSandbox
from toolsift.skills._internal import shared_sandbox
from toolsift.toolbox import Toolbox

LIMITS = {"templateTimeout": 1.5, "templateMaxOutput": 10, "templateMaxMemory": 128 * 2**20, "templateWorkers": 1}


def project(folder: Path, **skills: Any) -> Path:
    """A config with one templated skill, ``echo``, whose output is as long as its argument."""
    skill = folder / "skills" / "echo" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\nname: echo\ndescription: Echo.\nvariables: [text]\n---\n{{ text }}\n")
    config = folder / "toolsift.json"
    config.write_text(json.dumps({"skills": {"paths": ["skills"], "userSkills": False, **skills}}, indent=2))
    return config


def test_template_limits_default_to_the_sandbox_defaults() -> None:
    settings, sandbox = SkillsConfig(), TemplateSandbox()
    assert (
        settings.template_timeout,
        settings.template_max_output,
        settings.template_max_memory,
        settings.template_workers,
    ) == (sandbox.timeout, sandbox.max_output, sandbox.max_memory, sandbox.workers)


def test_loaders_built_from_a_config_share_its_sandbox(tmp_path: Path) -> None:
    config = load_config(project(tmp_path, **LIMITS))
    expected = shared_sandbox(timeout=1.5, max_output=10, max_memory=128 * 2**20, workers=1)
    assert Toolbox(config).skills.sandbox is expected
    assert ToolsiftServer(config).skills.sandbox is expected
    assert Toolbox(load_config(project(tmp_path / "plain"))).skills.sandbox is shared_sandbox()


async def test_skills_render_within_the_configured_output_cap(tmp_path: Path) -> None:
    skill = Toolbox(load_config(project(tmp_path, templateMaxOutput=10))).skills.get("echo")
    assert await skill.render({"text": "short"}) == "short"
    with pytest.raises(SkillRenderError, match=r"Skill 'echo' .*failed to render: the output passed the 10-character"):
        await skill.render({"text": "much longer than ten characters"})


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("templateTimeout", 0, "greater than 0"),
        ("templateMaxOutput", 0, "greater than or equal to 1"),
        ("templateWorkers", "2", "expected a whole number, found the string '2'"),
    ],
)
def test_bad_template_limit_names_its_key(tmp_path: Path, key: str, value: object, expected: str) -> None:
    with pytest.raises(ConfigError, match=rf"toolsift\.json:\d+: .*skills\.{key}.*{expected}"):
        load_config(project(tmp_path, **{key: value}))
