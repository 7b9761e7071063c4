"""Skill rendering: what the bounded worker costs over a plain Jinja render, in the same run.

Run: python benchmarks/bench_render.py

- Anchor: the ``release-notes`` example's body rendered by Jinja2's
  ``ImmutableSandboxedEnvironment`` in this process, compiled once (no time,
  output or memory budget).
- Guarded: the same body and values through ``TemplateSandbox.render`` (a pipe
  round trip to a warm worker process, which compiled it once), and through
  ``await skill.render(...)`` as ``/use`` calls it (plus a hop to a worker thread).
- Plain: a skill without templating (``await skill.render(...)``, no worker).
- Load: compiling and checking the body in the worker (``TemplateSandbox.check``),
  and the first render of a new sandbox (starting its worker process).
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Any

import anyio
from _report import median_us, save
from jinja2 import StrictUndefined
from jinja2.sandbox import ImmutableSandboxedEnvironment

from toolsift.skills import Skill, TemplateSandbox, bind_arguments, parse_skill

ROOT = Path(__file__).resolve().parent.parent
REPEAT = 2_000


async def median_async_us(skill: Skill, values: dict[str, str], sandbox: TemplateSandbox | None) -> float:
    samples = []
    for _ in range(REPEAT):
        start = time.perf_counter()
        await skill.render(values, sandbox=sandbox)
        samples.append((time.perf_counter() - start) * 1e6)
    return statistics.median(samples)


def main() -> dict[str, Any]:
    skill = parse_skill(ROOT / "examples" / "skills" / "release-notes" / "SKILL.md")
    values = bind_arguments(skill, "version=2.1.0 audience=developers")
    plain = Skill(name="plain", description="P.", body=skill.body)
    environment = ImmutableSandboxedEnvironment(undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    template = environment.from_string(skill.body)
    with TemplateSandbox() as sandbox:
        expected = sandbox.render(skill.body, values)
        assert expected == template.render(values)
        start = time.perf_counter()
        with TemplateSandbox() as cold:
            cold.render(skill.body, values)
        cold_ms = (time.perf_counter() - start) * 1e3
        figures = {
            "unguarded_jinja_render_us": median_us(lambda: template.render(values), repeat=REPEAT),
            "sandbox_render_us": median_us(lambda: sandbox.render(skill.body, values), repeat=REPEAT),
            "skill_render_async_us": anyio.run(median_async_us, skill, values, sandbox),
            "plain_skill_render_async_us": anyio.run(median_async_us, plain, {"arguments": "x"}, None),
            "sandbox_check_us": median_us(
                lambda: sandbox.check(skill.body, [*skill.variables, "arguments"]), repeat=REPEAT // 10
            ),
            "first_render_new_sandbox_ms": cold_ms,
        }
    figures["overhead_us"] = figures["skill_render_async_us"] - figures["unguarded_jinja_render_us"]
    return figures


if __name__ == "__main__":
    save("render", main())
