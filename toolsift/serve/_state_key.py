"""The secret that seals ``requestState``, the question a 2026-07-28 client carries back with its answer:
read from the environment so that every worker and replica that may get the retry opens it alike."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Final

from mcp.server.request_state import RequestStateSecurity

from .._exceptions import ConfigError

__all__ = ["ENV_STATE_KEY", "STATE_SECONDS", "request_state_security"]

#: The secret that seals ``requestState``: the same on every worker and replica that may get a retry.
ENV_STATE_KEY: Final = "TOOLSIFT_REQUEST_STATE_KEY"
#: How long a sealed question (and so a yes to it) stays good.
STATE_SECONDS: Final = 600.0


def request_state_security(environ: Mapping[str, str] | None = None) -> RequestStateSecurity:
    """How ``requestState`` is sealed: under ``$TOOLSIFT_REQUEST_STATE_KEY``, else a key of this process only.

    Raises:
        ConfigError: When the variable is set but shorter than 32 bytes.
    """
    key = (os.environ if environ is None else environ).get(ENV_STATE_KEY)
    if not key:
        return RequestStateSecurity.ephemeral(ttl=STATE_SECONDS)
    try:
        return RequestStateSecurity(keys=[key], ttl=STATE_SECONDS)
    except ValueError as exc:
        raise ConfigError(
            f"${ENV_STATE_KEY} must hold at least 32 bytes of secret randomness (for example "
            f"the output of 'python -c \"import secrets; print(secrets.token_hex(32))\"'): {exc}",
            field=ENV_STATE_KEY,
        ) from None
