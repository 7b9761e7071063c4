"""A replica's subscription to the channels other replicas publish on, kept through Redis outages."""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import anyio
from anyio.abc import TaskStatus

from ._state import SharedState

__all__ = ["listen"]

logger = logging.getLogger("toolsift.serve")

# The first and the longest wait between attempts to subscribe again while Redis is away.
_FIRST_RETRY_SECONDS = 0.25
_MAX_RETRY_SECONDS = 5.0


async def listen(
    state: SharedState,
    channels: Sequence[str],
    deliver: Callable[[str, dict[str, Any]], Awaitable[None]],
    *,
    task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
) -> None:
    """Hand each JSON message published on ``channels`` to ``deliver`` (channel, message), until cancelled.

    A message that cannot be delivered is logged and the next one taken; a
    lost connection is retried with backoff (redis-py subscribes again on
    the next read).
    """
    pubsub = state.redis.pubsub()
    await pubsub.subscribe(*channels)
    task_status.started()
    delay = 0.0
    try:
        while True:
            try:
                async for message in pubsub.listen():
                    if delay:
                        logger.warning("replica %s has its Redis subscription back", state.replica)
                        delay = 0.0
                    await _deliver_safely(state, deliver, message["channel"], message["data"])
            except Exception as exc:  # Redis away: redis-py reconnects and subscribes again on the next read
                if not delay:
                    logger.warning("replica %s lost its Redis subscription (%s); retrying", state.replica, exc)
                delay = min(_MAX_RETRY_SECONDS, max(_FIRST_RETRY_SECONDS, delay * 2))
                await anyio.sleep(delay)
    finally:
        with anyio.CancelScope(shield=True):
            await state.redis.close_pubsub(pubsub)


async def _deliver_safely(
    state: SharedState, deliver: Callable[[str, dict[str, Any]], Awaitable[None]], channel: str, data: str
) -> None:
    try:
        await deliver(channel, json.loads(data))
    except Exception:
        logger.exception("replica %s could not deliver a message from %s", state.replica, channel)
