"""Pinned tool definitions: what a server's listing costs as the user's projects pile up.

Run: python benchmarks/bench_pins.py [--projects 60]

Every config file a user runs pins its servers' tools (``ToolPins``). This
pins the recorded claude-flow catalogue (353 tools, the largest server the
project is measured against) for ``--projects`` config files in a row, as
someone who opens one project after another does, and prints the CPU time of
the first listing in the first and in the last project: with a pin file per
config file both read and write that project's pins only. The anchor, in the
same run: the CPU time of what a single file for every project (the earlier
layout) would have to read and rewrite at the last listing, ``json.loads`` and
an indented ``json.dumps`` of all the projects' pins.
"""

from __future__ import annotations

import argparse
import json
import resource
import tempfile
from pathlib import Path
from typing import Any

import mcp.types as types
from _report import save
from _search_eval import load_catalog

from toolsift.config import StdioServer
from toolsift.mcp_sessions._internal import ToolPins


def cpu_ms() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return (usage.ru_utime + usage.ru_stime) * 1000


def main(projects: int) -> dict[str, Any]:
    tools: list[types.Tool] = load_catalog()["claude-flow"]
    server = StdioServer(command="claude-flow").with_name("claude-flow")
    listings: list[float] = []
    with tempfile.TemporaryDirectory() as folder:
        store = Path(folder) / "pinned-tools"
        for index in range(projects):
            pins = ToolPins(store, Path(folder) / f"project-{index}" / "toolsift.json")
            start = cpu_ms()
            review = pins.review(server, tools)
            listings.append(cpu_ms() - start)
            assert len(review.kept) == len(tools)
        everything = {str(path): json.loads(path.read_text()) for path in store.iterdir()}
    start = cpu_ms()
    json.loads(json.dumps({"version": 1, "projects": everything}, indent=2, sort_keys=True))
    anchor = cpu_ms() - start
    print(f"{len(tools)} tools pinned for {projects} config files, one after another")
    return {
        "tools": len(tools),
        "projects": projects,
        "first_project_listing_ms": listings[0],
        "last_project_listing_ms": listings[-1],
        "anchor_one_file_read_and_rewrite_ms": anchor,
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--projects", type=int, default=60, help="config files pinned one after another")
    save("pins", main(parser.parse_args().projects))
