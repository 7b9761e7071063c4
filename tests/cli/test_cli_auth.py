"""`toolsift auth login|logout|status` against a real OAuth server, with an HTTP client standing in for the browser."""

from __future__ import annotations

import contextlib
import json
import socket
import webbrowser
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp.shared.auth import AuthorizationCodeResult
from servers import http_server
from test_cli import run

from toolsift import SessionError
from toolsift.cli._app import state
from toolsift.cli._auth import loopback_sign_in
from toolsift.mcp_sessions import SignInHandler


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("TOOLSIFT_CONFIG", raising=False)
    yield tmp_path
    state.config = None  # the CLI's global state outlives one in-process run


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def browse(url: str) -> bool:
    """A browser whose person signs in at once: follow the redirects, down to the loopback callback."""
    httpx2.get(url, follow_redirects=True)
    return True


def project(folder: Path, url: str) -> Path:
    servers = {"notes": {"url": url, "auth": {"redirectPort": free_port()}}, "plain": {"url": url}}
    path = folder / "toolsift.json"
    path.write_text(json.dumps({"tools": {"mcpServers": servers}}))
    return path


async def test_login_status_and_logout(
    capsys: pytest.CaptureFixture[str], home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(webbrowser, "open", browse)
    async with http_server("oauth_notes.py") as url:
        config = str(project(home, url))
        code, out, err = await anyio.to_thread.run_sync(lambda: run(capsys, "-c", config, "auth", "login", "notes"))
        assert code == 0, err
        assert "Sign in to 'notes' at:\n  http://127.0.0.1:" in out and "Signed in to 'notes'; tokens saved in" in out
        code, out, _ = run(capsys, "-c", config, "auth", "status")
    assert code == 0 and "refreshable" in out and "scope notes" in out and "plain" not in out
    code, out, _ = run(capsys, "-c", config, "auth", "logout", "notes")
    assert code == 0 and "Signed out of 'notes'" in out
    code, out, _ = run(capsys, "-c", config, "auth", "status")
    assert "none: not signed in" in out
    code, out, _ = run(capsys, "-c", config, "auth", "logout", "notes")
    assert code == 0 and "Not signed in to 'notes'" in out


def test_login_names_what_is_missing(capsys: pytest.CaptureFixture[str], home: Path) -> None:
    config = str(project(home, "http://127.0.0.1:9/mcp"))
    code, _, err = run(capsys, "-c", config, "auth", "login", "plain")
    assert code == 4 and "server 'plain' has no 'auth' block" in err
    code, _, err = run(capsys, "-c", config, "auth", "login", "nope")
    assert code == 4 and "no server 'nope'" in err and "servers: notes, plain" in err


class Shown:
    """The lines the sign-in shows; ``listening`` is set with the first (the port listens by then)."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.listening = anyio.Event()

    def __call__(self, line: str) -> None:
        self.lines.append(line)
        self.listening.set()


async def test_the_loopback_takes_the_code_and_ignores_other_paths() -> None:
    port, shown = free_port(), Shown()
    sign_in = loopback_sign_in(shown, open_browser=False)
    got: list[AuthorizationCodeResult] = []
    async with anyio.create_task_group() as group:
        group.start_soon(lambda: _collect(sign_in, port, got))
        await shown.listening.wait()
        async with httpx2.AsyncClient() as http:
            assert (await http.get(f"http://127.0.0.1:{port}/favicon.ico")).status_code == 404
            answer = await http.get(f"http://127.0.0.1:{port}/callback?code=abc&state=xyz")
    assert answer.status_code == 200 and "Signed in" in answer.text
    assert [(result.code, result.state) for result in got] == [("abc", "xyz")]
    assert shown.lines == ["Sign in to 'notes' at:\n  https://auth.example/authorize"]


async def test_a_refused_sign_in_is_an_error_with_the_servers_words() -> None:
    port, shown = free_port(), Shown()
    sign_in = loopback_sign_in(shown, open_browser=False)
    refused: list[SessionError] = []

    async def attempt() -> None:
        try:
            await sign_in("notes", "https://auth.example/authorize", f"http://127.0.0.1:{port}/callback")
        except SessionError as error:
            refused.append(error)

    async with anyio.create_task_group() as group:
        group.start_soon(attempt)
        await shown.listening.wait()
        async with httpx2.AsyncClient() as http:
            answer = await http.get(
                f"http://127.0.0.1:{port}/callback?error=access_denied&error_description=the+person+said+no"
            )
    assert answer.status_code == 400
    assert [str(error) for error in refused] == [
        "the authorization server refused the sign-in: access_denied: the person said no"
    ]


async def _collect(
    sign_in: SignInHandler, port: int, into: list[AuthorizationCodeResult], url: str = "https://auth.example/authorize"
) -> None:
    into.append(await sign_in("notes", url, f"http://127.0.0.1:{port}/callback"))


async def _stray(port: int, request: bytes | None) -> bytes:
    """One local connection that is not the redirect: ``request`` sent (None: connect and close at once)."""
    async with await anyio.connect_tcp("127.0.0.1", port) as stream:
        if request is None:
            return b""
        await stream.send(request)
        if not request.endswith(b"\r\n\r\n"):
            return b""  # half a request, then gone
        answer = b""
        with contextlib.suppress(anyio.EndOfStream):
            while True:
                answer += await stream.receive()
        return answer


async def test_stray_local_connections_leave_the_loopback_waiting_for_the_redirect() -> None:
    port, shown = free_port(), Shown()
    sign_in = loopback_sign_in(shown, open_browser=False)
    got: list[AuthorizationCodeResult] = []
    url = "https://auth.example/authorize?client_id=toolsift&state=expected-state"
    async with anyio.create_task_group() as group:
        group.start_soon(lambda: _collect(sign_in, port, got, url))
        await shown.listening.wait()
        assert await _stray(port, None) == b""
        assert await _stray(port, b"GET /callback?code=x") == b""
        assert (await _stray(port, b"\x00\x01 garbage\r\n\r\n")).startswith(b"HTTP/1.1 400 Bad Request")
        assert (await _stray(port, b"GET http://[bad/ HTTP/1.1\r\n\r\n")).startswith(b"HTTP/1.1 400 Bad Request")
        async with httpx2.AsyncClient() as http:
            assert (await http.get(f"http://127.0.0.1:{port}/other")).status_code == 404
            forged = await http.get(f"http://127.0.0.1:{port}/callback?code=forged&state=guess")
            refused = await http.get(f"http://127.0.0.1:{port}/callback?error=access_denied&state=guess")
            assert (forged.status_code, refused.status_code) == (400, 400)
            assert "Not the sign-in this terminal is waiting for" in forged.text
            assert not got and not group.cancel_scope.cancel_called  # still listening
            answer = await http.get(f"http://127.0.0.1:{port}/callback?code=real&state=expected-state")
    assert answer.status_code == 200 and "Signed in" in answer.text
    assert [(result.code, result.state) for result in got] == [("real", "expected-state")]
