"""A loopback LLM provider: records each request, answers as the provider does, and models its prompt cache.

The endpoint is a real HTTP server on 127.0.0.1 (uvicorn + Starlette, in the caller's event loop) that
speaks three APIs at once, so the real ``anthropic`` and ``openai`` SDKs talk to it through ``base_url``:

- ``POST /v1/messages`` (Anthropic Messages),
- ``POST /v1/chat/completions`` (OpenAI Chat Completions),
- ``POST /v1/responses`` (OpenAI Responses).

What it answers comes from a script (a list of :class:`Reply`, or a function of the :class:`Request`);
the usage it reports comes from each provider's documented cache rules, applied to what arrived:

Anthropic (https://platform.claude.com/docs/en/build-with-claude/prompt-caching and
https://platform.claude.com/docs/en/agents-and-tools/tool-use/tool-search-tool):

- the prompt is the blocks ``tools`` -> ``system`` -> ``messages`` in that order; a block's identity is
  its JSON without ``cache_control`` (a breakpoint does not change what is cached);
- a cache entry is written only at a ``cache_control`` breakpoint (at most 4), and only when the prefix up
  to it reaches the minimum cacheable length (1,024 tokens, Claude Sonnet/Opus 4.x; ``min_cacheable``);
- a breakpoint reads the longest entry found at its own block or at one of the 19 block boundaries before
  it (the 20-block lookback); everything after the read point up to the last breakpoint written is a write;
- tools with ``defer_loading: true`` are not in the prefix; a ``tool_reference`` (in a ``tool_result`` or a
  server tool search result) loads the referenced definition at that point of the conversation;
- the cache lives for the endpoint's lifetime (the 5-minute TTL never runs out in a scripted session);
- ``role: "system"`` messages with ``tool_addition`` / ``tool_removal`` blocks change the tools offered from
  where they stand, and need their beta header (``_tool_changes``); a script that calls a withdrawn tool fails.

OpenAI (https://platform.openai.com/docs/guides/prompt-caching): caching is automatic for prompts of
1,024 tokens or more; the cached part is the longest prefix shared with an earlier request, counted in
128-token steps from 1,024 (1,024, 1,152, 1,280, ...). The prompt is rendered as the models read it:
the leading system/developer messages (Responses: ``instructions``), then the tools, then the rest;
of Responses tools with ``defer_loading: true`` only what the model still sees stays (a namespace's name
and description, a deferred function's own name and description), and a ``tool_search_output`` item
carries what it loaded inline. ``prompt_cache_key`` only routes requests
to a machine and changes nothing here.

A hosted search (OpenAI's ``tool_search`` with ``execution: "server"``, Anthropic's ``tool_search_tool_*``)
runs as the provider runs it: when the script calls a deferred tool that nothing in the conversation has
loaded yet, the answer first holds the search and its result (a ``tool_search_call`` and a
``tool_search_output`` with the definition; a ``server_tool_use`` and a ``tool_search_tool_result`` with a
``tool_reference``), so the next request carries the definition where a real one would.

Tokens are estimated by :func:`count_tokens`: tiktoken's ``o200k_base`` when tiktoken is installed, else
UTF-8 bytes / 4 (rounded up), the rule of thumb both providers quote. Every figure of a comparison uses
the same estimate, so ratios hold even where absolute counts are off by the tokenizer's difference.
"""

from __future__ import annotations

import hashlib
import importlib
import itertools
import json
import socket
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio
import uvicorn
from _tool_changes import Offered, offered, references, refused_change
from starlette.applications import Starlette
from starlette.requests import Request as HttpRequest
from starlette.responses import JSONResponse
from starlette.routing import Route

__all__ = [
    "Call",
    "ErrorReply",
    "PromptUsage",
    "ProviderEndpoint",
    "Reply",
    "Request",
    "anthropic_usage",
    "count_tokens",
    "openai_cached_tokens",
]

