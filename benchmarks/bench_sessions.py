"""MCP sessions: parallel start-up, per-call overhead against the bare SDK, 1,000 concurrent calls.

Run: python benchmarks/bench_sessions.py [--calls 2000] [--rounds 5] [--overhead-only]

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
    its own connection to another process of the same server, interleaved,
    ``--calls`` calls (2,000) in each of ``--rounds`` rounds (5); the figure is
    the median of the rounds' medians; target: overhead <= 5 %. Where the time
    goes is printed twice. Step by step, each step one more layer on the same
    call: the SDK client toolsift's session owns (its connection and
    transport), the session's registry tool (fencing, conversion), then
    ``registry.execute`` (layers, validation, audit); wall and client CPU for
    each. Stage by stage, from a profile of ``execute`` (deterministic, so
    readable on a busy machine): the SDK's ``Client.call_tool``, the session,
    the fence, and in the registry the scope check (layers 1-5), argument
    validation, audit and the rest, in microseconds of CPU per call.
(c) 1,000 concurrent ``registry.execute`` calls through one session; target:
    zero errors. Reports calls per second.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import sys
import time
from pathlib import Path

import anyio
from _report import save
from mcp import Client, StdioServerParameters

from toolsift.config import ServerConfig, StdioServer
from toolsift.mcp_sessions import register_mcp_tools
from toolsift.mcp_sessions._internal import SessionState
from toolsift.registry import Permissions, ToolContext, ToolRegistry, TurnScope

HERE = Path(__file__).resolve().parent
EXAMPLES = HERE.parent / "examples" / "servers"
SERVERS = 20
INIT_DELAY = 0.5
CALLS = 2000
ROUNDS = 5
WARM_UP = 200
PROFILED = 1000
CONCURRENT = 1000


def stdio(name: str, script: Path, *args: str, **fields: object) -> ServerConfig:
    return StdioServer(command=sys.executable, args=(str(script), *args), **fields).with_name(name)  # type: ignore[arg-type]


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


async def overhead(calls_per_round: int, rounds: int) -> tuple[dict[str, float], list[float]]:
    """Median wall and mean client-CPU microseconds per echo, the four paths interleaved; each round's ratio.

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
        labels = list(calls)
        per_round: dict[str, list[float]] = {label: [] for label in calls}
        cpu: dict[str, list[float]] = {label: [] for label in calls}
        ratios = []
        for round_ in range(rounds):
            samples: dict[str, list[float]] = {label: [] for label in calls}
            warm_up = WARM_UP if round_ == 0 else 0
            for i in range(calls_per_round + warm_up):
                # Rotate the order, so that none always follows another.
                for label in labels[i % len(labels) :] + labels[: i % len(labels)]:
                    start, start_cpu = time.perf_counter(), time.process_time()
                    await calls[label]()
                    if i >= warm_up:
                        samples[label].append((time.perf_counter() - start) * 1e6)
                        cpu[label].append((time.process_time() - start_cpu) * 1e6)
            for label, values in samples.items():
                per_round[label].append(statistics.median(values))
            ratios.append(per_round["execute"][-1] / per_round["bare"][-1])
    medians = {label: statistics.median(values) for label, values in per_round.items()}
    medians.update({f"{label}_cpu": statistics.mean(values) for label, values in cpu.items()})
    return medians, ratios


# Stages of one execute call, by the function whose inclusive profile time is the stage's.
STAGES = {
    "sdk_client_call_tool": ("mcp/client/client.py", "call_tool"),
    "session_call_tool": ("toolsift/mcp_sessions/_session.py", "call_tool"),
    "fence": ("toolsift/mcp_sessions/_untrusted.py", "guard_result"),
    "wrapper_call": ("toolsift/mcp_sessions/_wrapper.py", "call"),
    "scope_check_layers_1_to_5": ("toolsift/registry/_execute.py", "_check"),
    "validation_schema": ("toolsift/registry/_execute.py", "_validate"),
    "validation_argument_shape": ("toolsift/registry/_arguments.py", "argument_problems"),
    "audit": ("toolsift/registry/_execute.py", "_audit"),
    "execute": ("toolsift/registry/_execute.py", "execute"),
}


