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

Per provider it prints the tool tokens per request (every tool definition the prompt carries: the ``tools``
given up front, plus, for a deferring model, the deferred ones the messages loaded, by a ``tool_reference``
or in a ``tool_search_output``, on every request after the load; the loaded part is printed apart), the
effective input cost (uncached 1x, cache reads 0.1x, writes 1.25x), the cost of the last 10 requests, the
share of input tokens read from the cache, and the toolsift/naive ratio against the goal (cost <= 0.20x the
naive agent's, >= 90 % of input tokens cached, tool tokens no more than toolsift's before the cache work).
A model with a provider-run search (Anthropic's ``bm25``, OpenAI's hosted ``tool_search``) also runs with
``on_demand=True``: every tool but ``search_tools`` deferred, each loaded when the model first calls it.
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
from _provider import TOKEN_ESTIMATE, Call, ProviderEndpoint, Reply, Request, count_tokens
from _report import save
from _search_eval import load_catalog, server_tools

from toolsift import ToolsiftError
from toolsift.agent import (
    ChatModel,
    ContextMessage,
    Message,
    ToolMessage,
    UserMessage,
)
from toolsift.agent._compact import compact_declaration  # what the agent loop sends the model
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
GOAL_RATIO, GOAL_CACHED = 0.20, 0.90
#: Tool tokens per request of toolsift's loop before the cache work (commit d4bf8e9, Anthropic format, the
#: recorded catalogue): the goal's "no higher than today".
GOAL_TOOL_TOKENS = 3_156
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
    """The scripted model's answers to the session, in order (the naive agent makes no search)."""
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


async def run_toolsift(box: Toolbox, model: ChatModel, session: Sequence[Step]) -> str:
    """The session through ``Conversation.send``; returns what the tool-list rule decided."""
    conversation = box.conversation(instructions=INSTRUCTIONS)
    for step in session:
        reply = await conversation.send(step.text, model)
        if step.command and not reply.command:
            raise RuntimeError(f"{step.text!r} was not taken as a command")
        failed = [m.result.text_content() for m in reply.tool_calls if m.result.is_error]
        if failed:
            raise RuntimeError(f"toolsift: a call of {step.text!r} failed: {failed[0]}")
    rules = getattr(conversation, "tool_list_rules", None)
    if rules is None:
        return ""
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
    return kept + ("\nload rule:" + "".join(f"\n    {line}" for line in loads) if loads else "")


NAIVE_SCOPE = TurnScope(skill_allowed=(f"{FLOW}__*", "*"), skill_disallowed=("search_tools",))


async def run_naive(box: Toolbox, model: ChatModel, session: Sequence[Step]) -> str:
    """Every tool every round, a fixed system prompt, a skill's text appended at ``/use``."""
    tools = box.registry.schemas_for_tools(NAIVE_SCOPE, model.format)
    history: list[Message] = []
    for step in session:
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
    return ""


# -- measuring -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Figures:
    requests: int
    tool_tokens: float
    loaded_tokens: float
    input_tokens: int
    cost: float
    last10: float
    cached: float
    note: str = ""

    @classmethod
    def of(cls, requests: Sequence[Request], note: str = "") -> Figures:
        usages = [r.usage for r in requests]
        total = sum(u.input_tokens for u in usages)
        return cls(
            len(usages),
            sum(u.tool_tokens for u in usages) / len(usages),
            sum(u.loaded_tokens for u in usages) / len(usages),
            total,
            sum(u.cost for u in usages),
            sum(u.cost for u in usages[-10:]),
            sum(u.cache_read for u in usages) / total,
            note,
        )


ModelFactory = Callable[[str], ChatModel]
Runner = Callable[[Toolbox, ChatModel, Sequence[Step]], Awaitable[str]]


async def measure(
    box: Toolbox, factory: ModelFactory, runner: Runner, session: Sequence[Step], *, naive: bool, verbose: bool
) -> Figures:
    async with ProviderEndpoint(script(session, naive=naive)) as endpoint:
        note = await runner(box, factory(endpoint.url), session)
    if verbose:
        print(f"  {'naive agent' if naive else 'toolsift'}, each request: input / read / written / tool tokens")
        for index, request in enumerate(endpoint.requests, 1):
            u, tools = request.usage, len(request.body.get("tools") or [])
            figures = f"{u.input_tokens:>9,} {u.cache_read:>9,} {u.cache_write:>7,} {u.tool_tokens:>7,}"
            print(f"    {index:3} {figures} ({tools} tools)")
    return Figures.of(endpoint.requests, note)


def providers(quick: bool) -> list[tuple[str, ModelFactory, ModelFactory]]:
    """(row label, toolsift's model, the naive agent's model), each built for an endpoint URL."""
    from toolsift.agent.llm.anthropic import AnthropicChatModel
    from toolsift.agent.llm.openai import OpenAIChatModel

    def claude(**options: Any) -> ModelFactory:
        return lambda url: AnthropicChatModel("claude-sonnet-5-5", api_key="k", base_url=url, **options)

    rows: list[tuple[str, ModelFactory, ModelFactory]] = [
        ("anthropic_deferral", claude(), claude(tool_search=None)),
        ("anthropic", claude(tool_search=None), claude(tool_search=None)),
    ]
    if quick:
        return rows
    rows.append(("anthropic_on_demand", claude(tool_search="bm25", on_demand=True), claude(tool_search=None)))

    def gpt(url: str) -> ChatModel:
        return OpenAIChatModel("gpt-5-mini", api_key="k", base_url=url + "/v1")

    rows.append(("openai_chat", gpt, gpt))
    try:  # the Responses adapter, where this checkout has it
        from toolsift.agent.llm.openai_responses import OpenAIResponsesModel
    except ImportError:
        return rows

    def responses(**options: Any) -> ModelFactory:
        return lambda url: OpenAIResponsesModel("gpt-5-mini", api_key="k", base_url=url + "/v1", **options)

    rows.append(("openai_responses_deferral", responses(), responses(tool_search=None)))
    rows.append(("openai_responses_on_demand", responses(on_demand=True), responses(tool_search=None)))
    rows.append(("openai_responses_client", responses(tool_search="client"), responses(tool_search=None)))
    rows.append(("openai_responses", responses(tool_search=None), responses(tool_search=None)))
    return rows


