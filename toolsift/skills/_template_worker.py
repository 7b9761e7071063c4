"""The template worker: compiles and renders skill bodies in a process of its own.

:class:`~toolsift.skills.TemplateSandbox` starts this file as a script
(``python -P _template_worker.py MAX_OUTPUT MAX_MEMORY TIMEOUT``), so the process
imports Jinja2 and the standard library, not toolsift. It caps its own address
space, says ``ready``, then answers one JSON request per line on stdin with one
JSON reply per line on stdout, until stdin closes:

- ``{"op": "check", "source": ..., "names": [...]}``: parse and compile the
  body, and refuse a name outside ``names``;
- ``{"op": "render", "source": ..., "context": {...}}``: render it.

A reply is ``{"ok": true, "text": ...}``, or ``{"ok": false, "message": ...,
"line": ..., "name": ...}`` (with ``"memory": true`` after a ``MemoryError``).
The parent enforces the time budget by killing this process; the output cap is
enforced here, chunk by chunk, and the memory cap by ``RLIMIT_AS`` (a
``MemoryError`` here, a refusal to the caller).

Compiling never folds arithmetic: every binary operator is "intercepted", which
makes Jinja leave it to run time (``BinExpr.as_const`` gives up on intercepted
operators), so ``{{ '%3000000000s' % 'x' }}`` costs nothing to load and is refused
when rendered. Jinja still folds a filter whose arguments are all literals
(``{{ 'x' | center(100000000) }}``); that runs here too, under the same time and
memory budget. The ``*`` and ``**`` checks refuse the common blow-ups with a
precise message before the memory cap has to.
"""

from __future__ import annotations

import contextlib
import json
import math
import sys
from collections import OrderedDict
from collections.abc import Iterator
from typing import Any, Final

from jinja2 import StrictUndefined, Template, TemplateSyntaxError, UndefinedError, meta, nodes
from jinja2.exceptions import SecurityError
from jinja2.runtime import Context
from jinja2.sandbox import ImmutableSandboxedEnvironment

try:
    import resource
except ImportError:  # pragma: no cover - Windows: the time budget still applies, memory is not capped
    resource = None  # type: ignore[assignment]

#: Largest string or sequence ``*`` may build, in items.
MAX_REPEAT: Final = 1_000_000
#: Largest integer ``**`` may build, in bits.
MAX_POWER_BITS: Final = 65_536
READY: Final = b"ready\n"
_CACHED: Final = 256


class _SkillEnvironment(ImmutableSandboxedEnvironment):
    # All of Jinja's binary operators: intercepting one stops compile-time folding of it.
    intercepted_binops = frozenset({"+", "-", "*", "/", "//", "%", "**"})

    def call_binop(self, context: Context, operator: str, left: Any, right: Any) -> Any:
        if operator == "**" and isinstance(left, int) and isinstance(right, int) and right > 0:
            if max(left.bit_length(), 1) * right > MAX_POWER_BITS:
                raise SecurityError(f"{left} ** {right} is larger than {MAX_POWER_BITS} bits")
        elif operator == "*":
            size, count = (left, right) if isinstance(right, int) else (right, left)
            if isinstance(size, str | list | tuple) and isinstance(count, int) and len(size) * count > MAX_REPEAT:
                raise SecurityError(f"repeating a sequence {count} times goes past {MAX_REPEAT} items")
        return super().call_binop(context, operator, left, right)


# trim_blocks/lstrip_blocks: a block tag on its own line leaves no blank line behind,
# which keeps prompts built with {% if %} readable. No autoescape: the output is markdown.
_ENVIRONMENT: Final = _SkillEnvironment(
    undefined=StrictUndefined, autoescape=False, trim_blocks=True, lstrip_blocks=True
)


