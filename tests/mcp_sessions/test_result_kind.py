"""A 2026-07-28 result without ``resultType`` reads as ``complete``; answers of earlier revisions pass untouched."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp.shared.message import SessionMessage
from mcp.types import ErrorData, JSONRPCError, JSONRPCRequest, JSONRPCResponse
from mcp_types import PROTOCOL_VERSION_META_KEY
from mcp_types.methods import validate_server_result
from pydantic import ValidationError

from toolsift.mcp_sessions._result_kind import ResultKinds
from toolsift.mcp_sessions._transport import WatchedReadStream

UNTAGGED = {"content": [{"type": "text", "text": "done"}]}


def request(request_id: int, version: str | None) -> SessionMessage:
    params: dict[str, Any] = {"name": "t", "arguments": {}}
    if version is not None:
        params["_meta"] = {PROTOCOL_VERSION_META_KEY: version}
    return SessionMessage(JSONRPCRequest(jsonrpc="2.0", id=request_id, method="tools/call", params=params))


def answer(request_id: int) -> SessionMessage:
    return SessionMessage(JSONRPCResponse(jsonrpc="2.0", id=request_id, result=dict(UNTAGGED)))


class Quiet:
    def transport_ended(self) -> None: ...
    def unparsable_message(self, error: Exception) -> None: ...
    def orphan_error(self, error: ErrorData) -> None: ...


def test_the_sdk_refuses_an_untagged_2026_result_on_its_own() -> None:
    with pytest.raises(ValidationError, match="resultType"):
        validate_server_result("tools/call", "2026-07-28", UNTAGGED)


async def test_an_untagged_answer_to_a_2026_request_reads_as_complete() -> None:
    kinds = ResultKinds()
    send, receive = anyio.create_memory_object_stream[SessionMessage | Exception](4)
    kinds.sent(request(1, "2026-07-28"))
    kinds.sent(request(2, "2025-11-25"))
    kinds.sent(request(3, None))
    async with send, WatchedReadStream(receive, Quiet(), kinds) as read:
        for request_id in (1, 2, 3):
            await send.send(answer(request_id))
        results = []
        for _ in range(3):
            item = await read.receive()
            assert isinstance(item, SessionMessage) and isinstance(item.message, JSONRPCResponse)
            results.append(item.message.result)
    assert results[0] == {**UNTAGGED, "resultType": "complete"}
    validate_server_result("tools/call", "2026-07-28", results[0])
    assert results[1] == UNTAGGED and results[2] == UNTAGGED


def test_a_tag_the_server_gave_is_kept_and_an_error_ends_the_request() -> None:
    kinds = ResultKinds()
    kinds.sent(request(1, "2026-07-28"))
    tagged = SessionMessage(JSONRPCResponse(jsonrpc="2.0", id=1, result={"resultType": "input_required"}))
    kinds.received(tagged)
    assert isinstance(tagged.message, JSONRPCResponse) and tagged.message.result == {"resultType": "input_required"}
    kinds.sent(request(2, "2026-07-28"))
    kinds.received(SessionMessage(JSONRPCError(jsonrpc="2.0", id=2, error=ErrorData(code=-1, message="no"))))
    late = answer(2)  # an id answered already is not the 2026 request's any more
    kinds.received(late)
    assert isinstance(late.message, JSONRPCResponse) and late.message.result == UNTAGGED
