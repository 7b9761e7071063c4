"""Templates that would hang or exhaust memory end in a clear error within the budget; other skills load.

Each case sits in a skill folder beside a good skill: the folder loads, the bad
skill's render ends in a ``SkillRenderError`` naming it, and the good one still
renders (on a fresh worker where the bad one's was killed).
"""

from __future__ import annotations

import os
import signal
import sys
import time
import warnings
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import anyio.from_thread
import pytest
from local_tools import RecordingTool

from toolsift import SkillParseError, SkillRenderError, TemplateError
from toolsift.registry import ToolRegistry, TurnScope
from toolsift.skills import Skill, SkillsLoader, TemplateSandbox
from toolsift.skills._internal import parse_skill_text
from toolsift.skills._worker import TemplateWorker

TIMEOUT = 1.0
# Wall-clock slack on top of the budget for a loaded machine: the point is that it ends, not how fast.
SLACK = 15.0
NESTED_LOOPS = "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"
TIME = rf"rendering took longer than the {TIMEOUT:g} s time budget"
MEMORY = r"rendering needed more than the 256 MiB memory budget"
OUTPUT = r"the output passed the 1,000,000-character cap"


@pytest.fixture(scope="module")
def sandbox() -> Iterator[TemplateSandbox]:
    with TemplateSandbox(timeout=TIMEOUT) as sandbox:
        yield sandbox


def write(root: Path, name: str, front: str, body: str) -> Path:
    path = root / name / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\nname: {name}\ndescription: A skill.\n{front}---\n{body}\n", encoding="utf-8")
    return path


def templated(body: str) -> Skill:
    return Skill(name="slow", description="S.", body=body, templating="jinja")


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        # Folded by Jinja while compiling before: 48 s and a MemoryError at load.
        ("{{ '%3000000000s' % 'x' }}", MEMORY),
        ("{{ '%100000000s' % 'x' }}", OUTPUT),
        ("{{ 'x' | indent(10**9) }}", MEMORY),
        ("{{ lipsum(10**6) }}", f"{TIME}|{MEMORY}"),
        ("{{ '%*s' % (10**9, 'x') }}", MEMORY),
        ("{{ '{:>999999999}'.format('x') }}", MEMORY),
        ("{{ '%999999999s' | format('x') }}", MEMORY),
        ("{{ 'x' | center(10**9) }}", MEMORY),
        ("{{ ('x' * 999999) | wordwrap(1) }}", f"{TIME}|{OUTPUT}"),
        (NESTED_LOOPS, TIME),
        # The cap ends it in some 0.2 s on a quiet machine; on a loaded one the time budget may come first.
        ("{% for i in range(100000) %}{% for j in range(100000) %}x{% endfor %}{% endfor %}", f"{TIME}|{OUTPUT}"),
    ],
)
async def test_runaway_template_ends_in_a_clear_error_and_the_other_skill_loads(
    tmp_path: Path, sandbox: TemplateSandbox, body: str, reason: str
) -> None:
    bad = write(tmp_path, "bad", "templating: jinja\n", body)
    write(tmp_path, "good", "variables: [topic]\n", "About {{ topic }}.")
    loader = SkillsLoader(project=tmp_path, sandbox=sandbox)
    with anyio.fail_after(SLACK):
        skills = await loader.aload()
    assert skills.problems == () and sorted(skills.skills) == ["bad", "good"]
    started = time.monotonic()
    with pytest.raises(SkillRenderError, match=rf"Skill 'bad' \({bad}\) failed to render: ({reason})"):
        await skills.get("bad").render(sandbox=sandbox)
    assert time.monotonic() - started < TIMEOUT + SLACK
    assert await skills.get("good").render({"topic": "auth"}, sandbox=sandbox) == "About auth."


