"""What servers say about using them (their handshake's ``instructions``), for the turns that show their tools.

A server's instructions explain its tools ("call ``login`` before anything
else"); a model that sees the tools without them guesses. They are text from
the server, so an ``untrusted`` server's are fenced like its results, and each
is capped so that one verbose server cannot crowd the others out.

The fence's id is a parameter: a conversation draws one per conversation, so
the same instructions give the same bytes in every request (the provider's
prompt cache keeps them) while the server still cannot guess the id to fake
the closing marker.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping

from .._fence import fence
from ._resources import cut_utf8
from ._session import McpSession

__all__ = ["DEFAULT_INSTRUCTION_BYTES", "server_instructions"]

DEFAULT_INSTRUCTION_BYTES = 4096


def server_instructions(
    sessions: Mapping[str, McpSession], *, nonce: str | None = None, max_bytes: int = DEFAULT_INSTRUCTION_BYTES
) -> dict[str, str]:
    """Instructions by server name, of connected servers that gave some and allow them (``instructions``).

    Each text is cut at ``max_bytes`` (on a character boundary) and fenced
    unless the server is ``trust: trusted``.

    Args:
        sessions: The sessions by server name.
        nonce: The fence id (a conversation's, drawn once with ``secrets``); None draws a new one.
        max_bytes: The cap per server.
    """
    nonce = nonce if nonce is not None else secrets.token_hex(4)
    found: dict[str, str] = {}
    for name, session in sessions.items():
        text = (session.instructions or "").strip()
        if not text or not session.config.instructions:
            continue
        text, cut = cut_utf8(text, max_bytes)
        if cut:
            text += "\n[cut: the server's instructions are longer]"
        if session.config.trust == "untrusted":
            text = fence(text, server=name, tool="instructions", nonce=nonce)
        found[name] = text
    return found