LABELS = {
    "anthropic_deferral": "Anthropic Messages, native deferral (tool_search='client')",
    "anthropic": "Anthropic Messages, no deferral (tool_search=None)",
    "anthropic_on_demand": "Anthropic Messages, everything deferred, loaded on demand by the server-side search "
    "(tool_search='bm25', on_demand=True)",
    "openai_chat": "OpenAI Chat Completions",
    "openai_responses_deferral": "OpenAI Responses, native deferral (tool_search='server', OpenAI's hosted search)",
    "openai_responses_on_demand": "OpenAI Responses, everything deferred, loaded on demand by the hosted search "
    "(on_demand=True)",
    "openai_responses_client": "OpenAI Responses, native deferral (tool_search='client')",
    "openai_responses": "OpenAI Responses, no deferral (tool_search=None)",
}


def print_row(row: str, ours: Figures, naive: Figures) -> dict[str, Any]:
    """Print one provider's figures beside the naive agent's; return the ones to save."""
    ratio, last = ours.cost / naive.cost, ours.last10 / naive.last10
    met = ratio <= GOAL_RATIO and ours.cached >= GOAL_CACHED and ours.tool_tokens <= GOAL_TOOL_TOKENS
    goal = "meets" if met else "misses"
    print(f"\n{LABELS[row]}")
    print(f"  {'':34}{'toolsift':>14}{'naive agent':>14}")
    print(f"  {'requests':34}{ours.requests:>14,}{naive.requests:>14,}")
    print(f"  {'tool tokens per request':34}{ours.tool_tokens:>14,.0f}{naive.tool_tokens:>14,.0f}")
    if ours.loaded_tokens:
        up_front = ours.tool_tokens - ours.loaded_tokens
        print(f"  {'  of which loaded in the messages':34}{ours.loaded_tokens:>14,.0f}   (up front: {up_front:,.0f})")
    print(f"  {'input tokens':34}{ours.input_tokens:>14,}{naive.input_tokens:>14,}")
    print(f"  {'effective input cost':34}{ours.cost:>14,.0f}{naive.cost:>14,.0f}   toolsift {ratio:.2f}x")
    print(f"  {'last 10 requests':34}{ours.last10:>14,.0f}{naive.last10:>14,.0f}   toolsift {last:.2f}x")
    print(f"  {'input tokens read from cache':34}{ours.cached:>14.1%}{naive.cached:>14.1%}")
    print(
        f"  goal (<= {GOAL_RATIO:.2f}x the naive cost, >= {GOAL_CACHED:.0%} cached, "
        f"<= {GOAL_TOOL_TOKENS:,} tool tokens): {goal}"
    )
    if ours.note:
        print(f"  {ours.note}")
    return {
        f"{row}_tool_tokens": ours.tool_tokens,
        f"{row}_loaded_tool_tokens": ours.loaded_tokens,
        f"{row}_naive_tool_tokens": naive.tool_tokens,
        f"{row}_cost_ratio": ratio,
        f"{row}_last10_ratio": last,
        f"{row}_cached_share": ours.cached,
        f"{row}_naive_cached_share": naive.cached,
    }


def print_compaction(box: Toolbox) -> dict[str, Any]:
    """Each server's tool definitions as exported and as the model is sent them (compact), in tokens."""
    print("tool definitions per server, exported -> sent compact (Anthropic format):")
    figures: dict[str, Any] = {}
    for server in sorted({tool.spec.server or "" for tool in box.registry} - {""}):
        names = {tool.spec.name for tool in box.registry.tools(server=server)}
        visible = [tool.spec.name for tool in box.registry.visible_tools(NAIVE_SCOPE)]
        exported = box.registry.schemas_for_tools(NAIVE_SCOPE, "anthropic")
        pairs = [(name, schema) for name, schema in zip(visible, exported, strict=True) if name in names]
        before = sum(count_tokens(json.dumps(schema, separators=(",", ":"))) for _, schema in pairs)
        after = sum(
            count_tokens(json.dumps(compact_declaration(schema, name.partition("__")[2]), separators=(",", ":")))
            for name, schema in pairs
        )
        print(f"  {server:14}{len(pairs):>5} tools {before:>9,} -> {after:>9,} ({1 - after / before:.1%} fewer)")
        figures[f"compaction_{server}_saved_share"] = 1 - after / before
    return figures


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
            figures.update(print_compaction(box))
            for row, ours, theirs in providers(quick):
                mine = await measure(box, ours, run_toolsift, session, naive=False, verbose=verbose)
                naive = await measure(box, theirs, run_naive, session, naive=True, verbose=verbose)
                figures.update(print_row(row, mine, naive))
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