async def test_compiling_past_the_budget_is_a_load_problem_and_the_other_skill_loads(tmp_path: Path) -> None:
    # Some 20,000 output tags take seconds to parse and compile: far past a 0.1 s budget.
    bad = write(tmp_path, "huge", "templating: jinja\n", "{{ arguments }}\n" * 20_000)
    write(tmp_path, "plain", "", "No template here: {{ .Values.image }}.")
    with TemplateSandbox(timeout=0.1) as sandbox:
        skills = await SkillsLoader(project=tmp_path, sandbox=sandbox).aload()
    assert list(skills.skills) == ["plain"]
    (problem,) = skills.problems
    assert isinstance(problem.exception, SkillParseError) and problem.path == bad
    assert problem.message == (f"{bad}:6: template error in the body: compiling took longer than the 0.1 s time budget")


async def test_slow_render_leaves_other_tasks_running(monkeypatch: pytest.MonkeyPatch) -> None:
    in_worker = anyio.Event()
    ask = TemplateWorker.ask

    def ask_and_tell(worker: TemplateWorker, line: bytes, timeout: float) -> bytes:
        anyio.from_thread.run_sync(in_worker.set)
        return ask(worker, line, timeout)

    monkeypatch.setattr(TemplateWorker, "ask", ask_and_tell)
    registry = ToolRegistry()
    registry.register(RecordingTool("echo"))
    finished = anyio.Event()
    with TemplateSandbox(timeout=60) as sandbox:

        async def slow() -> None:
            with pytest.raises(SkillRenderError, match=r"the template worker was stopped while rendering"):
                await templated(NESTED_LOOPS).render(sandbox=sandbox)
            finished.set()

        with anyio.fail_after(SLACK):
            async with anyio.create_task_group() as tg:
                tg.start_soon(slow)
                await in_worker.wait()
                # A call on the event loop completes while the render runs in its worker.
                result = await registry.execute("echo", {"text": "hi"}, TurnScope())
                assert not result.is_error and not finished.is_set()
                sandbox.close()  # the render in progress fails at once instead of running out its 60 s
                await finished.wait()


async def test_worker_that_dies_mid_render_is_an_error_and_is_replaced(monkeypatch: pytest.MonkeyPatch) -> None:
    ask = TemplateWorker.ask

    def kill_then_ask(worker: TemplateWorker, line: bytes, timeout: float) -> bytes:
        monkeypatch.setattr(TemplateWorker, "ask", ask)
        os.kill(worker.pid, signal.SIGKILL)
        return ask(worker, line, timeout)

    skill = Skill(name="s", description="S.", body="{{ topic }}", variables=["topic"])
    with TemplateSandbox() as sandbox:
        monkeypatch.setattr(TemplateWorker, "ask", kill_then_ask)
        with pytest.raises(
            SkillRenderError,
            match=r"Skill 's' failed to render: the template worker exited with "
            rf"code -{signal.SIGKILL:d} while rendering",
        ):
            await skill.render({"topic": "x"}, sandbox=sandbox)
        assert await skill.render({"topic": "x"}, sandbox=sandbox) == "x"


async def test_idle_worker_that_died_is_replaced_before_the_next_render(monkeypatch: pytest.MonkeyPatch) -> None:
    ask = TemplateWorker.ask

    def ask_then_stop(worker: TemplateWorker, line: bytes, timeout: float) -> bytes:
        monkeypatch.setattr(TemplateWorker, "ask", ask)
        reply = ask(worker, line, timeout)
        worker.close()  # as if it died while idle, after answering
        return reply

    skill = Skill(name="s", description="S.", body="{{ topic }}", variables=["topic"])
    with TemplateSandbox(workers=1) as sandbox:
        monkeypatch.setattr(TemplateWorker, "ask", ask_then_stop)
        assert await skill.render({"topic": "one"}, sandbox=sandbox) == "one"
        assert await skill.render({"topic": "two"}, sandbox=sandbox) == "two"


async def test_cancelled_render_returns_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    in_worker = anyio.Event()
    ask = TemplateWorker.ask

    def ask_and_tell(worker: TemplateWorker, line: bytes, timeout: float) -> bytes:
        anyio.from_thread.run_sync(in_worker.set)
        return ask(worker, line, timeout)

    monkeypatch.setattr(TemplateWorker, "ask", ask_and_tell)
    with TemplateSandbox(timeout=60) as sandbox, anyio.fail_after(SLACK):
        async with anyio.create_task_group() as tg:
            tg.start_soon(partial(templated(NESTED_LOOPS).render, sandbox=sandbox))
            await in_worker.wait()
            tg.cancel_scope.cancel()


