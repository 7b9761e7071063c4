"""MCP sessions: parallel start-up, per-call overhead against the bare SDK, 1,000 concurrent calls.

Run: python benchmarks/bench_sessions.py

(a) 20 stdio servers that each wait 0.5 s before answering ``initialize`` are
    started through ``register_mcp_tools``; target: all ready in <= 1.5 s. The
    servers are ``tests/raw_server.py`` (standard library only), so the figure
    is toolsift's parallel start-up, not 20 imports of the ``mcp`` package on a
    small machine; the same run with ``examples/servers/faulty.py --init-delay
    0.5`` (a full SDK server) is reported beside it, and as its anchor the same
    20 SDK servers opened by the bare SDK ``Client``, all in parallel.
(b) The median round trip of ``echo`` on ``examples/servers/general.py``
    through ``registry.execute`` (five layers, argument validation, audit,
    untrusted fencing, the session) against the bare SDK ``Client.call_tool`` on
    its own connection to another process of the same server, interleaved in
    one run; target: overhead <= 5 %. Where the time goes is printed step by
    step, each step one more layer on the same call: the SDK client toolsift's
    session owns (its connection and transport), the session's registry tool
    (fencing, conversion), then ``registry.execute`` (layers, validation,
    audit); wall and client CPU medians for each.
(c) 1,000 concurrent ``registry.execute`` calls through one session; target:
    zero errors. Reports calls per second.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import anyio
from _report import save
from mcp import Client, StdioServerParameters

from toolsift.config import ServerConfig
from toolsift.mcp_sessions import SessionState, register_mcp_tools
from toolsift.registry import Permissions, ToolContext, ToolRegistry, TurnScope

HERE = Path(__file__).resolve().parent
EXAMPLES = HERE.parent / "examples" / "servers"
SERVERS = 20
INIT_DELAY = 0.5
ROUND_TRIPS = 3000
WARM_UP = 200
CONCURRENT = 1000


def stdio(name: str, script: Path, *args: str, **fields: object) -> ServerConfig:
    return ServerConfig(command=sys.executable, args=(str(script), *args), **fields).with_name(name)  # type: ignore[arg-type]


async def start_up(script: Path, *args: str) -> tuple[float, int]:
    """Seconds until every server is ready, and how many are."""
    servers = [stdio(f"slow{i:02d}", script, *args, protocol="legacy") for i in range(SERVERS)]
    started = time.perf_counter()
    async with register_mcp_tools(servers, ToolRegistry()) as sessions:
        elapsed = time.perf_counter() - started
        ready = sum(s.state is SessionState.READY for s in sessions.values())
    return elapsed, ready


async def bare_start_up(script: Path, *args: str) -> float:
    """Seconds until the bare SDK ``Client`` has initialised every server, all opened at once."""
    params = StdioServerParameters(command=sys.executable, args=[str(script), *args])
    opened, everyone = 0, anyio.Event()
    done = anyio.Event()

    async def one() -> None:
        nonlocal opened
        async with Client(params, mode="legacy"):
            opened += 1
            if opened == SERVERS:
                everyone.set()
            await done.wait()

    started = time.perf_counter()
    async with anyio.create_task_group() as group:
        for _ in range(SERVERS):
            group.start_soon(one)
        await everyone.wait()
        elapsed = time.perf_counter() - started
        done.set()
    return elapsed


async def overhead() -> dict[str, float]:
    """Median wall and client-CPU microseconds per echo, the four paths interleaved.

    ``bare`` is the SDK ``Client.call_tool`` on its own connection; ``client``
    is the SDK client toolsift's session owns; ``wrapper`` adds the session's
    registry tool (fencing included); ``execute`` is the whole path through
    ``registry.execute`` (layers, validation, audit on top of ``wrapper``).
    """
    registry = ToolRegistry()
    config = stdio("general", EXAMPLES / "general.py", internal_only=False)
    params = StdioServerParameters(command=sys.executable, args=[str(EXAMPLES / "general.py")])
    async with Client(params) as own, register_mcp_tools([config], registry) as sessions:
        client = sessions["general"]._sup.client  # the very SDK Client the session owns
        assert client is not None
        tool = registry.get("general__echo")
        context = ToolContext(call_id="bench")
        # An agent loop builds its turn's scope and permissions once per turn, not once per call.
        scope, permissions = TurnScope(), Permissions()
        calls = {
            "bare": lambda: own.call_tool("echo", {"text": "hi"}),
            "client": lambda: client.call_tool("echo", {"text": "hi"}),
            "wrapper": lambda: tool.call({"text": "hi"}, context),
            "execute": lambda: registry.execute("general__echo", {"text": "hi"}, scope, permissions),
        }
        samples: dict[str, list[float]] = {label: [] for label in calls}
        cpu: dict[str, list[float]] = {label: [] for label in calls}
        labels = list(calls)
        for i in range(ROUND_TRIPS + WARM_UP):
            # Rotate the order, so that none always follows another.
            for label in labels[i % len(labels):] + labels[:i % len(labels)]:
                start, start_cpu = time.perf_counter(), time.process_time()
                await calls[label]()
                if i >= WARM_UP:
                    samples[label].append((time.perf_counter() - start) * 1e6)
                    cpu[label].append((time.process_time() - start_cpu) * 1e6)
    medians = {label: statistics.median(values) for label, values in samples.items()}
    medians.update({f"{label}_cpu": statistics.mean(values) for label, values in cpu.items()})
    return medians


async def concurrency() -> tuple[float, int]:
    """Calls per second for CONCURRENT simultaneous calls, and how many failed."""
    registry = ToolRegistry()
    config = stdio("general", EXAMPLES / "general.py", internal_only=False)
    errors = 0

    async def one(i: int) -> None:
        nonlocal errors
        result = await registry.execute("general__echo", {"text": f"call {i}"})
        if result.is_error or f"call {i}" not in result.text_content():
            errors += 1

    async with register_mcp_tools([config], registry):
        started = time.perf_counter()
        async with anyio.create_task_group() as group:
            for i in range(CONCURRENT):
                group.start_soon(one, i)
        elapsed = time.perf_counter() - started
    return CONCURRENT / elapsed, errors


async def main() -> None:
    light, light_ready = await start_up(HERE.parent / "tests" / "raw_server.py", "--init-delay", str(INIT_DELAY))
    heavy, heavy_ready = await start_up(EXAMPLES / "faulty.py", "--init-delay", str(INIT_DELAY))
    heavy_bare = await bare_start_up(EXAMPLES / "faulty.py", "--init-delay", str(INIT_DELAY))
    medians = await overhead()
    bare, ours = medians["bare"], medians["execute"]
    rate, errors = await concurrency()
    save("sessions", {
        "a_servers": SERVERS,
        "a_init_delay_s": INIT_DELAY,
        "a_all_ready_s": light,
        "a_ready": light_ready,
        "a_target_met (<= 1.5 s)": light <= 1.5 and light_ready == SERVERS,
        "a_all_ready_s_full_sdk_servers": heavy,
        "a_ready_full_sdk_servers": heavy_ready,
        "a_anchor_bare_sdk_clients_in_parallel_s": heavy_bare,
        "b_round_trips": ROUND_TRIPS,
        "b_median_bare_sdk_us": bare,
        "b_median_toolsift_us": ours,
        "b_ratio": ours / bare,
        "b_target_met (<= 1.05x)": ours <= bare * 1.05,
        "b_step_connection_and_transport_us (client - bare)": medians["client"] - bare,
        "b_step_session_tool_us (wrapper - client)": medians["wrapper"] - medians["client"],
        "b_step_registry_layers_us (execute - wrapper)": ours - medians["wrapper"],
        "b_client_cpu_mean_us_bare": medians["bare_cpu"],
        "b_client_cpu_mean_us_client": medians["client_cpu"],
        "b_client_cpu_mean_us_wrapper": medians["wrapper_cpu"],
        "b_client_cpu_mean_us_execute": medians["execute_cpu"],
        "c_concurrent_calls": CONCURRENT,
        "c_errors": errors,
        "c_calls_per_s": rate,
        "c_target_met (0 errors)": errors == 0,
    })


if __name__ == "__main__":
    anyio.run(main)
