"""LangChain's own MCP adapter (``langchain.mcp``) with toolsift as its one MCP server.

    pip install -e . 'langchain[mcp,openai]'
    export OPENAI_API_KEY=sk-...
    python examples/agent_langchain_mcp.py [--model openai:gpt-5.4] [--config examples/toolsift.json]

``MCPAdapter`` starts ``toolsift serve --gateway`` over stdio and turns what it
serves into LangChain tools for ``create_agent``: the configured servers' tools
(every call through the five layers and the audit log), ``skill__<name>`` tools
whose answer is the skill's body, its instructions, with the tools it works
with, and ``search_tools`` for the tools of internal servers. Type a message;
an empty line or Ctrl-D ends the session.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from typing import Any

import anyio
from fastmcp.client.transports import StdioTransport
from langchain.agents import create_agent

with warnings.catch_warnings():  # the namespace says on import that it is in beta (after langchain's own filters)
    warnings.simplefilter("ignore")
    from langchain.mcp import MCPAdapter

INSTRUCTIONS = (
    "You are a careful assistant. When a task fits a skill (skill__<name> tools), call it first and "
    "follow the instructions it returns; use the tools you are given and say so when none fits."
)


def toolsift_server(config: str | os.PathLike[str], *, gateway: bool = True) -> StdioTransport:
    """``toolsift serve`` for ``config`` over stdio, as ``MCPAdapter`` starts it.

    The interpreter running this is the one with toolsift installed; the environment is passed on
    for the config's ``${VAR}`` references (toolsift still gives each MCP server it starts only a
    minimal environment plus that server's ``env``).
    """
    args = ["-m", "toolsift.serve", "--config", os.fspath(config)] + (["--gateway"] if gateway else [])
    return StdioTransport(command=sys.executable, args=args, env=dict(os.environ))


class Chat:
    """One conversation with a LangChain agent over toolsift's tools."""

    def __init__(self, agent: Any) -> None:
        self.agent = agent
        self.messages: list[Any] = []

    @classmethod
    async def start(cls, adapter: MCPAdapter, model: Any) -> Chat:
        """An agent with ``model`` (a LangChain chat model or ``provider:name``) and the tools toolsift serves."""
        return cls(create_agent(model, await adapter.list_tools(), system_prompt=INSTRUCTIONS))

    async def ask(self, text: str) -> str:
        """The agent's answer to ``text``, after every tool call it made."""
        state = await self.agent.ainvoke({"messages": [*self.messages, {"role": "user", "content": text}]})
        self.messages = state["messages"]
        return str(self.messages[-1].content)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=os.environ.get("LANGCHAIN_MODEL", "openai:gpt-5.4"))
    parser.add_argument("--config", default=os.path.join(os.path.dirname(__file__), "toolsift.json"))
    args = parser.parse_args()
    os.environ.setdefault("TOOLSIFT_PYTHON", sys.executable)  # the example config starts servers with it
    async with MCPAdapter(toolsift_server(args.config)) as adapter:
        chat = await Chat.start(adapter, args.model)
        while line := await anyio.to_thread.run_sync(_ask):
            print(await chat.ask(line))


def _ask() -> str:
    try:
        return input("you> ").strip()
    except EOFError:
        return ""


if __name__ == "__main__":
    anyio.run(main)
