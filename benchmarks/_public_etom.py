"""A search evaluation of multi-server tasks nobody here wrote: ETOM (MSC-Bench), 491 MCP servers and 2,375 tools.

Source: the repository ``snooow1029/ETOM`` on GitHub (the benchmark of "ETOM: A
Five-Level Benchmark for Evaluating Tool Orchestration within the MCP
Ecosystem", Dong, Huang, Wu and Tsai, arXiv 2510.19423, first published as
MSC-Bench), commit 3280849df74867ddfbd825d04682bf866c96f8ec (2026-02-02); MIT
licence, as its README states (the repository has no LICENSE file). Nothing of
it is copied here: point ``--etom PATH`` (or ``TOOLSIFT_ETOM``) at a checkout::

    git clone https://github.com/snooow1029/ETOM
    git -C ETOM checkout 3280849df74867ddfbd825d04682bf866c96f8ec

What is read, and how:

- The catalogue, ``data/mcp_registry.json``: 491 MCP servers as Glama's directory lists
  them, with their tools' names, descriptions and input schemas (2,375 tools). Each
  server keeps its tools; its key is its title written as a config key
  (``Peekaboo MCP: Lightning-fast macOS Screenshots`` -> ``peekaboo-mcp-lightning-fast-macos-screenshots``),
  and what it says of itself is its title and its ``server_description``, as toolsift
  indexes a server's ``serverInfo`` title and description. Its categories and summary
  (the directory's, not the server's) are not used.
- The queries, ``data/queries/level_N.json``, each with the tools that answer it
  (``ground_truth_tools``): a need is one tool, or a set of tools the authors found
  equivalent ("equal function sets": any one meets it). The queries and their tools
  were made by the authors' LLM pipeline (proposer, red-team and judge agents) over
  the catalogue and then filtered; unlike LiveMCPBench (``_public_livemcp``) no person
  wrote them. One catalogue serves every level, as one agent holds all 491 servers:

  - ``level1``, 781 queries naming their platform ("On Tripo AI, download ..."), one tool each;
  - ``level2``, 773 queries met by any tool of an equivalent set, without naming a server;
  - ``level3``, 327 multi-step queries within one server (2-7 tools);
  - ``level4``, 103 multi-step queries across 2-18 servers (2-9 needs), the closest to real tasks.

  ``level_5.json`` (91 requests no tool meets) has no tool to rank and is not read.

Splits (``_public_eval.split_of``): by ``level<N>-<query_id>``; ``tune`` (about a third) is
for choosing ranking changes, ``heldout`` for checking them. History: written on
2026-12-02; both splits were first run that day at the ranking of main aa1659a, before
any ranking change was chosen on them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from _public_eval import (
    SPLITS,
    Catalogue,
    Need,
    Query,
    Source,
    data_file,
    folder_from,
    read_json,
    server_keys,
    split_of,
)

REPOSITORY = "snooow1029/ETOM"
COMMIT = "3280849df74867ddfbd825d04682bf866c96f8ec"
REGISTRY = "data/mcp_registry.json"
LEVELS = (1, 2, 3, 4)
DIGESTS = {
    REGISTRY: "3c362877ec5733cf0fa1d3451b2f353fb97674e66075da0d7a6f41c0f98cc608",
    "data/queries/level_1.json": "9b6fdab8926cb5e21abddf0178f018de27d5b9636bd549b45798898b92eee028",
    "data/queries/level_2.json": "67abbf2574eda7c48a455b8d537ec218219e774ac7814b48f138d5eb662f10e2",
    "data/queries/level_3.json": "8eb127ef81f2c54a3dfdbd6ef4fef4594bf1e941a054afc0317e722673636a0f",
    "data/queries/level_4.json": "3b6c88c08c29b31bbbc47d578d345866549539b2a1175ad87a512d8df325a315",
}


def _servers(path: Path) -> tuple[dict[str, list[dict[str, Any]]], dict[str, str], dict[str, str]]:
    """Server key -> its tools, key -> its title and description, and title -> key."""
    try:
        listed = read_json(path)["servers"]
        keys = server_keys(server["server_name"] for server in listed)
        servers = {
            keys[server["server_name"]]: [
                {
                    "name": tool["tool_name"],
                    "description": tool["tool_description"],
                    "inputSchema": tool["input_schema"],
                }
                for tool in server["tools"]
            ]
            for server in listed
        }
        about = {
            keys[s["server_name"]]: f"{s['server_name']} {s.get('server_description') or ''}".strip() for s in listed
        }
    except (KeyError, TypeError) as exc:
        raise ValueError(f"{path}: not an ETOM registry (missing or wrong field {exc})") from exc
    return servers, about, keys


def _needs(truth: Sequence[Any], keys: Mapping[str, str], listed: set[str]) -> tuple[list[Need], list[str]]:
    """One query's needs (each ``ground_truth_tools`` entry: a tool, or a list of equivalent ones), and the absent."""
    needs: list[Need] = []
    absent: list[str] = []
    for entry in truth:
        names = set()
        for tool in entry if isinstance(entry, list) else [entry]:
            name = f"{keys.get(tool['server_name'], '?')}__{tool['tool_name']}"
            if name in listed:
                names.add(name)
            else:
                absent.append(f"{tool['server_name']}::{tool['tool_name']}")
        if names:
            needs.append(frozenset(names))
    return needs, absent


def _queries(path: Path, level: int, keys: Mapping[str, str], listed: set[str]) -> tuple[list[Query], list[str]]:
    queries: list[Query] = []
    absent: list[str] = []
    try:
        for raw in read_json(path):
            needs, missing = _needs(raw["ground_truth_tools"], keys, listed)
            absent.extend(missing)
            identifier = f"level{level}-{raw['query_id']}"
            if needs:
                queries.append(Query(identifier, raw["query"], tuple(needs), split_of(identifier), f"level{level}"))
    except (KeyError, TypeError) as exc:
        raise ValueError(f"{path}: not an ETOM query file (missing or wrong field {exc})") from exc
    return queries, absent


def load(folder: Path) -> list[Catalogue]:
    """The catalogue of a checkout of ``snooow1029/ETOM``, with the queries of levels 1-4.

    Raises:
        FileNotFoundError: A file is missing (its path named).
        ValueError: A file is not in ETOM's format (its path and the field named).
    """
    servers, about, keys = _servers(data_file(folder, REGISTRY))
    listed = {f"{server}__{tool['name']}" for server, tools in servers.items() for tool in tools}
    queries: list[Query] = []
    absent: list[str] = []
    for level in LEVELS:
        found, missing = _queries(data_file(folder, f"data/queries/level_{level}.json"), level, keys, listed)
        queries.extend(found)
        absent.extend(missing)
    return [Catalogue("etom", servers, about, queries, tuple(dict.fromkeys(absent)))]


SOURCE = Source(
    name="etom",
    splits=SPLITS,
    load=load,
    find=folder_from("TOOLSIFT_ETOM"),
    missing=(
        f"no checkout of {REPOSITORY} given: git clone https://github.com/{REPOSITORY} ETOM && "
        f"git -C ETOM checkout {COMMIT}, then --etom ETOM (or TOOLSIFT_ETOM=ETOM)"
    ),
    digests=DIGESTS,
)
