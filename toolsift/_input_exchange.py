"""A 2026-07-28 client's answers to an upstream server's question, carried through a gateway call.

Shared by ``mcp_sessions`` (which calls the server) and ``serve`` (which
returns the question to its client); users never build one.
"""

from __future__ import annotations

from dataclasses import dataclass

import mcp.types as types

__all__ = ["InputExchange"]


@dataclass
class InputExchange:
    """One call's input exchange with the upstream server (a call-record extension).

    Attributes:
        responses: The client's answers to the server's previous question (``inputResponses``), if any.
        request_state: The server's state from that question, echoed by the client, if any.
        pending: Set by the call when the server asks again: the ``InputRequiredResult`` to return to the client.
    """

    responses: types.InputResponses | None = None
    request_state: str | None = None
    pending: types.InputRequiredResult | None = None
