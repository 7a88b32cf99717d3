"""A stand-in model API on 127.0.0.1 for driving the real host programs
(Claude Code, Codex) end to end without a real model.

It speaks the parts the hosts use:

- Anthropic Messages (`POST /v1/messages`, streaming SSE or not), what
  Claude Code sends with ANTHROPIC_BASE_URL;
- OpenAI Responses (`POST /v1/responses`, streaming SSE), what Codex sends
  to a `model_providers` entry with `wire_api = "responses"`;
- `GET /v1/models` (an empty list) and anything else answered 404, logged.

Every request is logged whole (method, path, JSON body) so a test can
assert what reached the model. The answer is scripted by the user's own
words: a prompt containing `@@call TOOL {json}@@` gets a tool call of the
offered tool whose name ends with TOOL (Claude Code names thatch's
`mcp__thatch__memory_recall`; Codex has its own spelling), with those
arguments; once the tool's result comes back, or for any other request,
the answer is plain text naming what the model saw.

Run alone for manual checks: `python tests/hosts/standin.py` prints its URL.
"""

from __future__ import annotations

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

CALL = re.compile(r"@@call ([A-Za-z0-9_.-]+) (\{.*?\})@@", re.S)
ANSWER = "Stand-in answer."


class Log:
    """Every request the stand-in received, in order (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.requests: list[dict[str, Any]] = []

    def add(self, entry: dict[str, Any]) -> None:
        with self._lock:
            self.requests.append(entry)

    def bodies(self, path_part: str = "") -> list[dict]:
        with self._lock:
            return [r["body"] for r in self.requests if path_part in r["path"] and isinstance(r["body"], dict)]

    def text(self) -> str:
        """Every logged body as one JSON text (for `in` checks)."""
        with self._lock:
            return "\n".join(json.dumps(r["body"], ensure_ascii=False) for r in self.requests)


# -- what the model "sees" -------------------------------------------------------------------


def _strings(value: Any):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _anthropic_plan(body: dict) -> tuple[str, dict] | None:
    """(tool name, input) of the tool_use to answer with, or None for a text
    answer. The user's last `@@call TOOL {...}@@` is acted on until that
    tool's result is in; a tool Claude Code defers (its newer versions list
    MCP tools by name only) is first fetched with its ToolSearch tool."""
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    start, call = None, None
    for index, message in enumerate(messages):
        if message.get("role") == "user":
            found = _scripted_call("\n".join(_strings(message.get("content"))))
            if found:
                start, call = index, found
    if call is None:
        return None
    used = {}  # tool_use id -> name, after the directive
    finished = set()
    for message in messages[start + 1:]:
        for part in message.get("content") if isinstance(message.get("content"), list) else []:
            if not isinstance(part, dict):
                continue
            if part.get("type") == "tool_use":
                used[part.get("id")] = part.get("name", "")
            elif part.get("type") == "tool_result":
                finished.add(used.get(part.get("tool_use_id"), ""))
    wanted, arguments = call
    if any(name.endswith(wanted) for name in finished):
        return None
    offered = [t.get("name", "") for t in body.get("tools") or [] if isinstance(t, dict) and not t.get("defer_loading")]
    name = _tool(offered, wanted)
    if name is None:  # deferred: listed by name in the conversation, or fetched by ToolSearch already
        found = re.search(r"mcp__[A-Za-z0-9_-]+__" + re.escape(wanted), json.dumps(body))
        if found and "ToolSearch" in finished:
            name = found.group()
        elif "ToolSearch" in offered and "ToolSearch" not in finished:
            query = f"select:{found.group()}" if found else wanted
            return "ToolSearch", {"query": query}
    return (name, arguments) if name else None


def _openai_turn(body: dict) -> tuple[str, list[dict]]:
    """(the last user message's text, the items after it). Codex sends the
    whole conversation as `input`: its own developer and user messages, then
    each tool call and its output."""
    items = body.get("input")
    if isinstance(items, str):
        return items, []
    items = [i for i in items or [] if isinstance(i, dict)]
    users = [index for index, item in enumerate(items)
             if item.get("type", "message") == "message" and item.get("role") == "user"]
    # The prompt carrying a directive, wherever hook context landed after it.
    for index in reversed(users):
        text = "\n".join(_strings(items[index].get("content")))
        if CALL.search(text):
            return text, items[index + 1:]
    if users:
        return "\n".join(_strings(items[users[-1]].get("content"))), items[users[-1] + 1:]
    return "", items


def _tool(names: list[str], wanted: str) -> str | None:
    for name in names:
        if name == wanted or name.endswith("__" + wanted) or name.endswith("." + wanted) or name.endswith(wanted):
            return name
    return None


def _scripted_call(text: str) -> tuple[str, dict] | None:
    found = CALL.search(text or "")
    if not found:
        return None
    return found.group(1), json.loads(found.group(2))


# -- the HTTP server ----------------------------------------------------------------------------


class Handler(BaseHTTPRequestHandler):
    server: "StandIn"
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:  # quiet
        pass

    def _body(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if self.headers.get("Content-Encoding") == "zstd" or self.headers.get("Content-Encoding") == "gzip":
            import gzip

            try:
                raw = gzip.decompress(raw)
            except OSError:
                pass
        try:
            return json.loads(raw.decode("utf-8")) if raw else None
        except ValueError:
            return raw.decode("utf-8", "replace")

    def _log(self, body: Any) -> None:
        self.server.log.add({"method": self.command, "path": self.path, "at": time.time(),
                             "headers": {k.lower(): v for k, v in self.headers.items()
                                         if k.lower() in ("user-agent", "anthropic-beta", "x-api-key")},
                             "body": body})

    def _send(self, status: int, data: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _json(self, status: int, value: Any) -> None:
        self._send(status, json.dumps(value).encode(), "application/json")

    def _sse(self, events: list[tuple[str, dict]]) -> None:
        data = "".join(f"event: {name}\ndata: {json.dumps(payload)}\n\n" for name, payload in events).encode()
        self._send(200, data, "text/event-stream")

    def do_GET(self) -> None:
        self._log(None)
        if self.path.split("?")[0].rstrip("/").endswith("/models"):
            self._json(200, {"object": "list", "data": [], "models": []})
            return
        self._json(404, {"error": {"message": f"not served: {self.path}"}})

    def do_HEAD(self) -> None:
        self._log(None)
        self._send(200, b"", "text/plain")

    def do_POST(self) -> None:
        body = self._body()
        self._log(body)
        path = self.path.split("?")[0]
        if path.endswith("/messages/count_tokens"):
            self._json(200, {"input_tokens": 100})
        elif path.endswith("/messages") and isinstance(body, dict):
            self._anthropic(body)
        elif path.endswith("/responses") and isinstance(body, dict):
            self._openai(body)
        else:
            self._json(404, {"error": {"message": f"not served: {self.path}"}})

    # -- Anthropic Messages ------------------------------------------------------------------

    def _anthropic(self, body: dict) -> None:
        self.server.counter += 1
        n = self.server.counter
        plan = _anthropic_plan(body)
        name, arguments = plan if plan else (None, None)
        model = body.get("model", "claude-standin")
        usage = {"input_tokens": 10, "output_tokens": 5, "cache_creation_input_tokens": 0,
                 "cache_read_input_tokens": 0}
        if name:
            block = {"type": "tool_use", "id": f"toolu_{n:04d}", "name": name, "input": arguments}
            stop = "tool_use"
        else:
            block = {"type": "text", "text": ANSWER}
            stop = "end_turn"
        message = {"id": f"msg_{n:04d}", "type": "message", "role": "assistant", "model": model, "content": [block],
                   "stop_reason": stop, "stop_sequence": None, "usage": usage}
        if not body.get("stream"):
            self._json(200, message)
            return
        start = dict(block, input={}) if name else dict(block, text="")
        delta = ({"type": "input_json_delta", "partial_json": json.dumps(arguments)} if name
                 else {"type": "text_delta", "text": ANSWER})
        self._sse([
            ("message_start", {"type": "message_start", "message": {**message, "content": [], "stop_reason": None}}),
            ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": start}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                               "usage": {"output_tokens": 5}}),
            ("message_stop", {"type": "message_stop"}),
        ])

    # -- OpenAI Responses ----------------------------------------------------------------------

    def _openai(self, body: dict) -> None:
        self.server.counter += 1
        n = self.server.counter
        text, after = _openai_turn(body)
        offered = [t for t in body.get("tools") or [] if isinstance(t, dict)]
        # Tools found by a client-side tool search come back as tool_search_output items.
        offered += [t for item in after if item.get("type") == "tool_search_output"
                    for t in item.get("tools") or [] if isinstance(t, dict)]
        tools = []
        for tool in offered:
            if tool.get("type") == "namespace":  # Codex groups an MCP server's tools under one name
                tools += [f"{tool.get('name')}\x00{t.get('name')}" for t in tool.get("tools") or [] if isinstance(t, dict)]
            elif tool.get("name"):
                tools.append(tool["name"])
        done = any(item.get("type") in ("function_call_output", "custom_tool_call_output") for item in after)
        call = None if done else _scripted_call(text)
        name = _tool([t.replace("\x00", "") for t in tools], call[0]) if call else None
        searched = any(item.get("type") == "tool_search_output" for item in after)
        rid = f"resp_{n:04d}"
        if name:
            full = tools[[t.replace("\x00", "") for t in tools].index(name)]
            namespace, _, short = full.rpartition("\x00")
            item = {"type": "function_call", "id": f"fc_{n:04d}", "call_id": f"call_{n:04d}",
                    "name": short, "arguments": json.dumps(call[1]), "status": "completed"}
            if namespace:
                item["namespace"] = namespace
        elif call and not searched and any(t.get("type") == "tool_search" for t in offered):
            # The MCP tools are deferred: find them first, as a model would.
            item = {"type": "tool_search_call", "id": f"ts_{n:04d}", "call_id": f"search_{n:04d}",
                    "execution": "client", "status": "completed", "arguments": {"query": call[0], "limit": 8}}
        else:
            item = {"type": "message", "id": f"msg_{n:04d}", "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": ANSWER, "annotations": []}]}
        usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5,
                 "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15}
        response = {"id": rid, "object": "response", "created_at": int(time.time()), "status": "completed",
                    "model": body.get("model", "standin"), "output": [item], "usage": usage}
        events = [("response.created", {"type": "response.created", "response": {**response, "status": "in_progress",
                                                                               "output": []}}),
                  ("response.output_item.added", {"type": "response.output_item.added", "output_index": 0,
                                                  "item": item})]
        if item["type"] == "message":
            events.append(("response.output_text.delta", {"type": "response.output_text.delta", "output_index": 0,
                                                          "content_index": 0, "item_id": item["id"],
                                                          "delta": ANSWER}))
        events += [("response.output_item.done", {"type": "response.output_item.done", "output_index": 0,
                                                  "item": item}),
                   ("response.completed", {"type": "response.completed", "response": response})]
        self._sse(events)


class StandIn(ThreadingHTTPServer):
    """The server on 127.0.0.1 and a free port, served from a thread:
    `with StandIn() as api: ... api.url ... api.log`."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.log = Log()
        self.counter = 0
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def __enter__(self) -> "StandIn":
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.shutdown()
        self.server_close()


if __name__ == "__main__":
    import sys

    with StandIn() as api:
        print(api.url, flush=True)
        try:
            while True:
                time.sleep(1)
                if len(sys.argv) > 1:
                    with open(sys.argv[1], "w") as fh:
                        json.dump(api.log.requests, fh, indent=1)
        except KeyboardInterrupt:
            pass
