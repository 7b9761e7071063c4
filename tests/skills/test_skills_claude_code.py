"""Skills written for Claude Code and the Agent Skills spec load as they are, with warnings.

Claude Code's allowed-tools forms (``Bash(git add:*)``, ``Read, Grep``, ``mcp__S__t``), display names,
descriptions over the spec's limit; the fixture folder holds skills shaped like published ones.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from local_tools import RecordingTool

from toolsift import SkillParseError
from toolsift._globs import compile_patterns, validate_pattern
from toolsift._names import split_name
from toolsift.registry import ToolRegistry, TurnScope
from toolsift.skills import Skill, SkillsLoader, parse_skill
from toolsift.skills._internal import parse_skill_text

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "skills"
SERVER = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_-]{0,10}", fullmatch=True).filter(lambda s: "__" not in s)
TOOL_PART = st.from_regex(r"[A-Za-z0-9_.-]{1,12}", fullmatch=True)
TOOL_NAME = st.one_of(TOOL_PART.filter(lambda t: "__" not in t), st.builds("{}__{}".format, SERVER, TOOL_PART))
# Tool(specifier), the specifier any printable ASCII text (spaces, '*', brackets) but parentheses.
CLAUDE_RULE = st.builds(
    "{}({})".format,
    st.sampled_from(["Bash", "Read", "Edit", "WebFetch", "mcp__git__log"]),
    st.text(st.characters(min_codepoint=32, max_codepoint=126, exclude_characters="()"), max_size=15),
)
FOREIGN = st.one_of(CLAUDE_RULE, st.sampled_from(["Read", "Grep", "Bash", "WebFetch", "TodoWrite"]))


def skill_text(*lines: str, body: str = "Do the thing.") -> str:
    return "---\n" + "\n".join(lines) + "\n---\n" + body + "\n"


def write(root: Path, folder: str, text: str) -> Path:
    path = root / folder / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def registry() -> ToolRegistry:
    """Two builtin tools, a global GitHub server, and two internal servers."""
    reg = ToolRegistry()
    reg.register_many([RecordingTool("read_file", read_only=True), RecordingTool("write_file")])
    reg.replace_server(
        "github", [RecordingTool("github__create_issue"), RecordingTool("github__search__code")], internal=False
    )
    reg.replace_server(
        "claude-flow",
        [RecordingTool(f"claude-flow__{t}") for t in ("memory_store", "memory_search", "swarm_init")],
        internal=True,
    )
    reg.replace_server("notes", [RecordingTool("notes__note_add")], internal=True)
    return reg


def visible(skill: Skill) -> list[str]:
    scope = TurnScope(skill_allowed=skill.allowed_tools, skill_disallowed=skill.disallowed_tools, skill=skill.name)
    return [tool.spec.name for tool in registry().visible_tools(scope)]


# -- the fixture folder: skills shaped like published ones -------------------------------------------


@pytest.fixture(scope="module")
def fixtures() -> SkillsLoader:
    loader = SkillsLoader(project=FIXTURES)
    loader.load()
    return loader


def test_fixture_skills_all_load(fixtures: SkillsLoader) -> None:
    assert fixtures.problems == ()
    assert list(fixtures.skills.skills) == ["git-commit", "pair-programming", "swarm-memory"]


def test_claude_code_skill_keeps_its_rules_warns_and_offers_no_tools(fixtures: SkillsLoader) -> None:
    skill = fixtures.get("git-commit")
    rules = ("Bash(git add:*)", "Bash(git status:*)", "Bash(git commit:*)", "Bash(gh *)", "Read", "Grep")
    assert skill.allowed_tools == skill.foreign_tools == rules
    path = FIXTURES / "git-commit" / "SKILL.md"
    assert [(w.path, w.field, w.line) for w in skill.warnings] == [(path, "allowed-tools", 4)] * 7
    assert skill.warnings[0].message == (
        f"{path}:4: field 'allowed-tools': 'Bash(git add:*)' is a Claude Code permission rule for its 'Bash' tool, "
        "which toolsift does not have; kept, it matches no tool"
    )
    assert "'Read' is a Claude Code built-in tool" in skill.warnings[4].message
    assert "no entry names a toolsift tool, so turns with this skill offer no tools" in skill.warnings[6].message
    assert visible(skill) == []  # restricted to nothing, never widened to everything


def test_agent_skills_display_name_and_long_description_load(fixtures: SkillsLoader) -> None:
    skill = fixtures.get("pair-programming")
    assert (skill.name, skill.display_name, len(skill.description)) == ("pair-programming", "Pair Programming", 1068)
    assert skill.license == "MIT" and skill.metadata == {"author": "example-org", "version": "2.1"}
    path = FIXTURES / "pair-programming" / "SKILL.md"
    assert [str(w) for w in skill.warnings] == [
        f"{path}:2: field 'name': 'Pair Programming' is a display name, not an id (1-64 lowercase letters, digits "
        "and single hyphens); the skill is called 'pair-programming' after its folder and keeps the display name "
        "for listings",
        f"{path}:3: field 'description': 1,068 characters, over the 1,024 Agent Skills allows; kept whole (other "
        "clients may cut or refuse it)",
    ]
    assert visible(skill) == ["read_file", "write_file", "github__create_issue", "github__search__code"]


def test_mcp_names_become_toolsift_names_and_surface_internal_servers(fixtures: SkillsLoader) -> None:
    skill = fixtures.get("swarm-memory")
    assert skill.allowed_tools == (
        "claude-flow__memory_store",
        "claude-flow__memory_search",
        "github__*",
        "notes__*",
        "WebFetch",
    )
    assert skill.foreign_tools == ("WebFetch",)
    (warning,) = skill.warnings
    assert (warning.field, warning.line) == ("allowed-tools", 9) and "'WebFetch' is a Claude Code" in warning.reason
    assert visible(skill) == [
        "github__create_issue",
        "github__search__code",
        "claude-flow__memory_store",
        "claude-flow__memory_search",
        "notes__note_add",
    ]


def test_loader_logs_each_warning_once(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    write(tmp_path, "ops", skill_text("name: ops", "description: Ops.", "allowed-tools: Read, read_file"))
    loader = SkillsLoader(project=tmp_path)
    loader.load()
    loader.reload()
    assert caplog.text.count("'Read' is a Claude Code built-in tool") == 1
    assert loader.skills.warnings == loader.get("ops").warnings


# -- allowed-tools as Claude Code writes it ----------------------------------------------------------


@pytest.mark.parametrize(
    ("written", "patterns"),
    [
        ("allowed-tools: Bash(git add:*), Read", ("Bash(git add:*)", "Read")),
        ("allowed-tools: Bash(gh *) read_file", ("Bash(gh *)", "read_file")),
        ("allowed-tools: Read, Grep", ("Read", "Grep")),
        (
            "allowed-tools: ['Bash(npm run test:*)', 'Read(./src/**)', 'WebFetch(domain:example.com)']",
            ("Bash(npm run test:*)", "Read(./src/**)", "WebFetch(domain:example.com)"),
        ),
        ("allowed-tools: 'Read([abc]), Edit(src/{a,b}.py)'", ("Read([abc])", "Edit(src/{a,b}.py)")),
    ],
)
def test_claude_code_entries_are_kept_as_written(written: str, patterns: tuple[str, ...]) -> None:
    skill = parse_skill_text(skill_text("name: x", "description: X.", written), "<s>")
    assert skill.allowed_tools == patterns
    assert set(skill.foreign_tools) == set(patterns) - {"read_file"}
    assert all(w.field == "allowed-tools" and w.line == 4 for w in skill.warnings)


@pytest.mark.parametrize(
    ("entry", "pattern"),
    [
        ("mcp__claude-flow__memory_store", "claude-flow__memory_store"),
        ("mcp__server__*", "server__*"),
        ("mcp__server", "server__*"),
        ("mcp__server__", "server__*"),
        ("mcp__my_server__get__thing", "my_server__get__thing"),
        ("mcp__*", "*__*"),
        ("mcp__", "mcp__"),
    ],
)
def test_claude_code_mcp_names_map_to_toolsift_names(entry: str, pattern: str) -> None:
    skill = parse_skill_text(skill_text("name: x", "description: X.", f"allowed-tools: ['{entry}']"))
    assert skill.allowed_tools == (pattern,) and skill.warnings == ()


def test_mcp_rule_with_a_specifier_is_kept_not_mapped() -> None:
    skill = parse_skill_text(skill_text("name: x", "description: X.", "allowed-tools: mcp__git__log(x), read_file"))
    assert skill.allowed_tools == ("mcp__git__log(x)", "read_file") and skill.foreign_tools == ("mcp__git__log(x)",)


@given(server=SERVER, tool=TOOL_PART)
def test_mcp_name_splits_as_claude_code_splits_it(server: str, tool: str) -> None:
    claude_name = f"mcp__{server}__{tool}"
    # Claude Code: name.split("__") -> ["mcp", server, ...tool parts]; the tool is the rest rejoined.
    _, claude_server, *claude_tool = claude_name.split("__")
    skill = Skill(name="x", description="X.", allowed_tools=[claude_name])
    (pattern,) = skill.allowed_tools
    if claude_server and "__".join(claude_tool):
        assert split_name(pattern) == (claude_server, "__".join(claude_tool))


def test_disallowed_claude_code_entries_warn_too() -> None:
    skill = parse_skill_text(skill_text("name: x", "description: X.", "disallowed-tools: Bash(rm:*), mcp__git__push"))
    assert skill.disallowed_tools == ("Bash(rm:*)", "git__push")
    (warning,) = skill.warnings
    assert warning.field == "disallowed-tools" and "'Bash(rm:*)' is a Claude Code permission rule" in warning.reason


def test_underscore_spelling_names_its_key_in_warnings() -> None:
    skill = parse_skill_text(skill_text("name: x", "description: X.", "allowed_tools: Read"), "<s>")
    assert {w.field for w in skill.warnings} == {"allowed_tools"}


# -- the glob rule that keeps them harmless ----------------------------------------------------------


@given(rule=CLAUDE_RULE, name=TOOL_NAME)
def test_a_parenthesised_pattern_is_valid_and_matches_no_tool_name(rule: str, name: str) -> None:
    assert validate_pattern(rule) == rule
    assert not compile_patterns([rule]).matches(name)


@given(
    patterns=st.lists(st.sampled_from(["read_*", "github__*", "*", "notes__note_?", "x"]), max_size=3),
    foreign=st.lists(FOREIGN, min_size=1, max_size=3),
    names=st.lists(TOOL_NAME.filter(lambda n: n not in {"Read", "Grep", "Bash", "WebFetch", "TodoWrite"}), max_size=8),
)
def test_kept_entries_never_widen_a_scope(patterns: list[str], foreign: list[str], names: list[str]) -> None:
    with_foreign = compile_patterns([*patterns, *foreign]).filter(names)
    assert with_foreign == compile_patterns(patterns).filter(names)
    assert compile_patterns(foreign)  # non-empty: the skill still restricts, to nothing


@pytest.mark.parametrize(
    ("pattern", "refused"), [("Bash(git add:*", " "), ("a b", " "), ("Bash(x) y", " "), ("Bash(a\tb)", "\t")]
)
def test_only_a_closed_group_may_hold_spaces(pattern: str, refused: str) -> None:
    assert validate_pattern("Bash(git add:*)") == "Bash(git add:*)"
    with pytest.raises(ValueError, match=re.escape(f"non-printable or space character {refused!r}")):
        validate_pattern(pattern)


# -- names and descriptions published skills use -----------------------------------------------------


def test_missing_name_takes_the_folder_name(tmp_path: Path) -> None:
    path = write(tmp_path, "triage", skill_text("description: Triage issues."))
    skill = parse_skill(path)
    assert skill.name == "triage" and skill.display_name is None
    (warning,) = skill.warnings
    assert warning.message == (
        f"{path}: field 'name': the front matter has no 'name'; the skill is called 'triage' after its folder"
    )


def test_display_name_without_a_usable_folder_is_rejected(tmp_path: Path) -> None:
    path = write(tmp_path, "Pair_Programming", skill_text("name: Pair Programming", "description: X."))
    with pytest.raises(
        SkillParseError,
        match=r"SKILL\.md:2: field 'name': 'Pair Programming' is not a skill id and "
        r"neither is its folder's name 'Pair_Programming': rename the folder",
    ):
        parse_skill(path)


def test_missing_description_takes_the_first_paragraph_of_the_body(tmp_path: Path) -> None:
    body = "# Triage\n\nSort new issues by area\nand urgency.\n\nThen label them."
    path = write(tmp_path, "triage", skill_text("name: triage", body=body))
    skill = parse_skill(path)
    assert skill.description == "Sort new issues by area and urgency."
    (warning,) = skill.warnings
    assert warning.message == (
        f"{path}: field 'description': no description; using the body's first paragraph "
        "('Sort new issues by area and urgency.')"
    )


def test_blank_description_with_only_a_heading_uses_the_heading() -> None:
    skill = parse_skill_text(skill_text("name: x", "description: ''", body="## Release checklist"))
    assert skill.description == "Release checklist" and skill.warnings[0].line == 3


def test_no_description_and_no_body_is_rejected() -> None:
    with pytest.raises(
        SkillParseError,
        match=r"<s>:1: field 'description': the front matter has no 'description' "
        r"field and the body is empty: say what the skill does",
    ):
        parse_skill_text(skill_text("name: x", body=""), "<s>")
