"""The middleware pipeline every served call passes, usable by the agent loop too.

A :class:`Pipeline` wraps a call handler (usually ``ToolRegistry.execute``, via
:meth:`Pipeline.for_registry`) in stages built once, Starlette style::

    pipeline = Pipeline.for_registry(registry, [
        Middleware(PermissionFilter, agent="ci", allowed_tools=["read_*"], permissions=profile),
        Middleware(AuditTrail, audit=registry.audit),
        Middleware(SecurityGuard, max_argument_bytes=1_000_000, commands=policy, urls=urls),
        Middleware(ResultGuard, max_bytes=1_000_000, untrusted=["read_file"], fence=fence),
    ])
    result = await pipeline("read_file", {"path": "README.md"}, scope, permissions)
    result = await pipeline.handle(CallRecord("read_file", {"path": "README.md"}, scope, permissions))

The one path of a call, served or from the agent loop, in this order (each
stage sees the call on the way in and the result on the way out):

1. :class:`PermissionFilter` (served calls): whose layers 3 and 5 apply;
2. :class:`AuditTrail`: records what a stage below refused, on the way out;
3. :class:`SecurityGuard`: argument size and argument, command and URL policies;
4. :class:`ResultGuard`: on the way out, the fence of untrusted tools, then the size rule
   (over the limit: cut, with a note saying what was cut);
5. ``ToolRegistry.handle``: the name routed once, the mask of layers 1-4, layer 5,
   argument validation, approval, the audited start, the tool (an MCP tool fences an
   untrusted server's text), one audit record of the outcome.

What the caller hands its tools travels in the record, each in a field of its own: the
conversation's ``Discovery`` for ``search_tools`` (``discovery``), a gateway's approver that asks
the client of the served request (``approver``), its way of sending an MCP call as that client
(``forward``). What the call ended with comes back as its result.

The agent loop's ``Conversation`` runs its calls through a pipeline too (just the
registry by default) inside a :class:`ResultGuard` with its ``limits``: one size rule
for both paths.

What each stage adds to ``execute`` (which checks the five layers, validates
arguments against the schema and audits):

- :class:`PermissionFilter`: the call runs as one profile (its allowed tools,
  permissions and plan mode), whatever the caller claims;
- :class:`AuditTrail`: an audit event for each refusal the registry never saw;
- :class:`SecurityGuard`: argument size, per-argument rules, the command policy
  and the URL policy;
- :class:`ResultGuard`: untrusted text fenced, and a result over the size limit cut with a note.

Beside the stages, :func:`trace_tool_calls` turns every audited call into an
OpenTelemetry span (the ``otel`` extra).

A pipeline always returns a ``ToolResult``; a refusal is an error result whose
``meta[REFUSAL_KEY]`` names the stage. Only cancellation propagates.
"""

from .._public import publish
from ._audit import AuditTrail as AuditTrail
from ._permission import PermissionFilter as PermissionFilter
from ._pipeline import Middleware as Middleware
from ._pipeline import Pipeline as Pipeline
from ._results import ResultGuard as ResultGuard
from ._security import SecurityGuard as SecurityGuard
from ._telemetry import trace_tool_calls as trace_tool_calls

__all__ = [
    "AuditTrail",
    "Middleware",
    "PermissionFilter",
    "Pipeline",
    "ResultGuard",
    "SecurityGuard",
    "trace_tool_calls",
]

publish(globals(), __name__, __all__)
