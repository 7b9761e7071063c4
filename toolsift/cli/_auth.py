"""``toolsift auth login|logout|status``: sign in to OAuth servers once, for every later run.

``login`` connects to the server with a sign-in handler that prints the
authorization URL, opens a browser when it can, and waits on the loopback
redirect port (``auth.redirectPort``) for the code; the SDK then exchanges it
and the tokens land in the server's token file (``$XDG_CONFIG_HOME/toolsift/oauth``,
readable by the user only). Later runs use and refresh them without asking.
"""

from __future__ import annotations

import contextlib
import webbrowser
from collections.abc import Callable
from typing import Annotated
from urllib.parse import parse_qs, urlsplit

import anyio
import typer
from anyio.abc import SocketStream
from mcp.shared.auth import AuthorizationCodeResult

from .._exceptions import ConfigError, SessionError
from ..config import HttpServer, ToolsiftConfig
from ..mcp_sessions import ClientCallbacks, McpSession, SessionOptions, SignInHandler
from ..mcp_sessions._internal import FileTokenStorage, SessionState, token_file
from ._app import run_async
from ._output import Output
from ._toolbox import trusted_config

# Registered on the root app when a command of this module runs (see _app.COMMANDS).
commands = typer.Typer(add_completion=False, rich_markup_mode=None)

__all__ = ["auth_app", "loopback_sign_in"]

auth_app = typer.Typer(
    name="auth", help="Sign in to OAuth servers, sign out, and see where you are signed in.", no_args_is_help=True
)
commands.add_typer(auth_app)

# How long a person has to finish signing in, in seconds.
SIGN_IN_SECONDS = 300.0
_PAGE = "<!doctype html><title>toolsift</title><p>{}</p>"
# Far more than a browser's request head; a peer sending more is not the redirect.
_MAX_HEAD_BYTES = 65_536

ServerArgument = Annotated[str, typer.Argument(help="The server's name in the config.")]


def loopback_sign_in(show: Callable[[str], object], *, open_browser: bool = True) -> SignInHandler:
    """A ``SignInHandler`` that shows the URL, opens a browser, and takes the code at the loopback redirect.

    ``show`` gets the line with the URL once the loopback port is listening.
    Any local program can connect to that port: a connection that is not the
    redirect (one closed at once, another path, bytes that are no HTTP, a
    ``state`` other than the one the authorization URL carries) is answered
    or dropped, and the listener keeps waiting for the redirect until
    :data:`SIGN_IN_SECONDS` have passed.
    """

    async def sign_in(server: str, url: str, redirect_uri: str) -> AuthorizationCodeResult:
        target = urlsplit(redirect_uri)
        expected = _Redirect(target.path, parse_qs(urlsplit(url).query).get("state", [None])[0])
        received: list[AuthorizationCodeResult | SessionError] = []
        listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=target.port or 80)
        async with listener, anyio.create_task_group() as group:

            async def handle(stream: SocketStream) -> None:
                result: AuthorizationCodeResult | SessionError | None
                async with stream:
                    try:
                        result = await expected.read(stream)
                    except SessionError as refused:
                        result = refused
                if result is not None:
                    received.append(result)
                    group.cancel_scope.cancel()

            group.cancel_scope.deadline = anyio.current_time() + SIGN_IN_SECONDS
            group.start_soon(listener.serve, handle)
            show(f"Sign in to {server!r} at:\n  {url}")
            if open_browser:  # some browsers run in the terminal until closed: never wait for it
                group.start_soon(_open_browser, url)
        if not received:
            raise SessionError(f"nobody signed in to {server!r} within {SIGN_IN_SECONDS:.0f} s")
        if isinstance(received[0], SessionError):
            raise received[0]
        return received[0]

    return sign_in


async def _open_browser(url: str) -> None:
    await anyio.to_thread.run_sync(webbrowser.open, url)


