"""The public multi-server evaluations (ETOM, LiveMCPBench) on small slices written here in each dataset's format.

The datasets themselves are not in this repository (nor installed in CI): these
slices check that the loaders read the real layouts, that a need is met by any
of its tools, that metrics and paired intervals come out right, and that the
runner prints, saves and compares what it measured.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import _public_etom
import _public_livemcp
from _public_eval import Catalogue, Metrics, Outcome, Query, evaluate, index_ranker, paired_gap, plain_bm25s, split_of
from _search_eval import backends

ADDRESS = {"type": "object", "properties": {"to": {"type": "string", "description": "Recipient address"}}}


def etom_tool(name: str, description: str) -> dict[str, Any]:
    return {"tool_name": name, "tool_description": description, "input_schema": ADDRESS}


def truth(server: str, tool: str) -> dict[str, Any]:
    return {
        "tool_id": f"{server}::{tool}",
        "server_name": server,
        "tool_name": tool,
        "description": "",
        "dependencies": [],
    }


def write_etom(folder: Path) -> Path:
    """Three servers (two of the same title), and a query file per level as ETOM writes them."""
    servers = [
        ("Mail Relay: SMTP", "Email over SMTP for agents", [etom_tool("send", "Deliver a message")]),
        ("Postman MCP Server", "Collections", [etom_tool("run_collection", "Run a Postman collection")]),
        ("postman-mcp-server", "Postman API", [etom_tool("run_collection", "Run a collection of requests")]),
    ]
    registry = {
        "total_servers": 3,
        "total_tools": 3,
        "servers": [
            {"server_name": title, "server_description": about, "server_summary": "", "categories": [], "tools": tools}
            for title, about, tools in servers
        ],
    }
    (folder / "data" / "queries").mkdir(parents=True)
    (folder / "data" / "mcp_registry.json").write_text(json.dumps(registry))
    equivalent = [truth("Postman MCP Server", "run_collection"), truth("postman-mcp-server", "run_collection")]
    levels: dict[int, list[dict[str, Any]]] = {
        1: [
            {
                "query_id": 1,
                "query": "email the report to Ann",
                "ground_truth_tools": [truth("Mail Relay: SMTP", "send")],
            }
        ],
        2: [{"query_id": 1, "query": "run my API collection", "ground_truth_tools": [equivalent]}],
        3: [
            {"query_id": 1, "query": "gone", "ground_truth_tools": [truth("Nowhere", "vanished")]},
            {
                "query_id": 2,
                "query": "run it twice",
                "ground_truth_tools": [truth("postman-mcp-server", "run_collection")],
            },
        ],
        4: [
            {
                "query_id": 1,
                "query": "run the collection, then email the results",
                "ground_truth_tools": [
                    equivalent,
                    [truth("Mail Relay: SMTP", "send"), truth("Mail Relay: SMTP", "fax")],
                ],
            }
        ],
    }
    for level, queries in levels.items():
        (folder / "data" / "queries" / f"level_{level}.json").write_text(json.dumps(queries))
    return folder


def write_livemcp(folder: Path) -> Path:
    """Two tools.json entries (one keyed by a title, not a config key) and annotations as LiveMCPBench writes them."""
    listing = [
        {"name": "read_file", "description": "Read a file", "inputSchema": {"type": "object"}, "annotations": None},
        {"name": "zip", "description": "Compress files", "inputSchema": {"type": "object"}},
    ]
    entries = [
        {
            "name": "Files",
            "description": "Local files",
            "tools": {"filesystem": {"server_name": "fs", "tools": listing}},
        },
        {
            "name": "Desktop",
            "description": "Desktop commands",
            "tools": {"Ant Design Components": {"server_name": "ant", "tools": listing[:1]}},
        },
    ]
    tasks = [
        {
            "task_id": "t-1",
            "Question": "Read notes.txt and zip it",
            "Annotator Metadata": {"Tools": "1. read_file\n2. zip"},
        },
        {"task_id": "t-2", "Question": "Search the web", "Annotator Metadata": {"Tools": "1. ddg-search"}},
        {
            "task_id": "t-3",
            "Question": "Read it",
            "Annotator Metadata": {"Tools": "1. read_file\n2. read_file\n3.  `nope`"},
        },
    ]
    (folder / "tools" / "LiveMCPTool").mkdir(parents=True)
    (folder / "annotated_data").mkdir()
    (folder / "tools" / "LiveMCPTool" / "tools.json").write_text(json.dumps(entries))
    (folder / "annotated_data" / "all_annotations.json").write_text(json.dumps(tasks))
    return folder


def test_etom_keeps_each_server_its_tools_and_a_need_is_met_by_any_equivalent_tool(tmp_path: Path) -> None:
    [catalogue] = _public_etom.load(write_etom(tmp_path))
    assert catalogue.servers.keys() == {"mail-relay-smtp", "postman-mcp-server", "postman-mcp-server-2"}
    assert catalogue.about["mail-relay-smtp"] == "Mail Relay: SMTP Email over SMTP for agents"
    assert catalogue.servers["mail-relay-smtp"][0] == {
        "name": "send",
        "description": "Deliver a message",
        "inputSchema": ADDRESS,
    }
    queries = {query.id: query for query in catalogue.queries}
    assert list(queries) == ["level1-1", "level2-1", "level3-2", "level4-1"]  # level3-1 names no listed tool
    both = frozenset({"postman-mcp-server__run_collection", "postman-mcp-server-2__run_collection"})
    assert queries["level2-1"].needs == (both,)
    assert queries["level4-1"].needs == (both, frozenset({"mail-relay-smtp__send"}))
    assert catalogue.absent == ("Nowhere::vanished", "Mail Relay: SMTP::fax")
    assert {query.kind for query in catalogue.queries} == {"level1", "level2", "level3", "level4"}
    assert all(query.split == split_of(query.id) for query in catalogue.queries)


def test_livemcpbench_names_tools_without_servers_and_is_held_out_entirely(tmp_path: Path) -> None:
    [catalogue] = _public_livemcp.load(write_livemcp(tmp_path))
    assert catalogue.servers.keys() == {"filesystem", "ant-design-components"}
    assert catalogue.about["filesystem"] == "Files Local files"
    queries = {query.id: query for query in catalogue.queries}
    assert list(queries) == ["t-1", "t-3"]  # t-2 names only a tool no server lists
    read = frozenset({"filesystem__read_file", "ant-design-components__read_file"})
    assert queries["t-1"].needs == (read, frozenset({"filesystem__zip"}))
    assert queries["t-3"].needs == (read,)  # named twice, needed once
    assert catalogue.absent == ("ddg-search", "nope")
    assert {query.split for query in catalogue.queries} == {"heldout"} == set(_public_livemcp.SOURCE.splits)


def test_numbered_tool_lists_are_read_however_annotators_wrote_them() -> None:
    assert _public_livemcp.tool_names("1. a_b\n2) c-d\n\n 3 、 `e`\nf") == ["a_b", "c-d", "e", "f"]


@pytest.mark.parametrize(
    ("relative", "content", "message"),
    [
        ("data/mcp_registry.json", "{", "not JSON"),
        ("data/mcp_registry.json", '{"servers": [{"name": "x"}]}', "missing or wrong field 'server_name'"),
        ("data/queries/level_3.json", '[{"query": "x"}]', "missing or wrong field 'ground_truth_tools'"),
    ],
)
def test_etom_files_not_in_its_format_are_named(tmp_path: Path, relative: str, content: str, message: str) -> None:
    write_etom(tmp_path)
    (tmp_path / relative).write_text(content)
    with pytest.raises(ValueError, match=f"{relative}: .*{message}"):
        _public_etom.load(tmp_path)


@pytest.mark.parametrize(
    ("relative", "content", "message"),
    [
        ("tools/LiveMCPTool/tools.json", "[1]", "not LiveMCPTool's tools.json"),
        ("annotated_data/all_annotations.json", '[{"task_id": "t"}]', "missing or wrong field 'Annotator Metadata'"),
        ("annotated_data/all_annotations.json", "\xff", "not JSON"),
    ],
)
def test_livemcpbench_files_not_in_its_format_are_named(
    tmp_path: Path, relative: str, content: str, message: str
) -> None:
    write_livemcp(tmp_path)
    (tmp_path / relative).write_text(content, encoding="latin-1")
    with pytest.raises(ValueError, match=f"{relative}: .*{message}"):
        _public_livemcp.load(tmp_path)


def test_metrics_count_the_first_hit_meeting_any_need_and_the_share_of_needs_met() -> None:
    queries = [
        Query("a", "first", (frozenset({"s__x", "t__x"}), frozenset({"s__y"})), "tune"),
        Query("b", "second", (frozenset({"s__z"}),), "tune"),
    ]
    rankings = {"first": [frozenset({"s__w"}), frozenset({"t__x"})], "second": []}
    metrics = evaluate(lambda text: rankings[text], queries)
    assert metrics.outcomes == {"a": Outcome(2, 1, 2), "b": Outcome(None, 0, 1)}
    assert (metrics.hit1, metrics.hit5, metrics.recall10, metrics.mrr) == (0.0, 0.5, 0.25, 0.25)
    assert Metrics.from_json(json.loads(json.dumps(metrics.to_json()))) == metrics


def test_paired_gap_is_zero_for_the_same_ranking_and_sure_for_one_better_everywhere() -> None:
    worse = Metrics({str(i): Outcome(None if i % 2 else 3, 0, 1) for i in range(60)})
    better = Metrics({str(i): Outcome(1, 1, 1) for i in range(60)})
    same = paired_gap(worse, worse, "mrr")
    assert (same.mean, same.low, same.high, same.queries) == (0.0, 0.0, 0.0, 60)
    gap = paired_gap(better, worse, "hit1")
    assert gap.mean == 1.0 and gap.low == gap.high == 1.0
    mixed = paired_gap(better, worse, "hit5")
    assert mixed.mean == 0.5 and 0.3 < mixed.low < 0.5 < mixed.high < 0.7
    assert str(mixed).startswith("hit@5 +0.50 [+0.")
    with pytest.raises(ValueError, match="share no query"):
        paired_gap(better, Metrics({"other": Outcome(1, 1, 1)}))


def test_a_server_s_own_description_finds_its_tools_where_plain_bm25_cannot() -> None:
    catalogue = Catalogue(
        "mail",
        {"mail-relay": [{"name": "send", "description": "Deliver a message", "inputSchema": {"type": "object"}}]},
        {"mail-relay": "Mail Relay email over SMTP"},
        [Query("q", "email the minutes", (frozenset({"mail-relay__send"}),), "tune")],
    )
    ranked = evaluate(index_ranker(catalogue, backends(("bm25",))["bm25"]()), catalogue.queries)
    plain = evaluate(plain_bm25s(catalogue), catalogue.queries)
    assert ranked.outcomes == {"q": Outcome(1, 1, 1)} and plain.outcomes == {"q": Outcome(None, 0, 1)}
