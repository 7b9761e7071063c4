"""Served calls that an ``ask`` rule holds back are approved by the client that made them, by elicitation.

The MCP era of the request decides how the question travels. Up to
2025-11-25 it is an ``elicitation/create`` request sent in the middle of the
call. From 2026-07-28 on, servers may not send requests mid-call: the call
ends with an ``InputRequiredResult`` carrying the question and a
``requestState``, and the client calls again with the answer in
``input_responses`` and the state echoed. That first round is audited as
refused ("waiting for the client's answer"); the retry that carries a yes runs
the tool.

An answer counts only as the answer to a question this server asked: the
state names the question (a digest of the text the person was shown), the
page of it answered and a nonce used once, and the SDK's
``RequestStateBoundary`` seals it (AES-GCM) and binds it to the call's tool
and arguments, with an expiry. An answer sent with the first request, unasked,
or with a state from another question, is ignored and the question asked.

The person sees the whole call (``ApprovalRequest.describe``), only configured
secrets hidden. A call too long for one message is asked page by page: every
page must be accepted, and the last acceptance runs the call.

A client that declared no form elicitation, or a connection with no
back-channel (stateless HTTP in the older era), cannot be asked, and the call
is refused with that reason: silence never means yes. So is a 2026-07-28
call where the used nonces cannot be recorded as far as the sealing key
reaches (:mod:`._used_approvals`): a yes that could run twice is not asked for.
"""

from __future__ import annotations

import hashlib
import json
import logging
import secrets
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any, Final

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp_types.version import is_version_at_least

from ..registry import ApprovalRequest, Approver
from ._outcome import InputRequired
from ._state_key import STATE_SECONDS

if TYPE_CHECKING:
    from ._used_approvals import UsedApprovals

__all__ = ["APPROVAL_INPUT", "ClientApprover"]

logger = logging.getLogger("toolsift.serve")

# The key of the question in InputRequiredResult.input_requests, and of its answer in input_responses.
APPROVAL_INPUT: Final = "toolsift.approval"
_INPUT_REQUIRED_SINCE = "2026-07-28"
# What the pipeline (and the audit) sees of a call whose approval question went to the client.
_WAITING = "waiting for the client's answer (input required)"
# One message stays under the SDK client's 1 MiB SSE event limit: 4 bytes per character at worst in UTF-8.
_PAGE_CHARS = 200_000
_SCHEMA: types.ElicitRequestedSchema = {
    "type": "object",
    "properties": {"approve": {"type": "boolean", "title": "Approve", "description": "Run this tool call"}},
    "required": ["approve"],
}


def _pages(text: str) -> list[str]:
    """``text`` in pieces of at most ``_PAGE_CHARS``, cut at a line end where one is near."""
    pages: list[str] = []
    while len(text) > _PAGE_CHARS:
        cut = text.rfind("\n", _PAGE_CHARS // 2, _PAGE_CHARS)
        cut = cut + 1 if cut != -1 else _PAGE_CHARS
        pages.append(text[:cut])
        text = text[cut:]
    return [*pages, text]


def _message(pages: list[str], page: int) -> str:
    if len(pages) == 1:
        return pages[0]
    after = (
        "approve = true runs the call"
        if page == len(pages)
        else ("approve = true shows the next page; anything else refuses the call")
    )
    return f"{pages[page - 1]}\n\n(page {page} of {len(pages)}: {after})"


def _accepted(answer: types.ElicitResult) -> bool:
    return answer.action == "accept" and (answer.content or {}).get("approve") is True


class ClientApprover:
    """The approver of served calls: asks the MCP client of the request being served.

    Args:
        used: The record of answered questions' nonces, reaching every process that
            accepts this server's ``requestState`` (:func:`~._used_approvals.used_approvals`).
        mask: Hides configured secrets in the question (``McpServerManager.mask_secrets``).
    """

    def __init__(self, used: UsedApprovals, mask: Callable[[str], str] | None = None) -> None:
        self._mask = mask
        self.used = used

    def for_request(self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> Approver:
        """The approver of one served call: it asks the client that made the request."""
        return partial(self._approve, ctx, params)

    async def __call__(self, request: ApprovalRequest) -> bool:
        """A call that did not come with its served request (see :meth:`for_request`): no one to ask."""
        raise RuntimeError("the call did not come from an MCP client, so there is no one to ask")

    async def _approve(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams, request: ApprovalRequest
    ) -> bool | InputRequired:
        capabilities = ctx.session.client_capabilities
        elicitation = capabilities.elicitation if capabilities is not None else None
        # A bare `elicitation: {}` (from before elicitation had modes) means form support.
        if elicitation is None or (elicitation.form is None and elicitation.url is not None):
            raise RuntimeError("the client cannot be asked: it declared no form elicitation capability")
        text = f"Approve {request.describe(mask=self._mask)}"
        pages = _pages(text)
        if not is_version_at_least(ctx.protocol_version, _INPUT_REQUIRED_SINCE):
            for number in range(1, len(pages) + 1):
                message = _message(pages, number)
                asked = await ctx.session.elicit_form(message, _SCHEMA, related_request_id=ctx.request_id)
                if not _accepted(asked):
                    return False
            return True
        if self.used.unkept is not None:
            raise RuntimeError(self.used.unkept)
        question = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
        page = await self._answered_page(params, question, len(pages))
        if page is None:
            return self._ask(pages, 1, question)
        answer = (params.input_responses or {}).get(APPROVAL_INPUT)
        if not isinstance(answer, types.ElicitResult):
            raise RuntimeError(
                f"the client answered {APPROVAL_INPUT!r} with a {type(answer).__name__}, not an elicitation result"
            )
        if not _accepted(answer):
            return False
        if page < len(pages):
            return self._ask(pages, page + 1, question)
        return True

    @staticmethod
    def _ask(pages: list[str], page: int, question: str) -> InputRequired:
        """Page ``page`` of the question for the client, with the state its answer must come back with."""
        state = json.dumps(
            {"ask": APPROVAL_INPUT, "question": question, "page": page, "nonce": secrets.token_urlsafe(16)}
        )
        params = types.ElicitRequestFormParams(message=_message(pages, page), requested_schema=_SCHEMA)
        request = types.InputRequiredResult(
            input_requests={APPROVAL_INPUT: types.ElicitRequest(params=params)}, request_state=state
        )
        return InputRequired.asking(request, _WAITING, is_error=True)

    async def _answered_page(self, params: types.CallToolRequestParams, question: str, pages: int) -> int | None:
        """The page of this question that the retry answers, or None when it answers no question asked here.

        The state arrives unsealed and verified by the SDK's boundary (bound to
        this tool and these arguments); it must name this question and carry a
        nonce not used before. Anything else is ignored: the question is asked.
        """
        if params.request_state is None or APPROVAL_INPUT not in (params.input_responses or {}):
            return None
        try:
            state = json.loads(params.request_state)
            named, nonce, page = state["ask"], state["nonce"], state["page"]
        except (ValueError, KeyError, TypeError):
            return None
        if (
            named != APPROVAL_INPUT
            or state.get("question") != question
            or not isinstance(page, int)
            or not (1 <= page <= pages)
        ):
            logger.warning("an approval answer for another question was ignored; asking again")
            return None
        if not await self.used.first_use(str(nonce), seconds=STATE_SECONDS):
            logger.warning("an approval answer was sent again; asking again")
            return None
        return page