Api = Literal["anthropic", "chat", "responses"]
ANTHROPIC_LOOKBACK = 20
OPENAI_MIN_CACHED = 1024
OPENAI_STEP = 128


def _tokenizer() -> Callable[[str], int] | None:
    try:
        encoding = importlib.import_module("tiktoken").get_encoding("o200k_base")
    except Exception:  # not installed, or its vocabulary cannot be fetched offline
        return None
    return lambda text: len(encoding.encode(text, disallowed_special=()))


_TIKTOKEN = _tokenizer()
TOKEN_ESTIMATE = "tiktoken o200k_base" if _TIKTOKEN is not None else "UTF-8 bytes / 4"


def count_tokens(text: str) -> int:
    """The token estimate every figure here uses (see the module docstring)."""
    if _TIKTOKEN is not None:
        return _TIKTOKEN(text)
    return -(-len(text.encode()) // 4)


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _without_cache_control(block: Any) -> Any:
    if isinstance(block, dict):
        return {k: _without_cache_control(v) for k, v in block.items() if k != "cache_control"}
    if isinstance(block, list):
        return [_without_cache_control(v) for v in block]
    return block


# -- scripted answers -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Call:
    """A tool call the scripted model makes."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Reply:
    """What the scripted model answers.

    Attributes:
        text: Its text, if any.
        calls: Tool calls, in order.
        blocks: Raw provider content placed before text and calls: Anthropic content blocks
            (``server_tool_use``, ``tool_search_tool_result``) or Responses output items.
    """

    text: str | None = None
    calls: tuple[Call, ...] = ()
    blocks: tuple[dict[str, Any], ...] = ()


@dataclass(frozen=True)
class ErrorReply:
    """An HTTP error in the provider's own error shape."""

    status: int
    message: str


@dataclass(frozen=True)
class PromptUsage:
    """The prompt's tokens as the cache model counts them.

    Attributes:
        input_tokens: Every input token, cached or not.
        cache_read: Tokens read from the cache.
        cache_write: Tokens written to the cache (Anthropic only).
        tool_tokens: Tokens of the tool definitions the prompt carries (deferred ones only once loaded).
        loaded_tokens: The part of ``tool_tokens`` loaded in the messages: by a ``tool_reference``
            (Anthropic) or inline in a ``tool_search_output`` (OpenAI Responses).
    """

    input_tokens: int
    cache_read: int = 0
    cache_write: int = 0
    tool_tokens: int = 0
    loaded_tokens: int = 0

    @property
    def uncached(self) -> int:
        return self.input_tokens - self.cache_read - self.cache_write

    @property
    def cost(self) -> float:
        """Effective input cost in uncached-token units: uncached 1x, reads 0.1x, writes 1.25x."""
        return self.uncached + 0.1 * self.cache_read + 1.25 * self.cache_write


@dataclass(frozen=True)
class Request:
    """One request that arrived: which API, its JSON body, and what the cache model made of it."""

    api: Api
    body: dict[str, Any]
    usage: PromptUsage


Script = Callable[[Request], "Reply | ErrorReply"] | Iterable["Reply | ErrorReply"]


# -- the cache models --------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Block:
    key: str
    tokens: int
    breakpoint: bool
    tool_tokens: int = 0


def _anthropic_blocks(body: dict[str, Any]) -> list[_Block]:
    """The prompt as Anthropic lays it out: tools, system, then each message's content blocks."""
    deferred: dict[str, dict[str, Any]] = {}
    blocks: list[_Block] = []
    for tool in body.get("tools") or []:
        plain = _without_cache_control(tool)
        if tool.get("defer_loading"):
            deferred[tool["name"]] = plain
            continue
        text = _json(plain)
        tokens = count_tokens(text)
        blocks.append(_Block("tool:" + text, tokens, "cache_control" in tool, tokens))
    system = body.get("system")
    for part in [{"type": "text", "text": system}] if isinstance(system, str) else system or []:
        text = _json(_without_cache_control(part))
        blocks.append(_Block("system:" + text, count_tokens(text), "cache_control" in part))
    for message in body.get("messages") or []:
        content = message["content"]
        for part in [{"type": "text", "text": content}] if isinstance(content, str) else content:
            text = _json(_without_cache_control(part))
            loaded = [deferred[name] for name in references(part) if name in deferred]
            tool_tokens = sum(count_tokens(_json(schema)) for schema in loaded)
            key = f"{message['role']}:{text}:{_json(loaded)}"
            blocks.append(_Block(key, count_tokens(text) + tool_tokens, "cache_control" in part, tool_tokens))
    return blocks


def anthropic_usage(body: dict[str, Any], cache: set[str], *, min_cacheable: int = 1024) -> PromptUsage:
    """Usage of one Messages request under Anthropic's rules; ``cache`` (prefix hashes) is updated."""
    blocks = _anthropic_blocks(body)
    digest = hashlib.sha256()
    prefixes: list[tuple[str, int]] = []
    total = 0
    for block in blocks:
        digest.update(block.key.encode() + b"\x00")
        total += block.tokens
        prefixes.append((digest.copy().hexdigest(), total))
    breakpoints = [i for i, block in enumerate(blocks) if block.breakpoint]
    read_at = -1
    for point in breakpoints:
        for index in range(point, max(point - ANTHROPIC_LOOKBACK, -1), -1):
            if prefixes[index][0] in cache:
                read_at = max(read_at, index)
                break
    read = prefixes[read_at][1] if read_at >= 0 else 0
    written = [p for p in breakpoints if p > read_at and prefixes[p][1] >= min_cacheable]
    write = prefixes[written[-1]][1] - read if written else 0
    cache.update(prefixes[p][0] for p in written)
    tools = offered(body, _without_cache_control)
    up_front = sum(count_tokens(_json(tool)) for tool in tools.up_front.values())
    loaded = sum(count_tokens(_json(tool)) for tool in tools.loaded.values())
    return PromptUsage(total, read, write, up_front + loaded, loaded)


def _openai_parts(api: Api, body: dict[str, Any]) -> tuple[list[str], int, int]:
    """The prompt as OpenAI models read it (instructions, tools, the rest), its tools' tokens, and
    the part of them a ``tool_search_output`` loaded (counted in the rest, where it sits)."""
    if api == "chat":
        messages = list(body.get("messages") or [])
        lead = list(itertools.takewhile(lambda m: m.get("role") in ("system", "developer"), messages))
        head, rest, tools = [_json(m) for m in lead], messages[len(lead) :], list(body.get("tools") or [])
    else:
        instructions = body.get("instructions")
        head = [_json({"instructions": instructions})] if instructions else []
        given = body.get("input") or []
        rest = [{"role": "user", "content": given}] if isinstance(given, str) else list(given)
        tools = [t for t in (_loaded(tool) for tool in body.get("tools") or []) if t is not None]
    tool_texts = [_json(tool) for tool in tools]
    loaded = sum(
        count_tokens(_json(tool))
        for item in rest
        if item.get("type") == "tool_search_output"
        for tool in item.get("tools") or []
    )
    up_front = sum(count_tokens(text) for text in tool_texts)
    return head + tool_texts + [_json(m) for m in rest], up_front + loaded, loaded


def _loaded(tool: dict[str, Any], *, top: bool = True) -> dict[str, Any] | None:
    """A Responses tool as it sits in the prompt (OpenAI's tool search guide): a namespace by its name and
    description and its functions not deferred; a deferred function of its own by its name and description
    (what is deferred is its parameters); one inside a namespace not at all."""
    if tool.get("type") == "namespace":
        inner = [t for t in (_loaded(t, top=False) for t in tool.get("tools") or []) if t is not None]
        return {**tool, "tools": inner}
    if tool.get("defer_loading"):
        return {key: tool[key] for key in ("type", "name", "description") if key in tool} if top else None
    return tool


def openai_cached_tokens(prompt: str, earlier: Iterable[str]) -> int:
    """Cached tokens of ``prompt`` under OpenAI's rule, given the prompts sent before it."""
    shared = max((_common_prefix(prompt, other) for other in earlier), default=0)
    tokens = count_tokens(prompt[:shared])
    if tokens < OPENAI_MIN_CACHED:
        return 0
    return OPENAI_MIN_CACHED + (tokens - OPENAI_MIN_CACHED) // OPENAI_STEP * OPENAI_STEP


def _common_prefix(a: str, b: str) -> int:
    """Length of the longest common prefix, by bisection on slice comparisons (done in C)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


# -- the HTTP endpoint --------------------------------------------------------------------------------


class ProviderEndpoint:
    """The loopback provider (see the module docstring), as an async context manager.

    Args:
        script: The answers, in order, or a function that picks one for each request.
        min_cacheable: Anthropic's minimum cacheable prefix, in tokens.

    Attributes:
        url: ``http://127.0.0.1:PORT``: Anthropic's ``base_url``; OpenAI's is ``url + "/v1"``.
        requests: Every request that arrived, in order.
    """

    def __init__(self, script: Script, *, min_cacheable: int = 1024) -> None:
        self._pick = script if callable(script) else _in_order(script)
        self.min_cacheable = min_cacheable
        self.requests: list[Request] = []
        self.url = ""
        self._anthropic_cache: set[str] = set()
        self._openai_prompts: list[str] = []
        self._arrived = anyio.Event()
        self._ids = itertools.count(1)
        self._server: uvicorn.Server | None = None
        self._done = anyio.Event()

    async def __aenter__(self) -> ProviderEndpoint:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.bind(("127.0.0.1", 0))
        # Listening before uvicorn starts: a client's connection waits in the backlog, so no readiness wait.
        sock.listen(128)
        self.url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        app = Starlette(routes=[Route("/v1/{api:path}", self._handle, methods=["POST"])])
        config = uvicorn.Config(app, lifespan="off", log_level="warning", access_log=False)
        self._server = uvicorn.Server(config)
        self._task_group = anyio.create_task_group()
        await self._task_group.__aenter__()
        self._task_group.start_soon(self._serve, self._server, sock)
        return self

    async def _serve(self, server: uvicorn.Server, sock: socket.socket) -> None:
        try:
            await server.serve(sockets=[sock])
        finally:
            sock.close()
            self._done.set()

    async def __aexit__(self, *exc_info: object) -> None:
        assert self._server is not None
        self._server.should_exit = True
        await self._done.wait()
        await self._task_group.__aexit__(None, None, None)

    async def wait_for_requests(self, count: int) -> list[Request]:
        """Wait until ``count`` requests have arrived, and return them."""
        while len(self.requests) < count:
            await self._arrived.wait()
        return self.requests[:count]

    def usage_of(self, api: Api, body: dict[str, Any]) -> PromptUsage:
        """The cache model's usage for ``body``; the cache remembers it, as the provider's would."""
        if api == "anthropic":
            return anthropic_usage(body, self._anthropic_cache, min_cacheable=self.min_cacheable)
        parts, tool_tokens, loaded = _openai_parts(api, body)
        prompt = "".join(parts)
        cached = openai_cached_tokens(prompt, self._openai_prompts)
        self._openai_prompts.append(prompt)
        return PromptUsage(count_tokens(prompt), cached, 0, tool_tokens, loaded)

    async def _handle(self, http: HttpRequest) -> JSONResponse:
        path = http.path_params["api"]
        api: Api | None = {"messages": "anthropic", "chat/completions": "chat", "responses": "responses"}.get(path)  # type: ignore[assignment]
        if api is None:
            return JSONResponse({"error": {"message": f"no such endpoint /v1/{path}"}}, status_code=404)
        body = await http.json()
        if api == "anthropic" and (why := refused_change(body, http.headers.get("anthropic-beta", ""))) is not None:
            return JSONResponse(_error(api, ErrorReply(400, why)), status_code=400)
        request = Request(api, body, self.usage_of(api, body))
        self.requests.append(request)
        arrived, self._arrived = self._arrived, anyio.Event()
        arrived.set()
        reply = self._pick(request)
        if api == "anthropic" and isinstance(reply, Reply):
            reply = _withdrawn_call(offered(body, _without_cache_control), reply)
        if isinstance(reply, ErrorReply):
            return JSONResponse(_error(api, reply), status_code=reply.status)
        render = {"anthropic": self._anthropic, "chat": self._chat, "responses": self._responses}[api]
        return JSONResponse(render(body, reply, request.usage))

    def _id(self, prefix: str) -> str:
        return f"{prefix}{next(self._ids):06d}"

    def _anthropic(self, body: dict[str, Any], reply: Reply, usage: PromptUsage) -> dict[str, Any]:
        content = [*reply.blocks, *self._anthropic_search(body, reply)]
        if reply.text:
            content.append({"type": "text", "text": reply.text})
        content += [
            {"type": "tool_use", "id": self._id("toolu_"), "name": c.name, "input": c.arguments} for c in reply.calls
        ]
        return {
            "id": self._id("msg_"),
            "type": "message",
            "role": "assistant",
            "model": body.get("model", ""),
            "content": content,
            "stop_reason": "tool_use" if reply.calls else "end_turn",
            "stop_sequence": None,
            "usage": {
                "input_tokens": usage.uncached,
                "cache_creation_input_tokens": usage.cache_write,
                "cache_read_input_tokens": usage.cache_read,
                "output_tokens": _output_tokens(content),
            },
        }

    def _chat(self, body: dict[str, Any], reply: Reply, usage: PromptUsage) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": reply.text}
        if reply.calls:
            message["tool_calls"] = [
                {
                    "id": self._id("call_"),
                    "type": "function",
                    "function": {"name": c.name, "arguments": _json(c.arguments)},
                }
                for c in reply.calls
            ]
        output = _output_tokens(message)
        return {
            "id": self._id("chatcmpl-"),
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", ""),
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if reply.calls else "stop"}],
            "usage": {
                "prompt_tokens": usage.input_tokens,
                "completion_tokens": output,
                "total_tokens": usage.input_tokens + output,
                "prompt_tokens_details": {"cached_tokens": usage.cache_read},
            },
        }

    def _responses(self, body: dict[str, Any], reply: Reply, usage: PromptUsage) -> dict[str, Any]:
        output = [*reply.blocks, *self._responses_search(body, reply)]
        if reply.text:
            text = {"type": "output_text", "text": reply.text, "annotations": []}
            output.append(
                {
                    "type": "message",
                    "id": self._id("msg_"),
                    "role": "assistant",
                    "status": "completed",
                    "content": [text],
                }
            )
        output += [
            {
                "type": "function_call",
                "id": self._id("fc_"),
                "call_id": self._id("call_"),
                "name": c.name,
                "arguments": _json(c.arguments),
                "status": "completed",
            }
            for c in reply.calls
        ]
        produced = _output_tokens(output)
        return {
            "id": self._id("resp_"),
            "object": "response",
            "created_at": 0,
            "model": body.get("model", ""),
            "status": "completed",
            "output": output,
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "usage": {
                "input_tokens": usage.input_tokens,
                "input_tokens_details": {"cached_tokens": usage.cache_read},
                "output_tokens": produced,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": usage.input_tokens + produced,
            },
        }

    # -- a hosted tool search: the model loads a deferred tool before it calls it -------------------

    def _anthropic_search(self, body: dict[str, Any], reply: Reply) -> list[dict[str, Any]]:
        """The server tool search a model runs, within its answer, for the deferred tools it calls
        that no ``tool_reference`` has loaded yet (with Anthropic's ``tool_search_tool_*`` declared)."""
        tools = body.get("tools") or []
        search = next((t for t in tools if str(t.get("type", "")).startswith("tool_search_tool_")), None)
        deferred = {t["name"] for t in tools if t.get("defer_loading")}
        loaded = {*offered(body, _without_cache_control).loaded, *references(list(reply.blocks))}
        wanted = list(dict.fromkeys(c.name for c in reply.calls if c.name in deferred and c.name not in loaded))
        if search is None or not wanted:
            return []
        use_id = self._id("srvtoolu_")
        found = [{"type": "tool_reference", "tool_name": name} for name in wanted]
        return [
            {"type": "server_tool_use", "id": use_id, "name": search["name"], "input": {"query": " ".join(wanted)}},
            {
                "type": "tool_search_tool_result",
                "tool_use_id": use_id,
                "content": {"type": "tool_search_tool_search_result", "tool_references": found},
            },
        ]

    def _responses_search(self, body: dict[str, Any], reply: Reply) -> list[dict[str, Any]]:
        """The hosted ``tool_search`` a model runs, within its answer, for the deferred functions it
        calls that no ``tool_search_output`` has loaded yet: the definitions arrive in the output,
        as they were declared (the shape of OpenAI's own examples: functions, not their namespace)."""
        tools = body.get("tools") or []
        if not any(t.get("type") == "tool_search" and t.get("execution", "server") == "server" for t in tools):
            return []
        deferred: dict[str, tuple[str | None, dict[str, Any]]] = {}
        for tool in tools:
            space = tool.get("name") if tool.get("type") == "namespace" else None
            for function in tool.get("tools") or [] if space else [tool]:
                if function.get("defer_loading"):
                    deferred[function["name"]] = (space, function)
        loaded = {
            name
            for item in [*(body.get("input") or []), *reply.blocks]
            if isinstance(item, dict) and item.get("type") == "tool_search_output"
            for tool in item.get("tools") or []
            for name in [tool.get("name"), *(inner.get("name") for inner in tool.get("tools") or [])]
        }
        wanted = list(dict.fromkeys(c.name for c in reply.calls if c.name in deferred and c.name not in loaded))
        if not wanted:
            return []
        paths = list(dict.fromkeys(deferred[name][0] or name for name in wanted))
        done = {"execution": "server", "status": "completed", "call_id": None}
        return [
            {"type": "tool_search_call", "id": self._id("tsc_"), "arguments": {"paths": paths}, **done},
            {"type": "tool_search_output", "id": self._id("tso_"), "tools": [deferred[n][1] for n in wanted], **done},
        ]


def _withdrawn_call(tools: Offered, reply: Reply) -> Reply | ErrorReply:
    """A reply that calls a tool a ``tool_removal`` withdrew is one a model cannot give: the script is wrong
    (a server error, not a refusal of the request), naming the tool."""
    called = [call.name for call in reply.calls if call.name in tools.withdrawn]
    if called:
        why = "which a tool_removal withdrew and nothing offered again"
        return ErrorReply(500, f"the script calls {called[0]!r}, {why}")
    return reply


def _in_order(replies: Iterable[Reply | ErrorReply]) -> Callable[[Request], Reply | ErrorReply]:
    pending = iter(list(replies))

    def pick(request: Request) -> Reply | ErrorReply:
        return next(pending, ErrorReply(500, f"the script has no reply left for request {request.api!r}"))

    return pick


def _output_tokens(content: Any) -> int:
    return count_tokens(_json(content))


def _error(api: Api, reply: ErrorReply) -> dict[str, Any]:
    if api == "anthropic":
        return {"type": "error", "error": {"type": "api_error", "message": reply.message}}
    return {"error": {"message": reply.message, "type": "server_error", "code": None}}
