"""Binding ``/use <skill> [text]`` argument text to variables."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolsift import SkillArgumentError
from toolsift.skills import Skill, bind_arguments
from toolsift.skills._internal import SkillVariable


def make(*variables: SkillVariable | str, hint: str | None = None) -> Skill:
    body = " ".join(f"{{{{ {v if isinstance(v, str) else v.name} }}}}" for v in variables)
    return Skill(name="s", description="S.", variables=list(variables), body=body, argument_hint=hint)


def test_bind_arguments_without_variables_exposes_the_text() -> None:
    assert bind_arguments(make(), "  do it now ") == {"arguments": "do it now"}
    assert bind_arguments(make()) == {"arguments": ""}


def test_bind_arguments_one_variable_takes_the_whole_text() -> None:
    skill = make("topic")
    assert bind_arguments(skill, "the auth module, briefly") == {
        "topic": "the auth module, briefly",
        "arguments": "the auth module, briefly",
    }


def test_bind_arguments_one_variable_accepts_a_lone_pair() -> None:
    skill = make("topic")
    assert bind_arguments(skill, "topic='the auth module'")["topic"] == "the auth module"
    # Anything else is taken verbatim.
    assert bind_arguments(skill, "topic=a b")["topic"] == "topic=a b"
    assert bind_arguments(skill, "topic='unclosed")["topic"] == "topic='unclosed"
    assert bind_arguments(skill, "topics=a")["topic"] == "topics=a"


def test_bind_arguments_one_variable_uses_its_default_when_empty() -> None:
    assert bind_arguments(make(SkillVariable(name="topic", default="everything")), "") == {
        "topic": "everything",
        "arguments": "",
    }


def test_bind_arguments_one_required_variable_missing_shows_usage() -> None:
    with pytest.raises(
        SkillArgumentError, match=r"Skill 's': missing required variable\(s\) 'topic'; usage: /use s <topic>"
    ):
        bind_arguments(make("topic"), "   ")


def test_bind_arguments_several_variables_take_quoted_pairs() -> None:
    skill = make("version", SkillVariable(name="audience", default="users"), SkillVariable(name="tone", required=False))
    text = 'version=2.1.0 audience="plugin authors"'
    assert bind_arguments(skill, text) == {
        "version": "2.1.0",
        "audience": "plugin authors",
        "tone": "",
        "arguments": text,
    }


def test_bind_arguments_several_variables_missing_required_are_listed() -> None:
    skill = make("version", "audience", SkillVariable(name="tone", default="plain"))
    with pytest.raises(
        SkillArgumentError,
        match=r"missing required variable\(s\) 'version', 'audience'; "
        r"usage: /use s version=<version> audience=<audience> \[tone=<tone>\]",
    ):
        bind_arguments(skill, "tone=dry")
    assert bind_arguments(skill, "version=1 audience=all")["tone"] == "plain"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("version=1 colour=red", r"unknown variable 'colour'; declared: version, audience"),
        ("version=1 version=2", r"variable 'version' is given twice"),
        ("1.0 users", r"expected name=value pairs for the variables version, audience, got '1\.0'"),
        ("version='1.0", r"cannot split \"version='1\.0\" into name=value pairs: No closing quotation"),
    ],
)
def test_bind_arguments_several_variables_bad_text_is_refused(text: str, message: str) -> None:
    with pytest.raises(SkillArgumentError, match=rf"Skill 's': {message}"):
        bind_arguments(make("version", "audience"), text)


def test_bind_arguments_usage_prefers_the_argument_hint() -> None:
    with pytest.raises(SkillArgumentError, match=r"usage: /use s <version> for <audience>$"):
        bind_arguments(make("version", "audience", hint="<version> for <audience>"), "")


async def test_bind_arguments_result_renders() -> None:
    skill = make("version", SkillVariable(name="audience", default="users"))
    assert await skill.render(bind_arguments(skill, "version=3")) == "3 users"


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40).filter(str.strip))
def test_bind_arguments_one_variable_never_fails_on_nonblank_text(text: str) -> None:
    bound = bind_arguments(make("topic"), text)
    assert bound["arguments"] == text.strip()
    assert bound["topic"] == text.strip() or text.strip().startswith("topic=")
