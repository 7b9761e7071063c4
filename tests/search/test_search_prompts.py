"""MCP prompts as skills: listed, searchable, and usable through ``/use``."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from pathlib import Path

import mcp.types as types
import pytest
from mcp_helpers import example_server, in_memory, stdio_server

from toolsift import SkillNotFound, SkillRenderError
from toolsift.agent import Conversation
from toolsift.mcp_sessions import McpSession
from toolsift.registry import ToolRegistry
from toolsift.search import SearchIndex, SkillCatalog
from toolsift.search._prompt_skills import McpPromptSkill, _variable_name, prompt_skills
from toolsift.skills import SkillsLoader

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
async def general() -> AsyncIterator[McpSession]:
    options = in_memory({"general": example_server("general.py")})  # what is done with its prompts is the point
    async with McpSession(stdio_server("general", "general.py"), options=options) as session:
        yield session


@pytest.fixture
def catalog(general: McpSession) -> SkillCatalog:
    return SkillCatalog(SkillsLoader(project=ROOT / "examples" / "skills"), {"general": general})


async def test_prompts_become_skills_named_server_prompt(general: McpSession) -> None:
    skills = {skill.name: skill for skill in prompt_skills(general)}
    assert set(skills) == {"general__review", "general__summarize"}
    summarize = skills["general__summarize"]
    assert summarize.server == "general" and summarize.prompt.name == "summarize"
    assert summarize.description.startswith("Ask for a summary of the text")
    assert [(v.name, v.required) for v in summarize.variables.values()] == [("text", True), ("style", False)]
    assert summarize.usage() == "/use general__summarize text=<text> [style=<style>]"
    assert skills["general__review"].usage() == "/use general__review <code>"
    assert summarize.allowed_tools == () and summarize.user_invocable


async def test_catalog_offers_skill_files_then_prompts(catalog: SkillCatalog) -> None:
    names = [skill.name for skill in catalog.invocable()]
    assert names[-2:] == ["general__review", "general__summarize"]
    assert {"code-assist", "flow-memory"} <= set(names)
    assert catalog.get("code-assist").name == "code-assist"
    assert isinstance(catalog.get("general__review"), McpPromptSkill)
    with pytest.raises(
        SkillNotFound, match="Unknown skill 'general__nope'; (did you mean .*; )?available: .*general__review"
    ):
        catalog.get("general__nope")
    # Unchanged catalogs give the same objects, which the search index relies on.
    assert catalog.prompt_skills()[0] is catalog.prompt_skills()[0]


def test_catalog_without_sources_is_empty() -> None:
    catalog = SkillCatalog()
    assert catalog.invocable() == []
    with pytest.raises(SkillNotFound, match="no skills are loaded"):
        catalog.get("x")


async def test_use_renders_a_prompt_through_the_server(catalog: SkillCatalog) -> None:
    conversation = Conversation(ToolRegistry(), catalog)
    reply = await conversation.handle_command("/use general__review def f(): return 1")
    assert reply is not None and reply.ok, reply
    assert conversation.active_skill.name == "general__review"
    instructions = conversation.instructions_now()
    assert "# Skill: general__review" in instructions
    assert "Please review this code" in instructions and "def f(): return 1" in instructions


async def test_use_sends_optional_arguments_only_when_given(catalog: SkillCatalog) -> None:
    conversation = Conversation(ToolRegistry(), catalog)
    reply = await conversation.handle_command('/use general__summarize text="the report"')
    assert reply is not None and reply.ok
    assert "in a short style" in conversation.instructions_now()  # the server's default
    reply = await conversation.handle_command('/use general__summarize text="the report" style=bullet')
    assert reply is not None and reply.ok
    assert "in a bullet style" in conversation.instructions_now()


async def test_use_reports_missing_arguments(catalog: SkillCatalog) -> None:
    conversation = Conversation(ToolRegistry(), catalog)
    reply = await conversation.handle_command("/use general__summarize style=bullet")
    assert reply is not None and not reply.ok
    assert "missing required variable(s) 'text'" in reply.text


async def test_render_reports_what_the_server_refused(general: McpSession) -> None:
    review = next(skill for skill in prompt_skills(general) if skill.name == "general__review")
    gone = McpPromptSkill(
        name="general__gone", description="x", server="general", prompt=types.Prompt(name="gone"), session=general
    )
    with pytest.raises(SkillRenderError, match="MCP server 'general' could not render prompt 'gone'"):
        await gone.render({})
    with pytest.raises(SkillRenderError, match="missing required variable 'code'"):
        await review.render({"code": ""})


def test_render_labels_other_roles_and_names_what_it_leaves_out() -> None:
    from toolsift.search._prompt_skills import _messages_text

    messages = [
        types.PromptMessage(role="user", content=types.TextContent(text="Question?")),
        types.PromptMessage(role="assistant", content=types.TextContent(text="Answer.")),
        types.PromptMessage(role="user", content=types.ImageContent(data="AA==", mime_type="image/png")),
        types.PromptMessage(
            role="user",
            content=types.EmbeddedResource(resource=types.TextResourceContents(uri="docs://x", text="embedded text")),
        ),
        types.PromptMessage(role="user", content=types.ResourceLink(uri="docs://y", name="y")),
    ]
    assert _messages_text(messages) == (
        "Question?\n\n[assistant]\nAnswer.\n\n[image content omitted: image/png]"
        "\n\nembedded text\n\n[resource docs://y]"
    )


def test_prompt_arguments_become_safe_variable_names() -> None:
    taken: set[str] = set()
    assert _variable_name("file-path", taken) == "file_path"
    assert _variable_name("file_path", taken) == "file_path_2"
    assert _variable_name("arguments", taken) == "arg_arguments"
    assert _variable_name("2nd", taken) == "arg_2nd"
    assert _variable_name("class", taken) == "arg_class"
    assert _variable_name("---", taken) == "value"


async def test_prompts_with_names_use_cannot_take_are_skipped(
    general: McpSession, caplog: pytest.LogCaptureFixture
) -> None:
    class Renamed:
        """The general session, listing one prompt whose name has a space."""

        config = general.config
        name = general.name
        catalog = general.catalog.__class__(prompts=(types.Prompt(name="two words"), types.Prompt(name="ok")))

        async def get_prompt(self, name: str, arguments: dict[str, str] | None = None) -> types.GetPromptResult:
            raise AssertionError("not called")

    with caplog.at_level(logging.WARNING, logger="toolsift.search"):
        skills = prompt_skills(Renamed())
    assert [skill.name for skill in skills] == ["general__ok"]
    assert skills[0].description == "Prompt 'ok' of MCP server 'general'."
    assert "prompt 'two words' is not offered as a skill" in caplog.text


async def test_prompts_are_searchable_unless_their_server_is_not(catalog: SkillCatalog) -> None:
    index = SearchIndex(ToolRegistry(), catalog)
    hits = index.search("review this code for bugs", kind="skill")
    assert hits[0].document.name == "general__review" and hits[0].document.server == "general"
    assert index.search("summary", server="general")[0].document.name == "general__summarize"
    hidden = SearchIndex(ToolRegistry(), catalog, unsearchable={"general"})
    assert all(hit.document.server != "general" for hit in hidden.search("review code summary text"))
