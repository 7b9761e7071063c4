"""Big tool results: toolsift against the bare SDK ``mcp.Client`` on the same server, side by side.

Run: python benchmarks/bench_results.py

The server is ``examples/servers/faulty.py`` over stdio; its ``big`` tool
answers with that many characters of numbered text lines. For 2 MB and 20 MB
results, calls alternate between the bare SDK ``Client.call_tool`` and
toolsift's ``registry.execute`` (untrusted fencing, injection scan, secret
masking, audit: the path an agent's calls take), each on its own connection to
its own server process, and the median seconds of each are printed beside
each other. toolsift's server gets ``maxResultBytes`` of 64 MiB so that both
carry the whole result; a last figure is the 20 MB call with the default
limit of 10 MiB, where toolsift drops the result as it arrives.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
from _report import save
from mcp import Client, StdioServerParameters

from toolsift.config import StdioServer
from toolsift.mcp_sessions import register_mcp_tools
from toolsift.registry import ToolRegistry

SERVER = Path(__file__).resolve().parent.parent / "examples" / "servers" / "faulty.py"
SIZES = {"2MB": 2_000_000, "20MB": 20_000_000}
REPEAT = {"2MB": 7, "20MB": 3}
LIMIT = 64 * 1024 * 1024


async def median_s(
    call: Callable[[], Awaitable[object]], other: Callable[[], Awaitable[object]], repeat: int
) -> tuple[float, float]:
    """Median seconds of ``call`` and ``other``, alternated so that neither always runs second."""
    samples: tuple[list[float], list[float]] = ([], [])
    for i in range(repeat):
        order = [(0, call), (1, other)] if i % 2 == 0 else [(1, other), (0, call)]
        for index, fn in order:
            start = time.perf_counter()
            await fn()
            samples[index].append(time.perf_counter() - start)
    return statistics.median(samples[0]), statistics.median(samples[1])


async def main() -> None:
    config = StdioServer(
        command=sys.executable, args=(str(SERVER),), internal_only=False, protocol="legacy", max_result_bytes=LIMIT
    ).with_name("faulty")
    default_limit = StdioServer.model_fields["max_result_bytes"].default
    default = config.model_copy(update={"max_result_bytes": default_limit}).with_name("capped")
    registry = ToolRegistry()
    figures: dict[str, object] = {}
    params = StdioServerParameters(command=sys.executable, args=[str(SERVER)])
    async with Client(params, mode="legacy") as client, register_mcp_tools([config, default], registry):
        for label, size in SIZES.items():

            async def bare(size: int = size) -> None:
                result = await client.call_tool("big", {"size": size})
                assert not result.is_error

            async def ours(size: int = size) -> None:
                result = await registry.execute("faulty__big", {"size": size})
                assert not result.is_error, result.text_content()[:200]

            bare_s, ours_s = await median_s(bare, ours, REPEAT[label])
            figures[f"{label}_bare_sdk_s"] = bare_s
            figures[f"{label}_toolsift_s"] = ours_s
            figures[f"{label}_toolsift_vs_sdk"] = ours_s / bare_s
        started = time.perf_counter()
        dropped = await registry.execute("capped__big", {"size": SIZES["20MB"]})
        figures["20MB_default_limit_dropped"] = dropped.meta.get("mcp_failure") == "too_large"
        figures["20MB_default_limit_dropped_s"] = time.perf_counter() - started
    save("results", figures)


if __name__ == "__main__":
    anyio.run(main)