class _Redirect:
    """What the authorization server's redirect looks like: its path, and the ``state`` the sign-in sent."""

    def __init__(self, path: str, state: str | None) -> None:
        self.path, self.state = path, state

    async def read(self, stream: SocketStream) -> AuthorizationCodeResult | None:
        """Read one HTTP request; the authorization result when it is the redirect, else None.

        Raises:
            SessionError: When it is the redirect and it says the sign-in was refused.
        """
        head = await _request_head(stream)
        if head is None:
            return None  # closed, or gone, before a whole request arrived: nothing to answer
        request_line = head.split(b"\r\n", 1)[0].split(b" ")
        try:
            target = urlsplit(request_line[1].decode("ascii", "replace")) if len(request_line) == 3 else None
        except ValueError:  # a target urlsplit cannot take apart
            target = None
        if target is None:
            await _answer(stream, "400 Bad Request", "Not an HTTP request.")
            return None
        if target.path != self.path:
            await _answer(stream, "404 Not Found", "Not the sign-in address.")
            return None
        query = parse_qs(target.query)
        state = query.get("state", [None])[0]
        if self.state is not None and state != self.state:
            await _answer(stream, "400 Bad Request", "Not the sign-in this terminal is waiting for.")
            return None
        if "error" in query:
            await _answer(stream, "400 Bad Request", "Sign-in was refused; see the terminal.")
            reason = query.get("error_description", query["error"])[0]
            raise SessionError(f"the authorization server refused the sign-in: {query['error'][0]}: {reason}")
        if "code" not in query:
            await _answer(stream, "400 Bad Request", "No authorization code came back.")
            return None
        await _answer(stream, "200 OK", "Signed in. You can close this tab and go back to the terminal.")
        return AuthorizationCodeResult(code=query["code"][0], state=state, iss=query.get("iss", [None])[0])


async def _request_head(stream: SocketStream) -> bytes | None:
    """The request line and headers, or None when the peer closes first or sends more than a request head."""
    head = b""
    try:
        while b"\r\n\r\n" not in head:
            if len(head) > _MAX_HEAD_BYTES:
                return None
            head += await stream.receive()
    except (anyio.EndOfStream, anyio.BrokenResourceError):
        return None
    return head


async def _answer(stream: SocketStream, status: str, text: str) -> None:
    body = _PAGE.format(text).encode()
    head = f"HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {len(body)}\r\n"
    with contextlib.suppress(anyio.BrokenResourceError):  # the peer left without reading the answer
        await stream.send(head.encode() + b"Connection: close\r\n\r\n" + body)


def _config(out: Output) -> ToolsiftConfig:
    return trusted_config(out).config


def _oauth_server(config: ToolsiftConfig, name: str) -> HttpServer:
    server = config.servers.get(name)
    if server is None:
        known = ", ".join(sorted(config.servers)) or "none"
        raise ConfigError(f"no server {name!r} in {config.path}; servers: {known}")
    if not isinstance(server, HttpServer) or server.auth is None:
        raise ConfigError(f"server {name!r} has no 'auth' block in {config.path}; add one to sign in with OAuth")
    return server


@auth_app.command()
def login(
    server: ServerArgument,
    browser: Annotated[bool, typer.Option("--browser/--no-browser", help="Open the URL in a browser.")] = True,
) -> None:
    """Sign in to an OAuth server now (a browser opens), so later runs need no sign-in."""
    out = Output()
    chosen = _oauth_server(_config(out), server)
    path = token_file(chosen)
    FileTokenStorage(path).forget_tokens()  # a fresh sign-in, even when old tokens still work
    options = SessionOptions(callbacks=ClientCallbacks(sign_in=loopback_sign_in(out.line, open_browser=browser)))

    async def connect() -> None:
        async with McpSession(chosen, options=options) as session:
            if session.state is not SessionState.READY:
                raise SessionError(f"signing in to {server!r} failed: {session.reason}")

    run_async(connect)
    out.line(f"Signed in to {server!r}; tokens saved in {path}")


@auth_app.command()
def logout(server: ServerArgument) -> None:
    """Forget a server's tokens (its client registration too), so the next run signs in again."""
    out = Output()
    path = token_file(_oauth_server(_config(out), server))
    if path.exists():
        path.unlink()
        out.line(f"Signed out of {server!r}; removed {path}")
    else:
        out.line(f"Not signed in to {server!r} (no {path})")


@auth_app.command()
def status() -> None:
    """Where you are signed in: each server with an 'auth' block, and its tokens."""
    out = Output()
    config = _config(out)
    rows = [
        (name, server.auth.grant, _token_state(FileTokenStorage(token_file(server))))
        for name, server in config.servers.items()
        if isinstance(server, HttpServer) and server.auth is not None
    ]
    if not rows:
        out.line(f"no server in {config.path} has an 'auth' block")
        return
    out.table("OAuth sign-in", ("server", "grant", "tokens"), rows)


def _token_state(storage: FileTokenStorage) -> str:
    saved = storage.saved_tokens()
    if saved is None:
        return "none: not signed in"
    tokens, when = saved
    parts = [f"saved {when:%Y-%m-%d %H:%M} UTC"]
    if tokens.expires_in:
        parts.append(f"access token valid for {tokens.expires_in} s from then")
    if tokens.refresh_token:
        parts.append("refreshable")
    if tokens.scope:
        parts.append(f"scope {tokens.scope}")
    return ", ".join(parts)
