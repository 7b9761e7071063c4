"""An agent loop written against the raw Anthropic SDK, with toolsift choosing the tools.

    pip install -e ".[anthropic]"
    export ANTHROPIC_API_KEY=sk-ant-...        # ANTHROPIC_BASE_URL reaches another endpoint
    python examples/agent_anthropic.py [--model claude-sonnet-5-5] [--config examples/toolsift.json]

Where agent_openai.py lets `Conversation.send` drive the loop, this one drives it by hand:
each round asks toolsift for the turn (`chat.turn("anthropic")`: the schemas the active skill
allows) and for what the model should know (`chat.instructions_now("anthropic")`: base
instructions, the skill's body, servers' instructions, as one text, since this loop keeps its
own messages), and runs the model's tool calls through `chat.call_tool`, which applies the
five layers and caps each result. Any SDK can be wired the same way.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

import anthropic
import anyio

from toolsift.agent import ToolCall, result_text
from toolsift.toolbox import Toolbox


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=os.environ.get("ANTHROPIC_MODEL", "claude-sonnet-5-5"))
    parser.add_argument("--config", default=os.path.join(os.path.dirname(__file__), "toolsift.json"))
    args = parser.parse_args()
    os.environ.setdefault("TOOLSIFT_PYTHON", sys.executable)  # the example config starts servers with it
    client = anthropic.AsyncAnthropic(max_retries=0)

    async with Toolbox.from_config(args.config) as box:
        chat = box.conversation()
        messages: list[dict[str, Any]] = []
        while line := await anyio.to_thread.run_sync(_ask):
            command = await chat.handle_command(line)  # /use, /unuse, /skills, /tools
            if command is not None:
                print(command.text)
                continue
            messages.append({"role": "user", "content": line})
            for _ in range(chat.limits.max_rounds):
                await chat.refresh_skill()  # follow edits to the active skill's SKILL.md
                for notice in chat.take_notices():
                    print(f"  [{notice}]")
                turn = chat.turn("anthropic")
                response = await client.messages.create(
                    model=args.model,
                    max_tokens=2048,
                    system=chat.instructions_now("anthropic") or "You are helpful.",
                    tools=turn.tools,
                    messages=messages,
                )
                messages.append({"role": "assistant", "content": [b.model_dump() for b in response.content]})
                uses = [block for block in response.content if block.type == "tool_use"]
                if not uses:
                    print("".join(block.text for block in response.content if block.type == "text"))
                    break
                results = []
                for use in uses:
                    done = await chat.call_tool(ToolCall(use.id, use.name, dict(use.input)), turn.scope)
                    print(f"  [tool {use.name}: {'error' if done.result.is_error else 'ok'}]")
                    results.append(
                        {
                            "type": "tool_result",
                            "tool_use_id": use.id,
                            "content": result_text(done.result),
                            "is_error": done.result.is_error,
                        }
                    )
                messages.append({"role": "user", "content": results})


def _ask() -> str:
    try:
        return input("you> ").strip()
    except EOFError:
        return ""


if __name__ == "__main__":
    anyio.run(main)
