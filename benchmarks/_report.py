"""Shared helpers for benchmarks: timing, printing and saving figures."""

from __future__ import annotations

import json
import platform
import statistics
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).parent / "results"


def median_us(fn: Callable[[], object], *, repeat: int, setup: Callable[[], object] | None = None) -> float:
    """Median wall time of ``fn`` in microseconds; ``setup`` runs untimed before each sample."""
    samples = []
    for _ in range(repeat):
        if setup is not None:
            setup()
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1e6)
    return statistics.median(samples)


def reference_ms() -> float:
    """Best of five runs of a fixed pure-Python workload: how fast this machine runs Python.

    Saved beside every figure, so runs on different machines can be compared.
    """

    def workload() -> None:
        table = {f"tool{i}": i for i in range(20_000)}
        for _ in range(10):
            sum(table[key] for key in table if key.endswith("7"))

    samples = []
    for _ in range(5):
        start = time.perf_counter()
        workload()
        samples.append((time.perf_counter() - start) * 1e3)
    return min(samples)


def save(name: str, figures: dict[str, Any], *, details: dict[str, Any] | None = None, show: bool = True) -> Path:
    """Print ``figures`` (unless ``show`` is false) and write them with machine details to ``results/<name>.json``.

    ``details`` (per-query outcomes, data versions) is written after the figures and never printed.
    """
    RESULTS.mkdir(exist_ok=True)
    record = {
        "benchmark": name,
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "python": sys.version.split()[0],
        "machine": platform.machine(),
        "reference_ms": round(reference_ms(), 1),
        "figures": figures,
        **({"details": details} if details else {}),
    }
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(record, indent=2) + "\n")
    width = max((len(k) for k in figures), default=0)
    for key, value in figures.items() if show else ():
        shown = f"{value:,.2f}" if isinstance(value, float) else str(value)
        print(f"  {key:<{width}}  {shown}")
    print(f"  {'reference_ms (this machine)':<{width}}  {record['reference_ms']:,.2f}")
    print(f"saved {path.relative_to(Path.cwd()) if path.is_relative_to(Path.cwd()) else path}")
    return path