def test_forked_child_starts_its_own_workers(sandbox: TemplateSandbox) -> None:
    assert sandbox.render("{{ x }}", {"x": "parent"}) == "parent"  # a warm worker the child must not share
    read, write = os.pipe()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # 3.12+: fork in a process with threads
        pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            os.write(write, sandbox.render("{{ x }}", {"x": "child"}).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as answer:
        assert answer.read() == b"child"
    os.waitpid(pid, 0)
    assert sandbox.render("{{ x }}", {"x": "parent again"}) == "parent again"


async def test_worker_that_cannot_start_is_a_render_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    skill = Skill(name="s", description="S.", body="{{ topic }}", variables=["topic"])
    monkeypatch.setattr(sys, "executable", str(tmp_path / "no-python"))
    with (
        TemplateSandbox() as sandbox,
        pytest.raises(SkillRenderError, match=r"cannot start the template worker \(.*no-python\): .*No such file"),
    ):
        await skill.render({"topic": "x"}, sandbox=sandbox)
    monkeypatch.setattr(sys, "executable", "/bin/false")  # starts, then exits before saying it is ready
    with (
        TemplateSandbox() as sandbox,
        pytest.raises(SkillRenderError, match=r"the template worker exited with code 1 while rendering"),
    ):
        await skill.render({"topic": "x"}, sandbox=sandbox)


@pytest.mark.parametrize(
    ("value", "found"),
    [(object(), "Object of type object is not JSON serializable"), ({1j: "x"}, "keys must be str")],
)
async def test_values_that_are_not_json_are_refused(sandbox: TemplateSandbox, value: Any, found: str) -> None:
    skill = Skill(name="s", description="S.", body="{{ topic }}", variables=["topic"])
    with pytest.raises(SkillRenderError, match=rf"values must be JSON data \(text, numbers, .*\): .*{found}"):
        await skill.render({"topic": value}, sandbox=sandbox)


async def test_closed_sandbox_refuses_work() -> None:
    sandbox = TemplateSandbox()
    sandbox.close()
    with pytest.raises(RuntimeError, match=r"This TemplateSandbox is closed"):
        await templated("{{ arguments }}").render(sandbox=sandbox)


def test_sandbox_used_directly_raises_template_errors_with_their_line(sandbox: TemplateSandbox) -> None:
    with pytest.raises(TemplateError, match=r"^the template reads 'y', which is not an allowed name$") as caught:
        sandbox.check("ok\n{{ x }}\n{{ y }}", ["x"])
    assert (caught.value.name, caught.value.line) == ("y", 3)
    with pytest.raises(TemplateError, match=r"^Expected an expression, got 'end of statement block'$") as caught:
        sandbox.check("ok\n{% if %}", [])
    assert (caught.value.name, caught.value.line) == (None, 2)
    assert sandbox.render("{{ x }}", {"x": [1, 2]}) == "[1, 2]"


@pytest.mark.parametrize("limit", ["timeout", "max_output", "max_memory", "workers"])
def test_sandbox_limits_must_be_positive(limit: str) -> None:
    with pytest.raises(ValueError, match=rf"TemplateSandbox {limit} must be > 0, got 0"):
        TemplateSandbox(**{limit: 0})


async def test_default_sandbox_renders_with_the_default_limits() -> None:
    skill = parse_skill_text("---\nname: s\ndescription: S.\nvariables: [n]\n---\n{{ n }} and {{ arguments }}\n")
    assert await skill.render({"n": 1, "arguments": "more"}) == "1 and more"
    assert repr(TemplateSandbox()) == (
        "TemplateSandbox(timeout=2.0, max_output=1000000, max_memory=268435456, workers=2)"
    )
