"""The session's one state machine: its transitions, and what a call gets in each state."""

from __future__ import annotations

import math

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolsift import ServerDraining, ServerUnavailable
from toolsift.config import StdioServer
from toolsift.mcp_sessions import McpSession
from toolsift.mcp_sessions._draining import Drain
from toolsift.mcp_sessions._internal import SessionState
from toolsift.mcp_sessions._session import SessionEvent

S = SessionState
WAY_OUT = (S.DRAINING, S.CLOSING, S.CLOSED)
# The moves a session makes, restated from the lifecycle diagram in toolsift.mcp_sessions._session.
ALLOWED = {
    S.IDLE: {S.CONNECTING},
    S.CONNECTING: {S.CONNECTING, S.READY, S.ERROR},
    S.READY: {S.RESTARTING, S.ERROR},
    S.RESTARTING: {S.RESTARTING, S.READY, S.ERROR},
    S.ERROR: {S.RESTARTING},
    S.DRAINING: {S.CLOSING, S.CLOSED},
    S.CLOSING: {S.CLOSED},
    S.CLOSED: {S.CLOSED},
}


def _session() -> McpSession:
    return McpSession(StdioServer(command="unused").with_name("srv"))


def _allowed(current: SessionState, target: SessionState) -> bool:
    return target in ALLOWED[current] or (current not in WAY_OUT and target in WAY_OUT)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(list(S)), st.sampled_from([None, "why"])), max_size=25))
def test_session_states_follow_the_table_and_never_come_back_from_the_way_out(
    moves: list[tuple[SessionState, str | None]],
) -> None:
    session = _session()
    life = session._life
    events: list[SessionEvent] = []
    life.subscribe(events.append)
    left = False
    for target, reason in moves:
        before, before_reason, heard = life.state, life.reason, len(events)
        if _allowed(before, target):
            assert life.set(target, reason) is True
            assert (life.state, life.reason) == (target, reason)
            changed = (target, reason) != (before, before_reason)
            assert len(events) == heard + changed
        elif before in WAY_OUT:
            assert life.set(target, reason) is False  # a late step of a task that has not noticed yet
            assert (life.state, life.reason, len(events)) == (before, before_reason, heard)
        else:
            with pytest.raises(RuntimeError, match=f"cannot go from {before} to {target}"):
                life.set(target, reason)
            assert life.state is before
        left = left or life.state in WAY_OUT
        assert life.leaving == (life.state in WAY_OUT)
        assert life.closing == (life.state in (S.CLOSING, S.CLOSED))
        assert not (left and life.state not in WAY_OUT)
        assert life.settled.is_set() == any(s not in (S.IDLE, S.CONNECTING) for s in [life.state, *_seen(events)])


def _seen(events: list[SessionEvent]) -> list[SessionState]:
    return [event.state for event in events]


def _walk(session: McpSession, *states: SessionState, reason: str | None = "why") -> None:
    for state in states:
        if state is S.DRAINING:
            session.stop_taking_calls()  # the one way in: it records the drain that new calls are told of
        else:
            assert session._life.set(state, reason)


@pytest.mark.parametrize(
    ("path", "error", "message"),
    [
        ((), ServerUnavailable, "'srv' is idle"),
        ((S.CONNECTING,), ServerUnavailable, "'srv' is connecting"),
        ((S.CONNECTING, S.READY, S.RESTARTING), ServerUnavailable, "'srv' is restarting: why"),
        ((S.CONNECTING, S.ERROR), ServerUnavailable, "'srv' is down: why"),
        ((S.CONNECTING, S.READY, S.DRAINING), ServerDraining, "'srv' is draining"),
        ((S.CONNECTING, S.READY, S.CLOSING), ServerUnavailable, "'srv' is closed"),
        ((S.CONNECTING, S.READY, S.CLOSING, S.CLOSED), ServerUnavailable, "'srv' is closed"),
    ],
)
async def test_session_state_alone_decides_what_a_call_gets(
    path: tuple[SessionState, ...], error: type[Exception], message: str
) -> None:
    session = _session()
    _walk(session, *path)
    with pytest.raises(error, match=message):
        await session.call_tool("echo", {"text": "x"})


async def test_session_ready_without_a_connection_answers_restarting() -> None:
    # The connection ended a moment ago and the owner task has not moved the state yet.
    session = _session()
    _walk(session, S.CONNECTING, S.READY, reason=None)
    with pytest.raises(ServerUnavailable, match="'srv' is restarting"):
        await session.call_tool("echo")


async def test_session_closing_after_a_drain_still_says_draining() -> None:
    session = _session()
    await session.drain(0)
    assert session.state is S.CLOSED
    fresh = _session()
    _walk(fresh, S.CONNECTING, S.READY)
    _walk(fresh, S.DRAINING, S.CLOSING)
    with pytest.raises(ServerDraining, match="'srv' is draining"):
        await fresh.call_tool("echo")


async def test_session_stops_taking_calls_in_the_step_that_drains_it() -> None:
    session = _session()
    _walk(session, S.CONNECTING, S.READY)
    drain = session.stop_taking_calls(Drain("srv", 5, removed=False))
    # No scheduling round later: the state, and so what a call gets, changed in this very step.
    assert session.state is S.DRAINING and session.reason == f"draining since {drain.since}"
    assert session.stop_taking_calls(Drain("srv", 9, removed=True)) is drain  # a drain begun stays as it is
    with pytest.raises(ServerDraining, match=r"'srv' is draining \(removed at ") as refused:
        await session.call_tool("echo")
    assert str(refused.value) == str(drain.error())


async def test_session_drain_refuses_a_bad_deadline() -> None:
    session = _session()
    for bad in (-1.0, math.inf, math.nan):
        with pytest.raises(ValueError, match="drain_seconds must be a finite number of seconds >= 0"):
            await session.drain(bad)
    assert session.state is S.IDLE


def test_session_cannot_be_left_without_being_entered() -> None:
    session = _session()
    with pytest.raises(RuntimeError, match="'srv' was not entered"):
        anyio.run(session.__aexit__, None, None, None)
