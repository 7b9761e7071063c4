"""Bounded compiling and rendering of skill templates, in killable worker processes.

A SKILL.md may come from anywhere, so a templated body is untrusted code, and
Jinja's sandbox stops escapes, not waste: ``{{ 'x' | indent(10**9) }}``,
``{{ lipsum(10**6) }}``, a large ``'%*s'`` or ``'{:>999999999}'.format`` width,
nested ``range()`` loops. Each of these is one call into Python that no hook
inside the template sees until it returns, and some run while the template
compiles (Jinja folds constant expressions).

Two ways to bound that were weighed. An in-process sandbox would have to
intercept every operation that can allocate or loop (operators, every filter,
global and method, loop iterations, string concatenation) against a deadline and
a byte budget, and one missed path (``str.expandtabs``, ``|replace`` on an empty
pattern, ``~`` in a loop) is a hang or an out-of-memory kill of the whole
program. A worker process bounds all of them at once, including the ones nobody
listed: it is killed when its deadline passes, its address space is capped
(``RLIMIT_AS``, so a huge allocation fails at once with ``MemoryError``), and it
stops emitting output past a cap. The cost is a pipe round trip per render
(``benchmarks/bench_render.py`` prints it beside a plain Jinja render), paid
only by templated skills; plain skills never reach this module.

Workers are kept warm (started on first use, reused, at most ``workers`` at a
time) and replaced when one times out, runs out of memory or dies. Calls block
the calling thread, up to the budget; the ``a``-prefixed methods run them in a
worker thread so the event loop goes on.
"""

from __future__ import annotations

import atexit
import json
import os
import sys
import threading
from collections.abc import Collection, Mapping
from functools import partial
from pathlib import Path
from types import TracebackType
from typing import Any, Final, Self, final

import anyio.to_thread

from .._exceptions import TemplateError
from ._template_worker import READY
from ._worker import TemplateWorker, WorkerExited, WorkerTimedOut

__all__ = ["TemplateSandbox", "default_sandbox", "shared_sandbox"]

_SCRIPT: Final = Path(__file__).with_name("_template_worker.py")
#: How long a new worker may take to import Jinja2 (not counted in the template's budget).
_START_TIMEOUT: Final = 30.0
#: What the worker inherits: enough to find its libraries, none of the caller's secrets.
_INHERITED: Final = ("PYTHONPATH", "PYTHONHOME", "SYSTEMROOT")
# The default limits (docs/skills.md; the config's ``skills.template*`` keys default to the same).
_TIMEOUT: Final = 2.0
_MAX_OUTPUT: Final = 1_000_000
_MAX_MEMORY: Final = 256 * 1024 * 1024
_WORKERS: Final = 2