async def stages(calls: int) -> dict[str, float]:
    """CPU microseconds per ``registry.execute`` call in each stage, from a profile of ``calls`` calls.

    A profile counts a coroutine only while it runs, so each figure is work done in this process, not
    the wait for the server. The profiler's own cost inflates every figure alike; compare them with
    each other (and the SDK's), not with the wall times.
    """
    registry = ToolRegistry()
    config = stdio("general", EXAMPLES / "general.py", internal_only=False)
    async with register_mcp_tools([config], registry):
        scope, permissions = TurnScope(), Permissions()
        for _ in range(WARM_UP):
            await registry.execute("general__echo", {"text": "hi"}, scope, permissions)
        profile = cProfile.Profile()
        profile.enable()
        for _ in range(calls):
            await registry.execute("general__echo", {"text": "hi"}, scope, permissions)
        profile.disable()
    totals = {name: 0.0 for name in STAGES}
    for (path, _line, function), row in pstats.Stats(profile).stats.items():  # type: ignore[attr-defined]
        for name, (suffix, wanted) in STAGES.items():
            if function == wanted and path.endswith(suffix):
                totals[name] += row[3]  # inclusive time
    per_call = {name: total / calls * 1e6 for name, total in totals.items()}
    sdk, session, wrapper, execute = (
        per_call["sdk_client_call_tool"],
        per_call["session_call_tool"],
        per_call["wrapper_call"],
        per_call["execute"],
    )
    registry_own = execute - wrapper
    return {
        "sdk_client_call_tool": sdk,
        "session (around the SDK call)": session - sdk,
        "fence": per_call["fence"],
        "wrapper (conversion, without the fence)": wrapper - session - per_call["fence"],
        "registry: scope check (layers 1-5)": per_call["scope_check_layers_1_to_5"],
        "registry: validation": per_call["validation_schema"] + per_call["validation_argument_shape"],
        "registry: audit": per_call["audit"],
        "registry: the rest (routing, records, timing)": registry_own
        - per_call["scope_check_layers_1_to_5"]
        - per_call["validation_schema"]
        - per_call["validation_argument_shape"]
        - per_call["audit"],
        "toolsift total (execute - sdk)": execute - sdk,
    }


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


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=CALLS, help="calls per path in each round of (b)")
    parser.add_argument("--rounds", type=int, default=ROUNDS, help="rounds of (b)")
    parser.add_argument("--overhead-only", action="store_true", help="run (b) only, and save nothing")
    return parser.parse_args()


def print_overhead(medians: dict[str, float], ratios: list[float], breakdown: dict[str, float]) -> None:
    bare, ours = medians["bare"], medians["execute"]
    print(
        f"registry.execute {ours:,.0f} us vs bare SDK Client.call_tool {bare:,.0f} us: {ours / bare:.3f}x "
        f"({ours - bare:+,.0f} us); rounds: {', '.join(f'{r:.3f}x' for r in ratios)}"
    )
    print(f"client CPU per call: bare {medians['bare_cpu']:,.0f} us, execute {medians['execute_cpu']:,.0f} us")
    print("where the time goes (profiled CPU us per call):")
    for stage, micros in breakdown.items():
        print(f"  {stage:<48} {micros:8.1f}")


async def main() -> None:
    options = arguments()
    medians, ratios = await overhead(options.calls, options.rounds)
    breakdown = await stages(PROFILED)
    print_overhead(medians, ratios, breakdown)
    if options.overhead_only:
        return
    light, light_ready = await start_up(HERE.parent / "tests" / "raw_server.py", "--init-delay", str(INIT_DELAY))
    heavy, heavy_ready = await start_up(EXAMPLES / "faulty.py", "--init-delay", str(INIT_DELAY))
    heavy_bare = await bare_start_up(EXAMPLES / "faulty.py", "--init-delay", str(INIT_DELAY))
    bare, ours = medians["bare"], medians["execute"]
    rate, errors = await concurrency()
    save(
        "sessions",
        {
            "a_servers": SERVERS,
            "a_init_delay_s": INIT_DELAY,
            "a_all_ready_s": light,
            "a_ready": light_ready,
            "a_target_met (<= 1.5 s)": light <= 1.5 and light_ready == SERVERS,
            "a_all_ready_s_full_sdk_servers": heavy,
            "a_ready_full_sdk_servers": heavy_ready,
            "a_anchor_bare_sdk_clients_in_parallel_s": heavy_bare,
            "b_calls_per_round": options.calls,
            "b_rounds": options.rounds,
            "b_median_bare_sdk_us": bare,
            "b_median_toolsift_us": ours,
            "b_ratio": ours / bare,
            "b_ratio_per_round": ratios,
            "b_target_met (<= 1.05x)": ours <= bare * 1.05,
            "b_step_connection_and_transport_us (client - bare)": medians["client"] - bare,
            "b_step_session_tool_us (wrapper - client)": medians["wrapper"] - medians["client"],
            "b_step_registry_layers_us (execute - wrapper)": ours - medians["wrapper"],
            "b_client_cpu_mean_us_bare": medians["bare_cpu"],
            "b_client_cpu_mean_us_client": medians["client_cpu"],
            "b_client_cpu_mean_us_wrapper": medians["wrapper_cpu"],
            "b_client_cpu_mean_us_execute": medians["execute_cpu"],
            **{f"b_stage_cpu_us {stage}": micros for stage, micros in breakdown.items()},
            "c_concurrent_calls": CONCURRENT,
            "c_errors": errors,
            "c_calls_per_s": rate,
            "c_target_met (0 errors)": errors == 0,
        },
    )


if __name__ == "__main__":
    anyio.run(main)
