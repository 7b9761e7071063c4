"""Prompt-cache cost of one agent session: toolsift's own loop beside a naive all-tools agent, same run.

Run: python benchmarks/bench_prompt_cache.py [--quick] [--verbose]

The session: 30 user messages through ``Toolbox`` and ``Conversation.send`` with the real ``anthropic`` and
``openai`` adapters, pointed by ``base_url`` at the loopback provider of ``_provider.py``, which records each
request and computes its usage by the provider's documented cache rules (see that module). The parts are real:

- global servers: the example ``general`` and ``conformance`` servers over stdio, and ``mcp-server-time``
  when installed;
- an internal catalogue of 200-350 tools: the real claude-flow server when ``@claude-flow/cli`` is installed
  under ``.interop``, else its recorded catalogue (``fixtures/tool_catalog.json``, 353 tools) registered as
  internal tools that answer every call;
- the ``flow-memory``, ``flow-swarm`` and ``orchestrate`` example skills, used with ``/use``, switched,
  and dropped with ``/unuse``; two ``search_tools`` calls that each unlock a claude-flow tool, then call it.

The anchor, in the same run on the same transcript: a naive agent that sends every tool (globals and the whole
catalogue) in every request under a fixed system prompt, with a skill's text appended as a context message at
``/use``, through the same adapter and so the same breakpoints. It needs no search, so it skips those rounds.

Per provider it prints, first for a plain model name (each adapter's defaults for ``claude-sonnet-5-5`` and
``gpt-5.4``), then for the flags that opt out: the tool tokens per request (every tool definition the model is
offered: the ``tools`` given up front, plus, for a deferring model, the deferred ones the messages loaded, by a
``tool_reference``, a ``tool_addition`` or in a ``tool_search_output``, on every request after the load, less
those a ``tool_removal`` withdrew; the loaded part is printed apart), those of the request before each stretch of
skills and of the one after its ``/unuse``, the effective input cost (uncached 1x, cache reads 0.1x, writes
1.25x), the cost of the last 10 requests, the share of input tokens read from the cache, the bill in USD by the
adapters' price table (toolsift's and the naive agent's), and the plain names' ratio against the goal (Anthropic
and Responses: <= 0.15x the naive agent's cost and >= 95 % cached; Chat Completions: <= 0.20x and >= 90 %; the
tools offered after each ``/unuse`` no more than before its ``/use``). A model whose provider searches makes no
``search_tools`` call (it is not offered): it calls the tool, and the endpoint's search loads it.
``--quick`` runs the first 10 messages and only the Anthropic rows (for CI); ``--verbose`` also prints every
request's tokens (input, read, written, tool definitions), which shows where a prefix broke.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from _cache_figures import Figures, Ran, print_compaction, print_row
from _provider import TOKEN_ESTIMATE, Call, ProviderEndpoint, Reply
from _report import save
from _search_eval import load_catalog, server_tools

from toolsift import ToolsiftError
from toolsift.agent import (
    ChatModel,
    ContextMessage,
    Message,
    ToolMessage,
    Usage,
    UserMessage,
)
from toolsift.registry import ToolContext, ToolResult, ToolSpec, TurnScope
from toolsift.skills import bind_arguments
from toolsift.toolbox import Toolbox

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
INTEROP = Path(os.environ.get("TOOLSIFT_INTEROP_DIR", ROOT / ".interop"))
CLAUDE_FLOW = INTEROP / "node_modules" / ".bin" / "claude-flow"
INSTRUCTIONS = (
    "You are the project assistant of a small software team. Answer briefly and precisely. Use the tools "
    "you are given; when none fits, say so and suggest what would. Never invent tool results. When a skill "
    "is active, follow its instructions for as long as it stays active. Report what each call did.\n"
) * 3
#: The goal of a plain model name (the provider's defaults), as (cost ratio to the naive agent, share cached);
#: every row also wants the tool tokens per request after the last ``/unuse`` no higher than before the first ``/use``.
GOALS = {"anthropic": (0.15, 0.95), "openai_responses": (0.15, 0.95), "openai_chat": (0.20, 0.90)}
QUICK_MESSAGES = 10
FLOW = "claude-flow"


@dataclass(frozen=True)
class Step:
    """A slash command, or a user message and the tool rounds the model makes before answering."""

    text: str
    rounds: tuple[tuple[Call, ...], ...] = ()
    search: str | None = None  # a tool found by search_tools first (the naive agent calls it directly)

    @property
    def command(self) -> bool:
        return self.text.startswith("/")


def flow(tool: str, **arguments: Any) -> Call:
    return Call(f"{FLOW}__{tool}", arguments)


def general(tool: str, **arguments: Any) -> Call:
    return Call(f"general__{tool}", arguments)


SESSION: tuple[Step, ...] = (
    Step("Hello! What can you do for me today?"),
    Step("Echo 'release 2.1 is on track' so I can see the tools work.", ((general("echo", text="release 2.1"),),)),
    Step("What is 1234 plus 4321?", ((general("add", a=1234, b=4321),),)),
    Step("/use flow-memory"),
    Step(
        "Remember that the release date is 2026-12-01.", ((flow("memory_store", key="release", value="2026-12-01"),),)
    ),
    Step("And that the release manager is Dana.", ((flow("memory_store", key="manager", value="Dana"),),)),
    Step("When is the release again?", ((flow("memory_retrieve", key="release"),),)),
    Step("Search memory for anything about the manager.", ((flow("memory_search", query="manager"),),)),
    Step("Thanks, that is all I need from memory for now."),
    Step('/use flow-swarm objective="prepare the 2.1 release" topology=mesh'),
    Step("Start the swarm.", ((flow("swarm_init", topology="mesh"),),)),
    Step(
        "Spawn a tester and a reviewer.",
        ((flow("agent_spawn", agentType="tester"), flow("agent_spawn", agentType="reviewer")),),
    ),
    Step("How is the swarm doing?", ((flow("swarm_status"),),)),
    Step("List the agents.", ((flow("agent_list"),),)),
    Step("Good. Summarise the swarm's plan in two sentences."),
    Step("/unuse"),
    Step(
        "Give me a performance report of the project.",
        ((Call("search_tools", {"query": f"{FLOW}__performance_report"}),), (flow("performance_report"),)),
        search="performance_report",
    ),
    Step("Which part is slowest, from that report?"),
    Step("Echo 'performance checked'.", ((general("echo", text="performance checked"),),)),
    Step('/use orchestrate goal="ship release 2.1"'),
    Step("Create the release tasks.", ((flow("task_create", type="release", description="cut 2.1"),),)),
    Step("Create a workflow for them.", ((flow("workflow_create", name="release-2.1"),),)),
    Step("Run it.", ((flow("workflow_run", workflowId="release-2.1"),),)),
    Step("What is the workflow's status?", ((flow("workflow_status", workflowId="release-2.1"),),)),
    Step("List the open tasks.", ((flow("task_list"),),)),
    Step("Which of them could block the release?"),
    Step("/use flow-memory"),
    Step("Store that the workflow started.", ((flow("memory_store", key="workflow", value="started"),),)),
    Step("What do we know about the release?", ((flow("memory_search", query="release"),),)),
    Step("/unuse"),
    Step(
        "Analyse the GitHub repository.",
        ((Call("search_tools", {"query": f"{FLOW}__github_repo_analyze"}),), (flow("github_repo_analyze"),)),
        search="github_repo_analyze",
    ),
    Step("Any risks from that analysis?"),
    Step("Echo 'analysis done'.", ((general("echo", text="analysis done"),),)),
    Step("What is 2 plus 2?", ((general("add", a=2, b=2),),)),
    Step("Thanks, what did we do today?"),
    Step("Great, that's all."),
)


def first_messages(session: Sequence[Step], count: int) -> tuple[Step, ...]:
    """The session up to its ``count``-th user message (commands before it included)."""
    seen = 0
    for index, step in enumerate(session):
        seen += not step.command
        if seen == count:
            return tuple(session[: index + 1])
    return tuple(session)


def script(session: Sequence[Step], *, naive: bool) -> list[Reply]:
    """The scripted model's answers to the session, in order (the naive agent, and a model whose provider
    searches, make no search_tools call)."""
    replies: list[Reply] = []
    for step in session:
        if step.command:
            continue
        rounds = step.rounds[1:] if naive and step.search else step.rounds
        replies += [Reply(calls=calls) for calls in rounds]
        replies.append(Reply(text=f"Done: {step.text[:60]}"))
    return replies


class RecordedTool:
    """A recorded catalogue tool that answers every call (the claude-flow server is not installed)."""

    def __init__(self, spec: ToolSpec) -> None:
        self.spec = spec

    async def call(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return ToolResult.text(f"{self.spec.name}: ok ({json.dumps(args, sort_keys=True)})")


def write_config(folder: Path) -> Path:
    python = sys.executable
    servers: dict[str, Any] = {
        "general": {"command": python, "args": [str(EXAMPLES / "servers" / "general.py")], "internalOnly": False},
        "conformance": {
            "command": python,
            "args": [str(EXAMPLES / "servers" / "conformance.py")],
            "internalOnly": False,
        },
    }
    time_server = shutil.which("mcp-server-time", path=f"{Path(python).parent}{os.pathsep}{os.environ['PATH']}")
    if time_server:
        servers["time"] = {"command": time_server, "internalOnly": False, "protocol": "legacy"}
    if CLAUDE_FLOW.exists():
        servers[FLOW] = {
            "command": str(CLAUDE_FLOW),
            "args": ["mcp", "start"],
            "cwd": str(folder),
            "env": {"HOME": str(folder)},
            "internalOnly": True,
            "protocol": "legacy",
            "timeout": 120,
        }
    config = {
        "tools": {"mcpServers": servers},
        "skills": {"paths": [str(EXAMPLES / "skills")], "userSkills": False},
        "agents": {"default": {"permissions": {"level": "admin"}, "limits": {"maxRounds": 10}}},
    }
    path = folder / "toolsift.json"
    path.write_text(json.dumps(config, indent=2))
    return path


# -- the two agents -------------------------------------------------------------------------------


async def run_toolsift(box: Toolbox, model: ChatModel, session: Sequence[Step]) -> Ran:
    """The session through ``Conversation.send``; returns what the tool-list rule decided, and the usage
    the replies reported (priced by the adapter's table)."""
    conversation = box.conversation(instructions=INSTRUCTIONS)
    spent, requests = Usage(), []
    for step in session:
        reply = await conversation.send(step.text, model)
        spent += reply.usage
        requests.append(0 if reply.command else reply.rounds + 1)
        if step.command and not reply.command:
            raise RuntimeError(f"{step.text!r} was not taken as a command")
        failed = [m.result.text_content() for m in reply.tool_calls if m.result.is_error]
        if failed:
            raise RuntimeError(f"toolsift: a call of {step.text!r} failed: {failed[0]}")
    rules = getattr(conversation, "tool_list_rules", None)
    if rules is None:
        return Ran("", spent, tuple(requests))
    lines = [
        f"{'kept' if d.keep else 'removed'} {len(d.left)} tool(s) that left the scope ({d.left_tokens:,} tokens, "
        f"{d.expected_requests} requests to come): keeping costs {d.keep_cost:,.0f}, removing {d.removal_cost:,.0f}"
        for d in rules(model.format)
    ]
    kept = "tool-list rule:" + "".join(f"\n    {line}" for line in lines) if lines else "tool-list rule: no tool left"
    loads = [
        f"skill {d.skill}: {len(d.tools)} tool(s) ({d.tool_tokens:,} tokens) "
        f"{'by reference' if d.by_reference else 'up front'}: reading them {d.expected_requests} requests costs "
        f"{d.reference_cost:,.0f}, rewriting the {d.rewritten_tokens:,} tokens after the tools {d.up_front_cost:,.0f}"
        for d in getattr(conversation, "load_rules", list)()
    ]
    note = kept + ("\nload rule:" + "".join(f"\n    {line}" for line in loads) if loads else "")
    return Ran(note, spent, tuple(requests))


NAIVE_SCOPE = TurnScope(skill_allowed=(f"{FLOW}__*", "*"), skill_disallowed=("search_tools",))


async def run_naive(box: Toolbox, model: ChatModel, session: Sequence[Step]) -> Ran:
    """Every tool every round, a fixed system prompt, a skill's text appended at ``/use``."""
    tools = box.registry.schemas_for_tools(NAIVE_SCOPE, model.format)
    history: list[Message] = []
    spent, requests = Usage(), []
    for step in session:
        requests.append(0)
        if step.text.startswith("/use "):
            name, _, arguments = step.text.removeprefix("/use ").partition(" ")
            skill: Any = box.catalog.get(name)  # a SKILL.md skill or a server's prompt
            text = await skill.render(bind_arguments(skill, arguments))
            history.append(ContextMessage(f"# Skill: {name}\n\n{text}", source=f"skill:{name}"))
            continue
        if step.command:
            continue
        history.append(UserMessage(step.text))
        while True:
            answer = await model.complete(INSTRUCTIONS, history, tools)
            spent += answer.usage or Usage()
            requests[-1] += 1
            history.append(answer)
            if not answer.tool_calls:
                break
            for call in answer.tool_calls:
                given = call.arguments if isinstance(call.arguments, dict) else {}
                try:
                    result = await box.registry.execute(call.name, given, NAIVE_SCOPE)
                except ToolsiftError as exc:
                    raise RuntimeError(f"naive: {call.name} failed: {exc}") from exc
                history.append(ToolMessage(call, result))
    return Ran("", spent, tuple(requests))


# -- measuring -------------------------------------------------------------------------------------


ModelFactory = Callable[[str], ChatModel]
Runner = Callable[[Toolbox, ChatModel, Sequence[Step]], Awaitable[Ran]]


async def measure(
    box: Toolbox, factory: ModelFactory, runner: Runner, session: Sequence[Step], *, naive: bool, verbose: bool
) -> Figures:
    # A model whose provider's search loads what it calls is not given search_tools: it calls the tool directly.
    searchless = naive or bool(getattr(factory("http://127.0.0.1:9"), "loads_on_demand", False))
    async with ProviderEndpoint(script(session, naive=searchless)) as endpoint:
        ran = await runner(box, factory(endpoint.url), session)
    if verbose:
        print(f"  {'naive agent' if naive else 'toolsift'}, each request: input / read / written / tool tokens")
        for index, request in enumerate(endpoint.requests, 1):
            u, tools = request.usage, len(request.body.get("tools") or [])
            figures = f"{u.input_tokens:>9,} {u.cache_read:>9,} {u.cache_write:>7,} {u.tool_tokens:>7,}"
            print(f"    {index:3} {figures} ({tools} tools)")
    return Figures.of(endpoint.requests, [step.text for step in session], ran)


def providers(quick: bool) -> list[tuple[str, ModelFactory, ModelFactory]]:
    """(row label, toolsift's model, the naive agent's model), each built for an endpoint URL: first what a
    plain model name gets (each adapter's defaults for the model), then the settings a flag opts into."""
    from toolsift.agent.llm.anthropic import AnthropicChatModel
    from toolsift.agent.llm.openai import OpenAIChatModel
    from toolsift.agent.llm.openai_responses import OpenAIResponsesModel

    def claude(**options: Any) -> ModelFactory:
        return lambda url: AnthropicChatModel(CLAUDE, api_key="k", base_url=url, **options)

    def responses(**options: Any) -> ModelFactory:
        return lambda url: OpenAIResponsesModel(GPT, api_key="k", base_url=url + "/v1", **options)

    def chat(url: str) -> ChatModel:
        return OpenAIChatModel(GPT, api_key="k", base_url=url + "/v1")

    naive_claude, naive_responses = claude(tool_search=None), responses(tool_search=None)
    rows: list[tuple[str, ModelFactory, ModelFactory]] = [
        ("anthropic", claude(), naive_claude),
        ("anthropic_client", claude(tool_search="client"), naive_claude),
    ]
    if quick:
        return rows
    return [
        *rows,
        ("anthropic_no_search", claude(tool_search=None), naive_claude),
        ("openai_chat", chat, chat),
        ("openai_responses", responses(), naive_responses),
        ("openai_responses_listed", responses(on_demand=False), naive_responses),
        ("openai_responses_client", responses(tool_search="client"), naive_responses),
        ("openai_responses_no_search", responses(tool_search=None), naive_responses),
    ]


CLAUDE, GPT = "claude-sonnet-5-5", "gpt-5.4"
LABELS = {
    "anthropic": f"Anthropic Messages, anthropic:{CLAUDE} (default: everything deferred to Anthropic's search, "
    "loaded on demand)",
    "anthropic_client": "Anthropic Messages, tool_search='client' (toolsift's search_tools loads by reference)",
    "anthropic_no_search": "Anthropic Messages, tool_search=None (no deferral)",
    "openai_chat": f"OpenAI Chat Completions, openai:{GPT}",
    "openai_responses": f"OpenAI Responses, openai-responses:{GPT} (default: everything deferred to the hosted "
    "search, loaded on demand)",
    "openai_responses_listed": "OpenAI Responses, on_demand=False (hosted search, globals and skills listed)",
    "openai_responses_client": "OpenAI Responses, tool_search='client'",
    "openai_responses_no_search": "OpenAI Responses, tool_search=None (no deferral)",
}


async def main(quick: bool, verbose: bool = False) -> dict[str, Any]:
    session = first_messages(SESSION, QUICK_MESSAGES) if quick else SESSION
    messages = sum(not step.command for step in session)
    with tempfile.TemporaryDirectory() as folder:
        async with Toolbox.from_config(write_config(Path(folder))) as box:
            if not CLAUDE_FLOW.exists():
                recorded = [RecordedTool(t.spec) for t in server_tools(FLOW, load_catalog()[FLOW])]
                box.registry.replace_server(FLOW, recorded, internal=True)
            catalogue = len(box.registry.tools(server=FLOW))
            globals_ = sorted({t.spec.server or "" for t in box.registry.visible_tools(TurnScope())} - {""})
            print(f"{messages} user messages; global servers {', '.join(globals_)}; {catalogue} internal {FLOW} tools")
            print(f"({'the real server' if CLAUDE_FLOW.exists() else 'recorded catalogue'}); tokens: {TOKEN_ESTIMATE}")
            figures: dict[str, Any] = {"messages": messages, "internal_tools": catalogue, "tokens": TOKEN_ESTIMATE}
            figures.update(print_compaction(box, NAIVE_SCOPE))
            for row, ours, theirs in providers(quick):
                mine = await measure(box, ours, run_toolsift, session, naive=False, verbose=verbose)
                naive = await measure(box, theirs, run_naive, session, naive=True, verbose=verbose)
                goal = None if quick else GOALS.get(row)  # the goal is the whole session's
                figures.update(print_row(row, LABELS[row], mine, naive, goal))
    return figures


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the first 10 messages, Anthropic only (for CI)")
    parser.add_argument("--verbose", action="store_true", help="also print every request's figures")
    options = parser.parse_args()
    quick = options.quick
    results = anyio.run(main, quick, options.verbose)
    if not quick:
        save("prompt_cache", results)
