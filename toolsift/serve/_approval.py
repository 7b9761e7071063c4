"""Served calls that an ``ask`` rule holds back are approved by the client that made them, by elicitation.

The MCP era of the request decides how the question travels. Up to
2025-11-25 it is an ``elicitation/create`` request sent in the middle of the
call. From 2026-07-28 on, servers may not send requests mid-call: the call
ends with an ``InputRequiredResult`` carrying the question, and the client
calls again with the answer in ``input_responses``. That first round is
audited as refused ("waiting for the client's answer"); the retry that
carries a yes runs the tool.

A client that declared no form elicitation, or a connection with no
back-channel (stateless HTTP in the older era), cannot be asked, and the call
is refused with that reason: silence never means yes.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Final

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp_types.version import is_version_at_least

from ..registry import ApprovalRequest

__all__ = ["APPROVAL_INPUT", "ClientApprover"]

# The key of the question in InputRequiredResult.input_requests, and of its answer in input_responses.
APPROVAL_INPUT: Final = "toolsift.approval"
_INPUT_REQUIRED_SINCE = "2026-07-28"
_SCHEMA: types.ElicitRequestedSchema = {
    "type": "object",
    "properties": {"approve": {"type": "boolean", "title": "Approve", "description": "Run this tool call"}},
    "required": ["approve"],
}


@dataclass
class _Asking:
    """The request being served, and the question left for the client to answer on its retry."""

    ctx: ServerRequestContext[Any]
    params: types.CallToolRequestParams
    pending: types.ElicitRequest | None = None


class ClientApprover:
    """The approver of served calls: asks the MCP client of the request being served."""

    def __init__(self) -> None:
        self._current: ContextVar[_Asking | None] = ContextVar("toolsift_serve_asking", default=None)

    @contextmanager
    def asking(self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> Iterator[_Asking]:
        """Make the client of this request the one asked while the call runs; read ``.pending`` after."""
        asking = _Asking(ctx, params)
        token = self._current.set(asking)
        try:
            yield asking
        finally:
            self._current.reset(token)

    async def __call__(self, request: ApprovalRequest) -> bool:
        asking = self._current.get()
        if asking is None:
            raise RuntimeError("the call did not come from an MCP client, so there is no one to ask")
        ctx = asking.ctx
        capabilities = ctx.session.client_capabilities
        elicitation = capabilities.elicitation if capabilities is not None else None
        # A bare `elicitation: {}` (from before elicitation had modes) means form support.
        if elicitation is None or (elicitation.form is None and elicitation.url is not None):
            raise RuntimeError("the client cannot be asked: it declared no form elicitation capability")
        message = f"Approve {request.describe()}?"
        if is_version_at_least(ctx.protocol_version, _INPUT_REQUIRED_SINCE):
            answer = (asking.params.input_responses or {}).get(APPROVAL_INPUT)
            if answer is None:
                asking.pending = types.ElicitRequest(
                    params=types.ElicitRequestFormParams(message=message, requested_schema=_SCHEMA))
                raise RuntimeError("waiting for the client's answer (input required)")
            if not isinstance(answer, types.ElicitResult):
                raise RuntimeError(f"the client answered {APPROVAL_INPUT!r} with a {type(answer).__name__}, "
                                   "not an elicitation result")
        else:
            answer = await ctx.session.elicit_form(message, _SCHEMA, related_request_id=ctx.request_id)
        return answer.action == "accept" and (answer.content or {}).get("approve") is True
