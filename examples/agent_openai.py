"""A complete agent loop with the OpenAI SDK: toolsift picks the tools, the model calls them.

    pip install -e ".[openai]"
    export OPENAI_API_KEY=sk-...            # or OPENAI_BASE_URL for a local OpenAI-compatible server
    python examples/agent_openai.py [--model gpt-4.1-mini] [--config examples/toolsift.json]

Type a message, or `/use flow-memory remember the release date`, `/skills`, `/tools`, `/unuse`.
An empty line or Ctrl-D ends the session. The example servers must be reachable: for the
notes server, run `python examples/servers/notes_http.py --port 8765` first, or drop it from
the config.
"""

from __future__ import annotations

import argparse
import os
import sys

import anyio

from toolsift.agent.llm.openai import OpenAIChatModel
from toolsift.toolbox import Toolbox

INSTRUCTIONS = "You are a careful assistant. Use the tools you are given; say so when none fits."


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=os.environ.get("OPENAI_MODEL", "gpt-4.1-mini"))
    parser.add_argument("--config", default=os.path.join(os.path.dirname(__file__), "toolsift.json"))
    args = parser.parse_args()
    os.environ.setdefault("TOOLSIFT_PYTHON", sys.executable)  # the example config starts servers with it

    model = OpenAIChatModel(
        args.model, api_key=os.environ.get("OPENAI_API_KEY", "unused"), base_url=os.environ.get("OPENAI_BASE_URL")
    )
    async with Toolbox.from_config(args.config) as box:
        chat = box.conversation(instructions=INSTRUCTIONS)
        while True:
            line = await anyio.to_thread.run_sync(_ask)
            if not line:
                break
            reply = await chat.send(line, model)  # a /command is answered locally, without the model
            for notice in reply.notices:  # e.g. the active skill's SKILL.md was removed or broke
                print(f"  [{notice}]")
            for call in reply.tool_calls:
                status = "error" if call.result.is_error else "ok"
                print(f"  [tool {call.call.name}: {status}]")
            print(reply.text)


def _ask() -> str:
    try:
        return input("you> ").strip()
    except EOFError:
        return ""


if __name__ == "__main__":
    anyio.run(main)
