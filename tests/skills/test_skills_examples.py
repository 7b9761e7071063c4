"""The example skills load, render, and scope the demo config's tools as their docs say."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from local_tools import RecordingTool

from toolsift.registry import ToolRegistry, TurnScope
from toolsift.skills import Skill, SkillsLoader, bind_arguments

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "skills"

ARGUMENTS = {
    "code-assist": "Refactor the auth module",
    "flow-memory": "remember that tokens expire after an hour",
    "flow-swarm": 'objective="build a REST API" topology=mesh',
    "orchestrate": "ship the 2.0 docs",
    "summarize": "README.md",
    "release-notes": "version=2.1.0 audience=developers",
    "quick-notes": "buy milk",
    "add-up": "2 3",
}

BUILTINS = ["read_file", "write_file", "list_directory"]
GENERAL = ["echo", "add", "get_image", "env_get", "fail"]
NOTES = ["note_add", "note_list", "note_get", "note_delete"]
FLOW_GROUPS = ["memory", "swarm", "agent", "task", "coordination", "workflow", "session", "hooks", "neural"]


@pytest.fixture(scope="module")
def examples() -> dict[str, Skill]:
    loaded = SkillsLoader(project=EXAMPLES).load()
    assert loaded.problems == ()
    return dict(loaded.skills)


@pytest.fixture(scope="module")
def registry() -> ToolRegistry:
    """The demo config's shape: builtin tools, a global server, an HTTP server, a big internal one."""
    registry = ToolRegistry()
    registry.register_many([RecordingTool(name) for name in BUILTINS])
    registry.replace_server("general", [RecordingTool(f"general__{t}") for t in GENERAL], internal=False)
    registry.replace_server("notes", [RecordingTool(f"notes__{t}") for t in NOTES], internal=False)
    flow = [
        RecordingTool(f"claude-flow__{group}_{verb}") for group in FLOW_GROUPS for verb in ("init", "status", "list")
    ]
    registry.replace_server("claude-flow", flow, internal=True)
    return registry


def visible(registry: ToolRegistry, skill: Skill) -> set[str]:
    scope = TurnScope(skill_allowed=skill.allowed_tools, skill_disallowed=skill.disallowed_tools, skill=skill.name)
    return {tool.spec.name for tool in registry.visible_tools(scope)}


def test_examples_all_load(examples: dict[str, Skill]) -> None:
    assert sorted(examples) == sorted(ARGUMENTS)


@pytest.mark.parametrize("name", sorted(ARGUMENTS))
async def test_example_renders_with_its_variables(examples: dict[str, Skill], name: str) -> None:
    skill = examples[name]
    rendered = await skill.render(bind_arguments(skill, ARGUMENTS[name]))
    assert "{{" not in rendered and "{%" not in rendered
    for variable, value in bind_arguments(skill, ARGUMENTS[name]).items():
        if variable != "arguments" or not skill.variables:
            assert value in rendered


def test_code_assist_sees_file_tools_and_general_but_not_env_get(
    registry: ToolRegistry, examples: dict[str, Skill]
) -> None:
    assert visible(registry, examples["code-assist"]) == set(BUILTINS) | {
        f"general__{t}" for t in GENERAL if t != "env_get"
    }


@pytest.mark.parametrize(
    ("name", "groups"),
    [
        ("flow-memory", ["memory"]),
        ("flow-swarm", ["swarm", "agent"]),
        ("orchestrate", ["task", "workflow", "coordination"]),
    ],
)
def test_flow_skills_surface_only_their_internal_groups(
    registry: ToolRegistry, examples: dict[str, Skill], name: str, groups: list[str]
) -> None:
    names = visible(registry, examples[name])
    assert names == {f"claude-flow__{g}_{v}" for g in groups for v in ("init", "status", "list")}


def test_quick_notes_claude_code_style_string_restricts_to_three_tools(
    registry: ToolRegistry, examples: dict[str, Skill]
) -> None:
    skill = examples["quick-notes"]
    assert skill.allowed_tools == ("notes__note_add", "notes__note_list", "notes__note_get")
    assert skill.argument_hint == "[note text, or a question about your notes]"
    assert visible(registry, skill) == {"notes__note_add", "notes__note_list", "notes__note_get"}


def test_example_variables_use_both_arities(examples: dict[str, Skill]) -> None:
    assert list(examples["summarize"].variables) == ["topic"]
    assert list(examples["release-notes"].variables) == ["version", "audience"]
    assert examples["release-notes"].variables["audience"].default == "users"
    assert examples["flow-memory"].variables == {}


def test_add_up_script_adds_every_number_and_names_a_word_that_is_not_one() -> None:
    script = EXAMPLES / "add-up" / "scripts" / "sum.py"
    added = subprocess.run([sys.executable, str(script), "2", "3", "4.5"], capture_output=True, text=True, check=True)
    assert added.stdout == "9.5\n"
    piped = subprocess.run([sys.executable, str(script)], input="1\n2\n", capture_output=True, text=True, check=True)
    assert piped.stdout == "3\n"
    refused = subprocess.run([sys.executable, str(script), "1", "two"], capture_output=True, text=True, check=False)
    assert refused.returncode == 1 and "item 2 is not a number: 'two'" in refused.stderr
