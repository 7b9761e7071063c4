"""In the agent loop, an active skill's bundled files: told where they are, read with ``read_skill_file``."""

from __future__ import annotations

from pathlib import Path

from scripted_model import ScriptedModel

from toolsift.agent import AssistantMessage, ToolCall
from toolsift.config import parse_config
from toolsift.toolbox import Toolbox

SKILLS = Path(__file__).resolve().parent.parent.parent / "examples" / "skills"


def tool_names(tools: list[dict[str, object]]) -> list[str]:
    return [tool["function"]["name"] for tool in tools]  # type: ignore[index]


async def test_agent_reads_the_active_skills_reference_file() -> None:
    config = parse_config({"skills": {"paths": [str(SKILLS)], "userSkills": False}})
    async with Toolbox(config) as box:
        conversation = box.conversation()
        reply = await conversation.handle_command("/use release-notes version=2.1.0")
        assert reply is not None and reply.ok, reply
        model = ScriptedModel(
            AssistantMessage(
                "",
                [
                    ToolCall("c1", "read_skill_file", {"path": "reference/sections.md"}),
                    ToolCall("c2", "read_skill_file", {"path": "../code-assist/SKILL.md"}),
                ],
            ),
            AssistantMessage("done"),
        )
        answer = await conversation.send("Draft them", model)
        read, escaped = (message.result for message in answer.tool_calls)
        assert read.text_content() == (SKILLS / "release-notes" / "reference" / "sections.md").read_text()
        assert escaped.is_error
        assert "leaves the skill's folder" in escaped.text_content()
        # The skill restricts tools to read_file and list_directory; read_skill_file is pinned past that.
        assert "read_skill_file" in tool_names(model.seen[0][2])
        told = "\n".join(getattr(message, "text", "") or "" for message in model.seen[0][1])
        assert f"This skill lives in the folder {str((SKILLS / 'release-notes').resolve())!r}" in told
        assert "- reference/sections.md" in told


async def test_agent_offers_no_skill_file_tool_without_a_skill_that_bundles_files() -> None:
    config = parse_config({"skills": {"paths": [str(SKILLS)], "userSkills": False}})
    async with Toolbox(config) as box:
        conversation = box.conversation()
        model = ScriptedModel(
            AssistantMessage("", [ToolCall("c1", "read_skill_file", {"path": "SKILL.md"})]), AssistantMessage("ok")
        )
        answer = await conversation.send("hello", model)
        assert "read_skill_file" not in tool_names(model.seen[0][2])
        assert answer.tool_calls[0].result.is_error
        reply = await conversation.handle_command("/use summarize notes.txt")
        assert reply is not None and reply.ok, reply
        await conversation.send("again", model)
        assert "read_skill_file" not in tool_names(model.seen[-1][2])