class _Refused(Exception):
    """A request that failed; becomes an ``ok: false`` reply."""

    def __init__(self, message: str, *, line: int | None = None, name: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.name = name


_templates: OrderedDict[str, Template] = OrderedDict()


def _compiled(source: str, tree: nodes.Template | None = None) -> Template:
    """The compiled template for ``source``, cached; ``tree`` spares parsing it again."""
    template = _templates.get(source)
    if template is None:
        template = _templates[source] = _ENVIRONMENT.from_string(tree if tree is not None else source)
        if len(_templates) > _CACHED:
            _templates.popitem(last=False)
    else:
        _templates.move_to_end(source)
    return template


def _first_use(tree: nodes.Template, name: str) -> int:
    for node in tree.find_all(nodes.Name):
        if node.name == name and node.ctx == "load":
            return node.lineno
    return 1  # pragma: no cover - find_undeclared_variables only reports names it saw loaded


def check(source: str, names: frozenset[str]) -> None:
    """Parse and compile ``source``; refuse the first name it loads that is not in ``names``."""
    try:
        tree = _ENVIRONMENT.parse(source)
        unknown = sorted(meta.find_undeclared_variables(tree) - names)
        if unknown:
            name = unknown[0]
            raise _Refused(
                f"the template reads {name!r}, which is not an allowed name", line=_first_use(tree, name), name=name
            )
        _compiled(source, tree)
    except TemplateSyntaxError as exc:
        raise _Refused(exc.message or str(exc), line=exc.lineno) from exc


def _chunks(template: Template, context: dict[str, Any], max_output: int) -> Iterator[str]:
    total = 0
    for chunk in template.generate(context):
        total += len(chunk)
        if total > max_output:
            raise _Refused(f"the output passed the {max_output:,}-character cap")
        yield chunk


def render(source: str, context: dict[str, Any], max_output: int) -> str:
    """Render ``source`` with ``context``, refusing output past ``max_output`` characters."""
    try:
        return "".join(_chunks(_compiled(source), context, max_output))
    except SecurityError as exc:
        raise _Refused(f"refused by the sandbox: {exc}") from exc
    except UndefinedError as exc:
        raise _Refused(f"undefined value: {exc.message}") from exc


def _answer(request: dict[str, Any], max_output: int) -> dict[str, Any]:
    try:
        if request["op"] == "check":
            check(request["source"], frozenset(request["names"]))
            return {"ok": True}
        return {"ok": True, "text": render(request["source"], request["context"], max_output)}
    except _Refused as exc:
        return {"ok": False, "message": exc.message, "line": exc.line, "name": exc.name}
    except MemoryError:
        return {"ok": False, "message": "out of memory", "memory": True}
    except Exception as exc:
        # Whatever else the template raises (a division by zero, a bad filter argument,
        # a recursion too deep) is the template's fault; the worker goes on.
        return {"ok": False, "message": f"{type(exc).__name__}: {exc}"}


def _limit_process(max_memory: int) -> None:
    if resource is None:  # pragma: no cover - Windows
        return
    # A worker killed by SIGXCPU (below) or a crash leaves no core file behind.
    resource.setrlimit(resource.RLIMIT_CORE, (0, resource.getrlimit(resource.RLIMIT_CORE)[1]))
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = max_memory if hard == resource.RLIM_INFINITY else min(max_memory, hard)
    # Some systems (macOS) refuse to set RLIMIT_AS: the time budget still applies there.
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def _cap_cpu(timeout: float) -> None:
    """Let the next request use at most the budget in CPU time, plus slack.

    The parent's deadline is what stops a slow request; this backstop stops one
    whose parent died mid-request (SIGXCPU ends the process).
    """
    if resource is None:  # pragma: no cover - Windows
        return
    usage = resource.getrusage(resource.RUSAGE_SELF)
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    soft = math.ceil(usage.ru_utime + usage.ru_stime + timeout) + 2
    if hard == resource.RLIM_INFINITY or soft <= hard:
        resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))


def main(argv: list[str]) -> None:
    """Serve requests from stdin until it closes."""
    max_output, max_memory, timeout = int(argv[0]), int(argv[1]), float(argv[2])
    _limit_process(max_memory)
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    stdout.write(READY)
    stdout.flush()
    for line in stdin:
        _cap_cpu(timeout)
        reply = _answer(json.loads(line), max_output)
        stdout.write(json.dumps(reply).encode() + b"\n")
        stdout.flush()


if __name__ == "__main__":
    main(sys.argv[1:])
