"""SKILL.md parsing and validation: every field, both tool-list forms, every error with file/field/line."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolsift import SkillParseError
from toolsift.registry import TurnScope
from toolsift.skills import Skill, parse_skill
from toolsift.skills._internal import SkillVariable, parse_skill_text
from toolsift.skills._model import split_tool_list


def write(root: Path, folder: str, text: str) -> Path:
    path = root / folder / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def skill_text(*lines: str, body: str = "Do the thing.") -> str:
    return "---\n" + "\n".join(lines) + "\n---\n" + body + "\n"


FULL = """\
---
name: code-assist
description: Read, change and explain code in the workspace.
version: 1.2
argument-hint: <what to change>
user-invocable: false
allowed-tools:
  - read_file
  - general__*
disallowed-tools: general__fail
license: Apache-2.0
compatibility: Needs the builtin file tools.
metadata:
  author: toolsift
  tags: [code]
variables:
  task:
    description: What to do
model: opus
hooks: {pre: x}
---

Task: {{ task }}
"""


def test_parse_skill_reads_every_field(tmp_path: Path) -> None:
    skill = parse_skill(write(tmp_path, "code-assist", FULL))
    assert skill.name == "code-assist"
    assert skill.description == "Read, change and explain code in the workspace."
    assert skill.version == "1.2"
    assert skill.argument_hint == "<what to change>"
    assert skill.user_invocable is False
    assert skill.allowed_tools == ("read_file", "general__*")
    assert skill.disallowed_tools == ("general__fail",)
    assert skill.license == "Apache-2.0"
    assert skill.compatibility == "Needs the builtin file tools."
    assert skill.metadata == {"author": "toolsift", "tags": ["code"]}
    assert skill.variables == {"task": SkillVariable(name="task", description="What to do")}
    assert skill.extra == {"model": "opus", "hooks": {"pre": "x"}}
    assert skill.body == "Task: {{ task }}"
    assert skill.path == tmp_path / "code-assist" / "SKILL.md"


def test_parse_skill_defaults_are_permissive() -> None:
    skill = parse_skill_text(skill_text("name: plain", "description: Plain."))
    assert skill.user_invocable is True
    assert skill.allowed_tools == skill.disallowed_tools == ()
    assert skill.variables == {} and skill.extra == {} and skill.metadata == {}
    assert skill.version is None and skill.path is None


@pytest.mark.parametrize(
    "written",
    [
        "allowed-tools: read_file, write_file, general__*",
        "allowed-tools: read_file write_file general__*",
        "allowed-tools: 'read_file,write_file   general__*'",
        "allowed-tools: [read_file, write_file, general__*]",
        "allowed-tools:\n  - read_file\n  - write_file\n  - general__*",
        "allowed_tools: read_file, write_file, general__*",
    ],
)
def test_allowed_tools_accepts_list_and_string_forms(written: str) -> None:
    skill = parse_skill_text(skill_text("name: x", "description: X.", written))
    assert skill.allowed_tools == ("read_file", "write_file", "general__*")


def test_allowed_tools_keeps_claude_code_specifiers_whole() -> None:
    assert split_tool_list("Bash(git:*), Read Grep") == ["Bash(git:*)", "Read", "Grep"]
    skill = parse_skill_text(skill_text("name: x", "description: X.", "allowed-tools: Read, Bash(git add:*)"), "<s>")
    assert skill.allowed_tools == skill.foreign_tools == ("Read", "Bash(git add:*)")


def test_allowed_tools_duplicates_are_dropped() -> None:
    skill = parse_skill_text(skill_text("name: x", "description: X.", "allowed-tools: a, b, a"))
    assert skill.allowed_tools == ("a", "b")


def test_skill_patterns_feed_the_turn_scope() -> None:
    text = skill_text(
        "name: flow", "description: F.", "allowed-tools: claude-flow__memory_*", "disallowed-tools: '*_delete'"
    )
    skill = parse_skill_text(text)
    scope = TurnScope(skill_allowed=skill.allowed_tools, skill_disallowed=skill.disallowed_tools, skill=skill.name)
    assert scope.skill_patterns.servers == {"claude-flow"}
    assert scope.skill_patterns.matches("claude-flow__memory_store")
    assert scope.disallowed_patterns.matches("claude-flow__memory_delete")


@given(st.lists(st.from_regex(r"[a-z_*?][a-z0-9_*?-]{0,12}", fullmatch=True), min_size=1, max_size=6))
def test_split_tool_list_round_trips_both_separators(patterns: list[str]) -> None:
    assert split_tool_list(", ".join(patterns)) == patterns
    assert split_tool_list(" ".join(patterns)) == patterns


def test_variables_list_form_declares_required_names() -> None:
    skill = parse_skill_text(skill_text("name: x", "description: X.", "variables: [topic, depth]"))
    assert list(skill.variables) == ["topic", "depth"]
    assert all(v.required and v.default is None for v in skill.variables.values())


def test_variables_list_of_mappings_form() -> None:
    text = skill_text("name: x", "description: X.", "variables:", "  - name: topic", "    default: auth")
    assert parse_skill_text(text).variables["topic"] == SkillVariable(name="topic", default="auth", required=False)


def test_variables_mapping_form_normalises_defaults_and_required() -> None:
    text = skill_text(
        "name: x",
        "description: X.",
        "variables:",
        "  version:",
        "  audience: {description: Who reads it, default: users}",
        "  depth: {default: 3}",
        "  note: {required: false}",
    )
    variables = parse_skill_text(text).variables
    assert variables["version"].required and variables["version"].fallback is None
    assert variables["audience"] == SkillVariable(
        name="audience", description="Who reads it", default="users", required=False
    )
    assert variables["depth"].default == "3"
    assert variables["note"].fallback == ""


async def test_skill_built_in_code_accepts_attribute_names_and_variable_objects() -> None:
    skill = Skill(
        name="x",
        description="X.",
        allowed_tools="a b",
        user_invocable=False,
        variables=[SkillVariable(name="topic")],
        body="{{ topic }}",
    )
    assert skill.allowed_tools == ("a", "b") and not skill.user_invocable
    assert await skill.render({"topic": "t"}) == "t"


def test_empty_tool_lists_and_variables_mean_none() -> None:
    text = skill_text("name: x", "description: X.", "allowed-tools:", "variables:", "disallowed-tools: ''")
    skill = parse_skill_text(text)
    assert skill.allowed_tools == skill.disallowed_tools == () and skill.variables == {}


def test_parse_skill_handles_bom_crlf_and_blank_lines_before_the_body() -> None:
    text = "\ufeff---\r\nname: x\r\ndescription: X.\r\n---\r\n\r\n\r\nHello\r\n"
    assert parse_skill_text(text).body == "Hello"


def test_front_matter_key_named_body_or_extra_goes_to_extra() -> None:
    skill = parse_skill_text(skill_text("name: x", "description: X.", "body: b", "extra: e", "path: p"))
    assert skill.extra == {"body": "b", "extra": "e", "path": "p"}
    assert skill.body == "Do the thing."


# --- errors: every one names the file, the field and the line ------------------------------------


def test_skill_without_front_matter_is_rejected(tmp_path: Path) -> None:
    path = write(tmp_path, "x", "# Just markdown\n")
    with pytest.raises(
        SkillParseError, match=rf"^{re.escape(str(path))}:1: a SKILL.md must start with a YAML front matter"
    ):
        parse_skill(path)


def test_unclosed_front_matter_is_rejected() -> None:
    with pytest.raises(SkillParseError, match=r"<s>:1: the front matter opened on line 1 is never closed"):
        parse_skill_text("---\nname: x\n", "<s>")


def test_broken_yaml_reports_the_yaml_line(tmp_path: Path) -> None:
    path = write(tmp_path, "x", "---\nname: x\ndescription: X.\nallowed-tools: [a, b\nother: 1\n---\nbody\n")
    with pytest.raises(
        SkillParseError, match=r"SKILL\.md:5: invalid YAML in the front matter: .*flow sequence"
    ) as caught:
        parse_skill(path)
    assert caught.value.line == 5 and caught.value.path == path


def test_yaml_key_written_twice_is_rejected() -> None:
    text = skill_text("name: x", "description: X.", "allowed-tools: a", "allowed-tools: '*'")
    with pytest.raises(SkillParseError, match=r"<s>:5: invalid YAML .*'allowed-tools' appears twice"):
        parse_skill_text(text, "<s>")


def test_hyphen_and_underscore_spellings_of_one_field_are_rejected() -> None:
    text = skill_text("name: x", "description: X.", "allowed-tools: a", "allowed_tools: b")
    with pytest.raises(
        SkillParseError, match=r":5: field 'allowed-tools': 'allowed-tools' and 'allowed_tools' are the same"
    ):
        parse_skill_text(text, "s.md")


@pytest.mark.parametrize("value", ["*_search", "*"])
def test_unquoted_leading_star_gets_a_quoting_hint(value: str) -> None:
    with pytest.raises(SkillParseError, match=r"<s>:4: invalid YAML .*alias.*must be quoted \('\*_search'\)"):
        parse_skill_text(skill_text("name: x", "description: X.", f"allowed-tools: {value}"), "<s>")


def test_front_matter_that_is_not_a_mapping_is_rejected() -> None:
    with pytest.raises(SkillParseError, match=r"<s>:1: the front matter must be a mapping of fields, got list"):
        parse_skill_text("---\n- a\n- b\n---\nbody\n", "<s>")


def test_non_text_field_name_is_rejected() -> None:
    with pytest.raises(SkillParseError, match=r"<s>:4: field names must be text, got 3"):
        parse_skill_text(skill_text("name: x", "description: X.", "3: three"), "<s>")


@pytest.mark.parametrize(("missing", "body"), [("name", "Do the thing."), ("description", "")])
def test_skill_without_required_field_is_rejected(missing: str, body: str) -> None:
    lines = [line for line in ("name: x", "description: X.") if not line.startswith(missing)]
    with pytest.raises(
        SkillParseError, match=rf"<s>:1: field '{missing}': the front matter has no '{missing}' field"
    ) as caught:
        parse_skill_text(skill_text(*lines, body=body), "<s>")
    assert caught.value.field == missing and caught.value.line == 1


def test_empty_front_matter_reports_both_missing_fields() -> None:
    with pytest.raises(
        SkillParseError,
        match=r"no 'name' field; also 'description' \(line 1\): the front matter has no "
        r"'description' field and the body is empty",
    ):
        parse_skill_text("---\n---\n", "<s>")


@pytest.mark.parametrize("name", ["Code-Assist", "code_assist", "-code", "code-", "code--assist", "a" * 65, ""])
def test_invalid_skill_name_is_rejected(name: str) -> None:
    with pytest.raises(SkillParseError, match=r"<s>:3: field 'name': .*is not a valid skill name: use 1-64 lowercase"):
        parse_skill_text(f"---\n# comment\nname: '{name}'\ndescription: X.\n---\n", "<s>")


def test_skill_name_other_than_its_folder_loads_with_a_warning(tmp_path: Path) -> None:
    path = write(tmp_path, "other", skill_text("description: X.", "name: code-assist"))
    skill = parse_skill(path)
    assert skill.name == "code-assist" and skill.display_name is None
    (warning,) = skill.warnings
    assert warning.message == (
        f"{path}:3: field 'name': name 'code-assist' differs from its folder's name 'other' "
        "(Agent Skills wants them equal); the skill is called 'code-assist'"
    )


@pytest.mark.parametrize(
    ("line", "field", "message"),
    [
        ("user-invocable: maybe", "user-invocable", r"Input should be a valid boolean.*got 'maybe'"),
        ("description: [a, b]", "description", r"Input should be a valid string; got \['a', 'b'\]"),
        ("version: [1]", "version", r"Input should be a valid string"),
        ("metadata: text", "metadata", r"Input should be a valid dictionary"),
        ("license: 3", "license", r"Input should be a valid string; got 3"),
        ("argument-hint: {a: 1}", "argument-hint", r"Input should be a valid string; got \{'a': 1\}"),
        ("allowed-tools: {a: 1}", "allowed-tools", r"expected a list of tool patterns .*, got dict"),
        ("allowed-tools: 'a(b'", "allowed-tools", r"cannot split 'a\(b' into tool patterns: unbalanced parentheses"),
        ("variables: 3", "variables", r"expected a list of variable names or a mapping"),
    ],
)
def test_wrong_field_type_names_field_and_line(line: str, field: str, message: str) -> None:
    text = f"---\nname: x\n\n{line}\n" + ("description: X.\n" if field != "description" else "") + "---\nbody\n"
    with pytest.raises(SkillParseError, match=rf"<s>:4: field '{field}': {message}") as caught:
        parse_skill_text(text, "<s>")
    assert caught.value.field == field and caught.value.line == 4


@pytest.mark.parametrize(("field", "limit"), [("description", 1024), ("compatibility", 500)])
def test_text_over_the_agent_skills_limit_loads_whole_with_a_warning(field: str, limit: int) -> None:
    lines = ["name: x", "description: X."] if field != "description" else ["name: x"]
    skill = parse_skill_text(skill_text(*lines, f"{field}: " + "d" * (limit + 1)), "<s>")
    assert getattr(skill, field) == "d" * (limit + 1)
    (warning,) = skill.warnings
    assert warning.field == field and warning.line == 2 + len(lines)
    assert warning.message == (
        f"<s>:{warning.line}: field {field!r}: {limit + 1:,} characters, over the {limit:,} "
        "Agent Skills allows; kept whole (other clients may cut or refuse it)"
    )


def test_bad_pattern_names_file_field_and_its_own_line(tmp_path: Path) -> None:
    text = skill_text("name: x", "description: X.", "allowed-tools:", "  - read_file", "  - 'notes__[ab]*'")
    path = write(tmp_path, "x", text)
    with pytest.raises(
        SkillParseError,
        match=r"SKILL\.md:6: field 'allowed-tools': "
        r"pattern 'notes__\[ab\]\*' is not a valid glob: '\[' \(character classes\)",
    ) as caught:
        parse_skill(path)
    assert caught.value.path == path and caught.value.line == 6


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("[1]", r"pattern '1' is not a valid glob: expected a string, got int"),
        ("['']", r"pattern '' is not a valid glob: it is empty"),
    ],
)
def test_bad_disallowed_pattern_is_rejected(value: str, reason: str) -> None:
    with pytest.raises(SkillParseError, match=rf"<s>:4: field 'disallowed-tools': {reason}"):
        parse_skill_text(skill_text("name: x", "description: X.", f"disallowed-tools: {value}"), "<s>")


@pytest.mark.parametrize(
    ("variables", "field", "line", "reason"),
    [
        (["  my-topic:"], "variables.my-topic.name", 5, r"must start with a letter and hold only letters, digits"),
        (["  arguments:"], "variables.arguments.name", 5, r"'arguments' is reserved"),
        (["  for:"], "variables.for.name", 5, r"'for' is a reserved word"),
        (["  none:"], "variables.none.name", 5, r"'none' is a reserved word"),
        (["  topic: {default: a, required: true}"], "variables.topic", 5, r"has a default, so it cannot be required"),
        (["  topic: {colour: red}"], "variables.topic.colour", 5, r"Extra inputs are not permitted"),
        (["  topic: A description"], "variables.topic", 5, r"valid dictionary or instance of SkillVariable"),
        (["  - topic", "  - topic"], "variables", 4, r"variable 'topic' is declared twice"),
        (["  - [topic]"], "variables", 4, r"each entry must be a variable name or a mapping with a 'name' key"),
    ],
)
def test_bad_variable_is_rejected(variables: list[str], field: str, line: int, reason: str) -> None:
    text = skill_text("name: x", "description: X.", "variables:", *variables)
    with pytest.raises(SkillParseError, match=rf"<s>:{line}: field '{re.escape(field)}': .*{reason}"):
        parse_skill_text(text, "<s>")


def test_flow_style_front_matter_errors_have_no_line() -> None:
    with pytest.raises(SkillParseError, match=r"^<s>: field 'name': 'X' is not a valid skill name"):
        parse_skill_text("---\n{name: X, description: D}\n---\n", "<s>")
    with pytest.raises(SkillParseError, match=r"^<s>: field 'allowed-tools': pattern 'a\[' is not a valid glob"):
        parse_skill_text("---\n{name: x, description: D, allowed-tools: 'a['}\n---\n", "<s>")


def test_pattern_not_found_verbatim_points_at_its_field() -> None:
    text = skill_text("name: x", "description: X.", "allowed-tools:", '  - "read\\tfile"')
    with pytest.raises(SkillParseError, match=r"<s>:4: field 'allowed-tools': pattern 'read\\tfile' .*'\\t'"):
        parse_skill_text(text, "<s>")


def test_variable_with_non_text_name_is_rejected() -> None:
    with pytest.raises(SkillParseError, match=r"<s>:4: field 'variables\.1\.\[key\]': Input should be a valid string"):
        parse_skill_text(skill_text("name: x", "description: X.", "variables:", "  1: {}"), "<s>")


def test_template_syntax_error_reports_the_file_line(tmp_path: Path) -> None:
    body = "Line one.\n\n{% if topic %}\nunclosed\n"
    path = write(tmp_path, "x", skill_text("name: x", "description: X.", "variables: [topic]", body=body))
    with pytest.raises(SkillParseError, match=r"SKILL\.md:9: template error in the body: .*'endif'") as caught:
        parse_skill(path)
    assert caught.value.line == 9


def test_template_with_undeclared_variable_is_rejected_at_load() -> None:
    text = skill_text("name: x", "description: X.", "variables: [topic]", body="Fine {{ topic }}\n\nBad {{ topik }}")
    with pytest.raises(
        SkillParseError,
        match=r"<s>:8: template error in the body: the body uses 'topik', which is not declared under 'variables' "
        r"\(declared: topic; 'arguments' is always available\); if that text is meant literally, wrap it in "
        r"\{% raw %\}\.\.\.\{% endraw %\}",
    ):
        parse_skill_text(text, "<s>")


async def test_templating_jinja_without_variables_may_use_arguments_loops_and_globals() -> None:
    body = "{% set n = 2 %}{% for i in range(n) %}{{ i }}{% endfor %} {{ arguments }}"
    skill = parse_skill_text(skill_text("name: x", "description: X.", "templating: jinja", body=body))
    assert await skill.render({"arguments": "go"}) == "01 go"


def test_unreadable_file_is_reported(tmp_path: Path) -> None:
    with pytest.raises(SkillParseError, match=r"missing/SKILL\.md: cannot read the file: No such file"):
        parse_skill(tmp_path / "missing" / "SKILL.md")


def test_non_utf8_file_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "x" / "SKILL.md"
    path.parent.mkdir()
    path.write_bytes(b"---\nname: x\ndescription: \xff\n---\n")
    with pytest.raises(
        SkillParseError, match=r"SKILL\.md: the file is not valid UTF-8 \(invalid start byte at byte 25\)"
    ):
        parse_skill(path)


def test_skill_usage_is_built_from_hint_or_variables() -> None:
    def usage(*lines: str) -> str:
        return parse_skill_text(skill_text("name: s", "description: S.", *lines)).usage()

    assert usage() == "/use s"
    assert usage("variables: [topic]") == "/use s <topic>"
    assert usage("variables: {topic: {default: x}}") == "/use s [<topic>]"
    assert (
        usage("variables: {version: , audience: {default: users}}") == "/use s version=<version> [audience=<audience>]"
    )
    assert usage("argument-hint: '[file]'", "variables: [topic]") == "/use s [file]"
