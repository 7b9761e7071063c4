"""Rendering templated skill bodies: variables, defaults, missing names and the sandbox."""

from __future__ import annotations

import pytest

from toolsift import SkillRenderError
from toolsift.skills import Skill
from toolsift.skills._internal import SkillVariable, parse_skill_text


def make(body: str, *variables: SkillVariable | str) -> Skill:
    return Skill(name="s", description="S.", body=body, variables=list(variables), templating="jinja")


async def test_render_skill_substitutes_variables_and_arguments() -> None:
    skill = make("About {{ topic }} ({{ arguments }})", "topic")
    assert await skill.render({"topic": "auth", "arguments": "auth"}) == "About auth (auth)"
    assert await skill.render({"topic": "auth"}) == "About auth ()"


async def test_render_skill_fills_defaults_and_empty_optionals() -> None:
    skill = make(
        "{{ audience }}|{{ note }}|{% if note %}never{% endif %}",
        SkillVariable(name="audience", default="users"),
        SkillVariable(name="note", required=False),
    )
    assert await skill.render() == "users||"
    assert await skill.render({"audience": "admins", "note": "n"}) == "admins|n|never"


async def test_render_skill_block_tags_leave_no_blank_lines() -> None:
    skill = make("Start\n{% if topic %}\nTopic: {{ topic }}\n{% endif %}\nEnd", "topic")
    assert await skill.render({"topic": "x"}) == "Start\nTopic: x\nEnd"


async def test_render_skill_missing_required_variable_is_named() -> None:
    skill = make("{{ version }} for {{ audience }}", "version", "audience")
    with pytest.raises(
        SkillRenderError, match=r"Skill 's' failed to render: missing required variable\(s\) 'version', 'audience'"
    ):
        await skill.render()


async def test_render_skill_unknown_variable_is_refused() -> None:
    with pytest.raises(SkillRenderError, match=r"unknown variable\(s\) 'topc'; declared: 'topic'"):
        await make("{{ topic }}", "topic").render({"topic": "a", "topc": "b"})
    with pytest.raises(SkillRenderError, match=r"unknown variable\(s\) 'x'; declared: none"):
        await make("plain").render({"x": "1"})


async def test_render_skill_names_the_path_of_a_parsed_skill() -> None:
    skill = parse_skill_text(
        "---\nname: s\ndescription: S.\nvariables: [topic]\n---\n{{ topic }}\n", "/skills/s/SKILL.md"
    )
    with pytest.raises(SkillRenderError, match=r"Skill 's' \(/skills/s/SKILL\.md\) failed to render: missing"):
        await skill.render()


async def test_render_skill_undefined_attribute_is_an_error() -> None:
    with pytest.raises(SkillRenderError, match=r"undefined value: 'str object' has no attribute 'nope'"):
        await make("{{ topic.nope }}", "topic").render({"topic": "x"})


@pytest.mark.parametrize(
    ("body", "refused"),
    [
        ("{{ ''.__class__.__mro__ }}", "'__class__' of 'str'"),
        ("{{ topic.__class__.__base__.__subclasses__() }}", "'__class__' of 'str'"),
        ("{{ cycler.__init__.__globals__ }}", "'__init__'"),
        ("{{ lipsum.__globals__['os'] }}", "'__globals__' of 'function'"),
        ("{{ namespace.__init__ }}", "'__init__'"),
        ("{{ '{0.__class__}'.format(topic) }}", "'__class__' of 'str'"),
        ("{% set xs = [1] %}{{ xs.append(2) }}", "'append' of 'list'"),
        ("{{ {}.update(a=1) }}", "'update' of 'dict'"),
    ],
)
async def test_render_skill_sandbox_refuses_escapes(body: str, refused: str) -> None:
    skill = make(body, "topic")
    with pytest.raises(SkillRenderError, match=rf"refused by the sandbox: access to attribute {refused}.* is unsafe"):
        await skill.render({"topic": "x"})


@pytest.mark.parametrize(
    ("body", "refused"),
    [
        ("{{ 2 ** 100000 }}", "2 \\*\\* 100000 is larger than 65536 bits"),
        ("{{ (10 ** 1000) ** 1000 }}", "is larger than 65536 bits"),
        ("{{ 7 ** 100000000 }}", "is larger than 65536 bits"),
        ("{{ 'a' * 10 ** 9 }}", "repeating a sequence 1000000000 times"),
        ("{{ 10 ** 9 * [1] }}", "repeating a sequence 1000000000 times"),
        ("{{ range(10 ** 9) | list }}", "Range too big"),
    ],
)
async def test_templating_jinja_body_refuses_runaway_sizes(body: str, refused: str) -> None:
    # Compiling must not fold these constants (that would hang the loader): the
    # skill parses, and rendering refuses.
    skill = parse_skill_text(f"---\nname: s\ndescription: S.\ntemplating: jinja\n---\n{body}\n")
    with pytest.raises(SkillRenderError, match=rf"{refused}"):
        await skill.render()


async def test_render_skill_allows_small_arithmetic() -> None:
    assert await make("{{ 2 ** 10 }} {{ 'ab' * 2 }} {{ 3 * 4 }} {{ 2.0 ** 3 }}").render() == "1024 abab 12 8.0"


async def test_render_skill_runtime_failure_is_a_render_error() -> None:
    with pytest.raises(SkillRenderError, match=r"ZeroDivisionError: division by zero"):
        await make("{{ 1 / 0 }}").render()


async def test_render_skill_built_in_code_with_bad_template_fails_at_render() -> None:
    with pytest.raises(SkillRenderError, match=r"TemplateSyntaxError: Unexpected end of template"):
        await make("{% if x %}", "x").render({"x": "1"})


async def test_render_skill_values_are_not_templates() -> None:
    assert await make("{{ topic }}", "topic").render({"topic": "{{ ''.__class__ }}"}) == "{{ ''.__class__ }}"
