"""A check nothing is chosen on: LiveMCPBench, 95 real tasks over 70 MCP servers, their tools annotated by people.

Source: the repository ``icip-cas/LiveMCPBench`` on GitHub ("LiveMCPBench: Can
Agents Navigate an Ocean of MCP Tools?", Mo et al., arXiv 2508.01780), commit
a928e57d1ee7a25579b9a7036030faffff72d15b (2025-08-18); Apache-2.0. Nothing of it
is copied here: point ``--livemcpbench PATH`` (or ``TOOLSIFT_LIVEMCPBENCH``) at a checkout::

    git clone https://github.com/icip-cas/LiveMCPBench
    git -C LiveMCPBench checkout a928e57d1ee7a25579b9a7036030faffff72d15b

What is read, and how:

- The catalogue, ``tools/LiveMCPTool/tools.json``: 70 MCP servers with the tools each
  listed when the authors connected to it (names, descriptions, input schemas as the
  server gave them; 527 tools). A server's key is its config key (``bing-cn-mcp``;
  written as a config key where it is not one), and what it says of itself is its
  entry's name and description.
- The tasks, ``annotated_data/all_annotations.json``: 95 tasks people wrote (``Question``,
  the query as its user wrote it) and, for each, the tools a person used to solve it
  (``Annotator Metadata`` -> ``Tools``, a numbered list of tool names). A tool is named
  without its server, so any server's tool of that name meets the need. Five of the 256
  names are no tool of the catalogue (``ddg-search``, ``execute_command``, ...): they are
  left out, and printed, since no ranking can find them.

This whole set is ``heldout``: it has no ``tune`` split and is never used to choose
anything, so it stays an honest check of what was chosen on BFCL and ETOM. Its
figures were known before this harness was written (a reading of the same data
that kept all 95 tasks found bm25 hit@5 0.63 at main aa1659a); this reading keeps
the 94 tasks with a tool the catalogue has, and was first run on 2026-12-02 at the
same commit.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from _public_eval import (
    Catalogue,
    Query,
    Source,
    by_local_name,
    data_file,
    folder_from,
    needs_named,
    read_json,
    server_keys,
)

REPOSITORY = "icip-cas/LiveMCPBench"
COMMIT = "a928e57d1ee7a25579b9a7036030faffff72d15b"
TOOLS = "tools/LiveMCPTool/tools.json"
TASKS = "annotated_data/all_annotations.json"
DIGESTS = {
    TOOLS: "93762d39002fe7546d79b4c8f0ff070678f5d218af29f83bfc57cd98ce8a6a59",
    TASKS: "0e8db4c5abf4eb0b666f4cc4c1b1bd5cd6b8741ade7abb0fbc51526ae8b058b8",
}
_NUMBERED = re.compile(r"^\s*\d+\s*[.)、]?\s*")


def _servers(path: Path) -> tuple[dict[str, list[dict[str, Any]]], dict[str, str]]:
    try:
        entries = [(entry, key, listing) for entry in read_json(path) for key, listing in entry["tools"].items()]
        keys = server_keys(key for _, key, _ in entries)
        servers = {keys[key]: list(listing["tools"]) for _, key, listing in entries}
        about = {keys[key]: f"{entry['name']} {entry.get('description') or ''}".strip() for entry, key, _ in entries}
    except (KeyError, TypeError, AttributeError) as exc:
        raise ValueError(f"{path}: not LiveMCPTool's tools.json (missing or wrong field {exc})") from exc
    return servers, about


def tool_names(listed: str) -> list[str]:
    """The names of an annotator's numbered list ("1. get-weread-rank\\n2. create_document")."""
    return [name for line in listed.splitlines() if (name := _NUMBERED.sub("", line).strip(" `'\"\t"))]


def load(folder: Path) -> list[Catalogue]:
    """The catalogue and tasks of a checkout of ``icip-cas/LiveMCPBench``.

    Raises:
        FileNotFoundError: A file is missing (its path named).
        ValueError: A file is not in LiveMCPBench's format (its path and the field named).
    """
    servers, about = _servers(data_file(folder, TOOLS))
    known = by_local_name(servers)
    tasks = data_file(folder, TASKS)
    queries: list[Query] = []
    absent: list[str] = []
    try:
        for task in read_json(tasks):
            needs, unknown = needs_named(tool_names(task["Annotator Metadata"]["Tools"]), known)
            absent.extend(unknown)
            if needs:
                queries.append(Query(task["task_id"], task["Question"], needs, "heldout"))
    except (KeyError, TypeError, AttributeError) as exc:
        raise ValueError(f"{tasks}: not LiveMCPBench's annotations (missing or wrong field {exc})") from exc
    return [Catalogue("livemcpbench", servers, about, queries, tuple(dict.fromkeys(absent)))]


SOURCE = Source(
    name="livemcpbench",
    splits=("heldout",),
    load=load,
    find=folder_from("TOOLSIFT_LIVEMCPBENCH"),
    missing=(
        f"no checkout of {REPOSITORY} given: git clone https://github.com/{REPOSITORY} LiveMCPBench && "
        f"git -C LiveMCPBench checkout {COMMIT}, then --livemcpbench LiveMCPBench (or TOOLSIFT_LIVEMCPBENCH=...)"
    ),
    digests=DIGESTS,
)
