"""Ranking quality on a fixed corpus: the flow server's 214 tools plus the example skills.

The queries were written for this test as a user would phrase a need, mostly
without the tool's own words. The figures (top-1 and top-3 accuracy) are
printed with ``pytest -s`` and recorded in the change notes.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from toolsift.config import StdioServer
from toolsift.mcp_sessions._wrapper import tool_spec
from toolsift.registry import ToolContext, ToolRegistry, ToolResult, ToolSpec
from toolsift.search import SearchIndex
from toolsift.search._tokens import split_words, terms
from toolsift.skills import SkillsLoader

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples" / "servers"))
from _flow import CATALOG  # noqa: E402

F = "claude-flow__"
# (query, intended tool or skill)
QUERIES = [
    ("save a value so that I can recall it later", F + "memory_store"),
    ("look up what was stored under a key", F + "memory_retrieve"),
    ("find remembered entries that match a pattern", F + "memory_search"),
    ("take a backup of everything in memory", F + "memory_backup"),
    ("set an expiry time on a stored entry", F + "memory_ttl"),
    ("start a new swarm of agents with a mesh topology", F + "swarm_init"),
    ("add more agents to my swarm", F + "swarm_scale"),
    ("shut the whole swarm down", F + "swarm_destroy"),
    ("create a new coder agent", F + "agent_spawn"),
    ("read the messages waiting for an agent", F + "agent_inbox"),
    ("give this task to one particular agent", F + "agent_assign"),
    ("cancel a running task", F + "task_cancel"),
    ("split an objective into subtasks without creating them", F + "task_decompose"),
    ("run a task every night on a cron schedule", F + "task_schedule"),
    ("let the agents vote on a decision I propose", F + "consensus_propose"),
    ("take a distributed lock before editing shared files", F + "coordination_lock_acquire"),
    ("choose a leader among the agents", F + "coordination_leader_elect"),
    ("check a workflow definition for cycles without running it", F + "workflow_validate"),
    ("run a workflow with some input parameters", F + "workflow_execute"),
    ("start a workflow whenever someone pushes to git", F + "trigger_setup"),
    ("pick up my previous session where I left off", F + "session_restore"),
    ("how full is the context window", F + "session_context_get"),
    ("summarize old turns to shrink the context", F + "session_context_compact"),
    ("check a shell command against safety rules before it runs", F + "hooks_pre_command"),
    ("execute a shell command in the sandbox", F + "terminal_execute"),
    ("scan the project for leaked secrets and vulnerable dependencies", F + "security_scan"),
    ("which environment variables does the platform see", F + "system_env_list"),
    ("install a plugin from a registry", F + "system_plugin_install"),
    ("train a neural model on coordination data", F + "neural_train"),
    ("explain which input features mattered for a prediction", F + "neural_explain"),
    ("merge a pull request", F + "github_pr_manage"),
    ("search the issues of a repository", F + "github_issue_search"),
    ("create a new git branch from main", F + "github_branch_create"),
    ("how often was each tool called and by whom", F + "usage_stats"),
    ("latency distribution of tool calls with percentiles", F + "latency_histogram"),
    ("how many tokens did each agent consume", F + "token_usage"),
    ("notify a webhook when a metric crosses a threshold", F + "performance_alert_set"),
    ("compare current metrics with the saved baseline", F + "performance_compare"),
    ("remember decisions in project memory", "flow-memory"),
    ("draft release notes for a version", "release-notes"),
]


class CatalogTool:
    """A tool of the fixed corpus; ranking never calls it."""

    def __init__(self, spec: ToolSpec) -> None:
        self.spec = spec

    async def call(self, args: dict[str, object], ctx: ToolContext) -> ToolResult:  # pragma: no cover
        return ToolResult.text("not called")


def corpus_registry() -> ToolRegistry:
    """The flow server's tools as ``claude-flow__*`` (internal), exactly as a session would register them."""
    config = StdioServer(command="flow").with_name("claude-flow")
    registry = ToolRegistry()
    registry.replace_server(
        "claude-flow", [CatalogTool(tool_spec(config, entry.tool)) for entry in CATALOG], internal=True
    )
    return registry


@pytest.fixture(scope="module")
def index() -> SearchIndex:
    skills = SkillsLoader(project=ROOT / "examples" / "skills").load()
    return SearchIndex(corpus_registry(), skills)


def rank_of(index: SearchIndex, query: str, intended: str) -> int | None:
    names = [hit.document.name for hit in index.search(query, limit=10)]
    return names.index(intended) + 1 if intended in names else None


def test_ranking_finds_the_intended_tool_in_the_top_three_for_nine_queries_in_ten(index: SearchIndex) -> None:
    assert len(QUERIES) >= 30
    assert {want for _, want in QUERIES} <= {doc.name for doc in index.documents}
    ranks = {query: rank_of(index, query, want) for query, want in QUERIES}
    top1 = sum(rank == 1 for rank in ranks.values()) / len(QUERIES)
    top3 = sum(rank is not None and rank <= 3 for rank in ranks.values()) / len(QUERIES)
    print(f"\nranking on {len(index.documents)} documents, {len(QUERIES)} queries: top-1 {top1:.1%}, top-3 {top3:.1%}")
    misses = {query: rank for query, rank in ranks.items() if rank != 1}
    assert top3 >= 0.9, misses


def test_ranking_puts_an_exact_tool_name_first(index: SearchIndex) -> None:
    hits = index.search("claude-flow__memory_ttl", limit=3)
    assert hits[0].document.name == F + "memory_ttl" and hits[0].exact
    # The server's own name for the tool, alone or among other words, finds it too.
    assert index.search("use memory_compress please", limit=1)[0].document.name == F + "memory_compress"
    assert index.search("swarm_split", limit=1, server="claude-flow")[0].exact


def test_ranking_filters_by_server_and_kind(index: SearchIndex) -> None:
    with pytest.raises(
        LookupError, match="no searchable server is called 'nope'; servers with indexed tools: claude-flow"
    ):
        index.search("memory", server="nope")
    skills = index.search("memory", kind="skill")
    assert skills and all(hit.document.kind == "skill" for hit in skills)
    assert skills[0].document.name == "flow-memory"
    assert all(hit.document.kind == "tool" for hit in index.search("memory", kind="tool"))


def test_ranking_yields_nothing_for_words_no_document_holds(index: SearchIndex) -> None:
    assert index.search("xylophone quux") == []
    assert index.search("the of and") == []  # filler words only


def test_search_rejects_a_limit_below_one(index: SearchIndex) -> None:
    with pytest.raises(ValueError, match="limit must be at least 1, got 0"):
        index.search("memory", limit=0)


def test_tokens_split_names_camel_case_and_fold_plurals() -> None:
    assert split_words("claude-flow__memory_store") == ["claude", "flow", "memory", "store"]
    assert split_words("listMcpResources MCPServer v2beta") == [
        "list",
        "mcp",
        "resources",
        "mcp",
        "server",
        "v",
        "2",
        "beta",
    ]
    assert split_words("ÜberFast") == ["über", "fast"]
    assert terms("the stores and entries of classes") == ["store", "entry", "class"]
    assert terms("status analysis run it before the edit") == ["status", "analysis", "run", "before", "edit"]
    # Abbreviations common in tool names also give the word they stand for.
    assert terms("config_init") == ["config", "configuration", "init", "initialize"]