@final
class TemplateSandbox:
    """Compiles and renders templates in worker processes with a time, output and memory budget.

    Args:
        timeout: Seconds one compile or render may take; past it the worker is killed.
        max_output: Characters a render may produce.
        max_memory: Bytes of address space each worker may use (Linux and other
            systems that enforce ``RLIMIT_AS``).
        workers: Worker processes kept at most; more concurrent calls wait for one.

    Raises:
        ValueError: When a limit is not positive.
    """

    def __init__(
        self,
        *,
        timeout: float = _TIMEOUT,
        max_output: int = _MAX_OUTPUT,
        max_memory: int = _MAX_MEMORY,
        workers: int = _WORKERS,
    ) -> None:
        for name, value in (
            ("timeout", timeout),
            ("max_output", max_output),
            ("max_memory", max_memory),
            ("workers", workers),
        ):
            if not value > 0:
                raise ValueError(f"TemplateSandbox {name} must be > 0, got {value!r}")
        self.timeout = timeout
        self.max_output = max_output
        self.max_memory = max_memory
        self.workers = workers
        self._argv = [sys.executable, "-P", str(_SCRIPT), str(max_output), str(max_memory), repr(timeout)]
        self._env = {key: os.environ[key] for key in _INHERITED if key in os.environ}
        self._condition = threading.Condition()
        self._idle: list[TemplateWorker] = []
        self._busy: set[TemplateWorker] = set()
        self._started = 0
        self._closed = False

    def __repr__(self) -> str:
        return (
            f"TemplateSandbox(timeout={self.timeout!r}, max_output={self.max_output!r}, "
            f"max_memory={self.max_memory!r}, workers={self.workers!r})"
        )

    def check(self, source: str, names: Collection[str]) -> None:
        """Compile ``source`` and refuse any name it reads that is not in ``names``.

        Raises:
            TemplateError: A syntax error or an undeclared name (with its line),
                or a budget exceeded.
        """
        self._ask({"op": "check", "source": source, "names": sorted(names)}, "compiling")

    def render(self, source: str, context: Mapping[str, object]) -> str:
        """Render ``source`` with ``context`` (JSON values: text, numbers, booleans, lists, mappings).

        Raises:
            TemplateError: The template failed or a budget was exceeded.
        """
        return str(self._ask({"op": "render", "source": source, "context": dict(context)}, "rendering")["text"])

    async def arender(self, source: str, context: Mapping[str, object]) -> str:
        """:meth:`render` in a worker thread, so other tasks run meanwhile.

        If the caller is cancelled it returns at once; the render goes on in the
        background until it ends or its budget kills it.
        """
        return await anyio.to_thread.run_sync(partial(self.render, source, context), abandon_on_cancel=True)

    def close(self) -> None:
        """Stop every worker; calls in progress fail, later calls raise ``RuntimeError``."""
        with self._condition:
            self._closed = True
            workers, self._idle = [*self._idle, *self._busy], []
            self._condition.notify_all()
        for worker in workers:
            worker.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def _ask(self, request: dict[str, Any], doing: str) -> dict[str, Any]:
        try:
            line = json.dumps(request).encode() + b"\n"
        except (TypeError, ValueError, RecursionError) as exc:
            raise TemplateError(f"values must be JSON data (text, numbers, booleans, lists, mappings): {exc}") from exc
        worker = self._acquire()
        keep = False
        try:
            reply: dict[str, Any] = json.loads(worker.ask(line, self.timeout))
            # After a MemoryError the interpreter may be in a poor state; start afresh.
            keep = not reply.get("memory")
        except WorkerTimedOut:
            raise TemplateError(f"{doing} took longer than the {self.timeout:g} s time budget") from None
        except WorkerExited as exc:
            raise TemplateError(f"{exc} while {doing}") from None
        finally:
            self._release(worker, keep=keep)
        if reply.get("memory"):
            raise TemplateError(f"{doing} needed more than the {self.max_memory / 2**20:g} MiB memory budget")
        if not reply["ok"]:
            raise TemplateError(str(reply["message"]), line=reply.get("line"), name=reply.get("name"))
        return reply

    def _acquire(self) -> TemplateWorker:
        with self._condition:
            while True:
                if self._closed:
                    raise RuntimeError("This TemplateSandbox is closed")
                while self._idle:
                    worker = self._idle.pop()
                    # A worker that died is replaced. In a forked child the parent's workers
                    # are not the child's children, so they look dead too: it starts its own.
                    if worker.alive:
                        self._busy.add(worker)
                        return worker
                    self._started -= 1
                    worker.close()
                if self._started < self.workers:
                    self._started += 1
                    break
                self._condition.wait()
        try:
            worker = self._start()
        except OSError as exc:
            self._give_back(None)
            raise TemplateError(f"cannot start the template worker ({self._argv[0]}): {exc}") from exc
        with self._condition:
            self._busy.add(worker)
        if self._closed:  # closed while it started: close() did not see it
            worker.close()
        return worker

    def _release(self, worker: TemplateWorker, *, keep: bool) -> None:
        """Put ``worker`` back, or replace it at once so the next call finds one warm."""
        with self._condition:
            self._busy.discard(worker)
        if keep:
            self._give_back(worker)
            return
        worker.close()
        try:
            replacement = None if self._closed else self._start()
        except OSError:
            replacement = None  # the next call starts one and reports why it cannot
        self._give_back(replacement)

    def _give_back(self, worker: TemplateWorker | None) -> None:
        with self._condition:
            if worker is not None and not self._closed:
                self._idle.append(worker)
                worker = None
            else:
                self._started -= 1
            self._condition.notify()
        if worker is not None:
            worker.close()

    def _start(self) -> TemplateWorker:
        return TemplateWorker(self._argv, self._env, ready=READY, start_timeout=_START_TIMEOUT)


_shared: dict[tuple[float, int, int, int], TemplateSandbox] = {}
_shared_lock = threading.Lock()


def shared_sandbox(
    *,
    timeout: float = _TIMEOUT,
    max_output: int = _MAX_OUTPUT,
    max_memory: int = _MAX_MEMORY,
    workers: int = _WORKERS,
) -> TemplateSandbox:
    """The sandbox with these limits, shared by every caller asking for the same ones, closed at exit.

    Loaders built from a config use it, so every toolbox with the same
    ``skills`` limits shares one pool of workers, and skills kept from an
    earlier load still have a sandbox to render in.

    Raises:
        ValueError: When a limit is not positive.
    """
    key = (timeout, max_output, max_memory, workers)
    with _shared_lock:
        sandbox = _shared.get(key)
        if sandbox is None:
            sandbox = _shared[key] = TemplateSandbox(
                timeout=timeout, max_output=max_output, max_memory=max_memory, workers=workers
            )
            atexit.register(sandbox.close)
        return sandbox


def default_sandbox() -> TemplateSandbox:
    """The sandbox used when none is passed: default limits, shared, closed at exit."""
    return shared_sandbox()
