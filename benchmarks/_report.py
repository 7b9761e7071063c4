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


def save(name: str, figures: dict[str, Any]) -> Path:
    """Print ``figures`` and write them with machine details to ``results/<name>.json``."""
    RESULTS.mkdir(exist_ok=True)
    record = {
        "benchmark": name,
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "python": sys.version.split()[0],
        "machine": platform.machine(),
        "figures": figures,
    }
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(record, indent=2) + "\n")
    width = max(len(k) for k in figures)
    for key, value in figures.items():
        shown = f"{value:,.2f}" if isinstance(value, float) else str(value)
        print(f"  {key:<{width}}  {shown}")
    print(f"saved {path.relative_to(Path.cwd()) if path.is_relative_to(Path.cwd()) else path}")
    return path
