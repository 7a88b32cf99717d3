"""`thatch mcp`: the memory store as MCP tools over stdio, on the official
SDK's low-level server (explicit schemas and results; the SDK does the
protocol).

Every call gets a fresh Context for the host's project directory
(CURSOR_PROJECT_DIR, CLAUDE_PROJECT_DIR, else the server's working
directory), so a long-lived server follows branch switches and remote
changes exactly as a new `thatch` command would. Calls run in worker
threads, each with its own database connection, so a slow call never holds
up `tools/list` or another call.

Embeddings come from the shared warm daemon (several agent sessions and the
CLI share one loaded model; this process never imports the model stack to
answer `initialize`). The server asks the daemon to start loading as soon
as it starts; a recall made before the model is ready is answered by
keyword search with a notice rather than waiting.
"""

from __future__ import annotations

import sys
from functools import partial
from typing import Any, Mapping

from .. import __version__
from ..location.scope import project_dir
from ..ops import activity
from ..ops.context import Context
from ..support.errors import InvalidInput, ThatchError, database_error
from ..support.settings import LOCK_WAIT
from .render import render_error
from .results import Reply, cap
from .tool import Session, Tool
from .tools import BY_NAME, TOOLS


class ToolRunner:
    """Checks arguments against a tool's schema, runs the tool in a fresh
    Context and turns every outcome (errors included) into a capped Reply."""

    def __init__(self, env: Mapping[str, str], *, max_chars: int, lock_wait: float = LOCK_WAIT) -> None:
        self.env = dict(env)
        self.max_chars = max_chars
        self.lock_wait = lock_wait
        self.session = Session(max_chars)

    def context(self, tool: Tool) -> Context:
        return Context(env=self.env, cwd=project_dir(self.env), use_daemon=True, wait_for_model=tool.wait_for_model)

    def call(self, name: str, arguments: dict[str, Any] | None) -> Reply:
        tool = BY_NAME.get(name)
        if tool is None:
            known = ", ".join(BY_NAME)
            return error_reply(InvalidInput(f"unknown tool {_shown(name)}; the tools are {known}"))
        try:
            args = check_arguments(tool, dict(arguments or {}))
        except ThatchError as err:
            return error_reply(err, tool)
        ctx = self.context(tool)
        try:
            ctx.db().set_lock_wait(self.lock_wait)
            reply = tool.run(ctx, args, self.session)
        except ThatchError as err:
            return error_reply(err, tool)
        except Exception as exc:  # never let one call take the server down
            failure: ThatchError | None = database_error(exc)
            if failure is None:
                if self.env.get("THATCH_DEBUG"):
                    import traceback

                    traceback.print_exc(file=sys.stderr)
                failure = ThatchError(f"internal error: {type(exc).__name__}: {exc}")
            return error_reply(failure)
        finally:
            ctx.close()
        shown = self.capped(reply, args.get("budget"))
        if name in RECORDED and not shown.is_error:
            data = shown.data
            given = data.get("results") or ([data["memory"]] if isinstance(data.get("memory"), dict) else [])
            activity.record(self.env, "mcp", "mcp", None, [(str(m.get("label")), m.get("store"), m.get("score"))
                                                           for m in given if isinstance(m, dict)])
        return shown

    def capped(self, reply: Reply, budget: int | None) -> Reply:
        limit = min(self.max_chars, budget) if budget else self.max_chars
        shown = cap(reply, limit)
        if budget and "budget" in shown.data:
            omitted = (shown.data.get("capped") or {}).get("omitted", {}).get("results", 0)
            shown.data["budget"] = {"chars": budget, "omitted": omitted}  # no longer than the placeholder
        return shown


# The tools whose results put memories before the agent (`thatch activity`).
RECORDED = ("memory_recall", "memory_show")

# An error names the value it refuses, never repeats a huge one whole.
MAX_ERROR_CHARS = 500


def error_reply(err: ThatchError, tool: Tool | None = None) -> Reply:
    data = err.to_json()
    if tool is not None:
        data["message"] = tool_wording(data["message"], tool)
    data = {key: _shortened(value, MAX_ERROR_CHARS) if isinstance(value, str) else value for key, value in data.items()}
    return Reply({"error": data}, render_error, is_error=True)


def _shortened(text: str, limit: int) -> str:
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text) - limit} more characters)"


def _shown(value: Any) -> str:
    """`value` as an error message quotes it: its repr, cut to 80 characters."""
    return _shortened(repr(value), 80)


_FLAG = None
# Words that follow a flag in a sentence without being its value.
_NOT_VALUES = {"or", "and", "to", "not", "with", "first", "instead", "is", "are", "must", "needs"}


def tool_wording(message: str, tool: Tool) -> str:
    """An operation's message as the tool's caller needs it: a command-line
    flag it names (`--overwrite`, `--no-archived`, `--store NAME`) becomes
    the tool's argument (`overwrite: true`, `archived: false`, `store: NAME`).
    Flags the tool has no argument for are left as they are."""
    import re

    global _FLAG
    _FLAG = _FLAG or re.compile(r"--(no-)?([a-z][a-z-]*)( [^\s;,)]+)?")
    by_flag = {name.lower().replace("_", "-"): name for name in tool.properties}
    by_flag.update({re.sub(r"(?<!^)(?=[A-Z])", "-", name).lower(): name for name in tool.properties})

    def word(match: re.Match) -> str:
        name = by_flag.get(match.group(2))
        if name is None:
            return match.group(0)
        rest = match.group(3) or ""
        if tool.properties[name].get("type") == "boolean":
            return f"{name}: {'false' if match.group(1) else 'true'}{rest}"
        if rest and rest.strip() not in _NOT_VALUES:
            return f"{name}:{rest}"
        return name + rest

    return _FLAG.sub(word, message)


# -- argument checks ------------------------------------------------------------------


def check_arguments(tool: Tool, args: dict[str, Any]) -> dict[str, Any]:
    """The arguments (an integral 5.0 read as 5), or InvalidInput worded as
    the CLI words it for the first argument the tool's JSON schema refuses."""
    import jsonschema

    errors = sorted(jsonschema.Draft202012Validator(tool.schema()).iter_errors(args), key=_order)
    if not errors:
        return {name: int(value) if tool.properties[name].get("type") == "integer" else value
                for name, value in args.items()}
    error = errors[0]
    if error.validator == "additionalProperties":
        unknown = sorted(set(args) - set(tool.properties))
        raise InvalidInput(_unknown(tool, unknown[0]), argument=unknown[0])
    if error.validator == "required":
        missing = [name for name in tool.required if name not in args]
        raise InvalidInput(f"{tool.name} needs the argument {missing[0]!r}", argument=missing[0])
    name = str(error.path[0]) if error.path else ""
    value = args.get(name)
    check = tool.checks.get(name)
    if error.validator != "type" and check is not None:
        check(value)  # raises with the CLI's message for this value
    expected = error.validator_value if error.validator == "type" else None
    if expected is not None:
        raise InvalidInput(f"{name} must be {_article(expected)}, got {_shown(value)}", argument=name)
    if error.validator in ("maxLength", "minLength") and isinstance(value, str):
        bound = "at most" if error.validator == "maxLength" else "at least"
        raise InvalidInput(f"{name} is {len(value):,} characters; it must be {bound} {error.validator_value}",
                           argument=name)
    raise InvalidInput(f"{name}: {_shortened(error.message, 200)}", argument=name)


def _order(error) -> tuple:
    """Unknown and missing arguments first, then by argument name."""
    rank = {"additionalProperties": 0, "required": 1, "type": 2}.get(error.validator, 3)
    return (rank, [str(p) for p in error.path])


def _article(kind: str) -> str:
    return {"integer": "an integer", "number": "a number", "boolean": "true or false", "string": "a string",
            "object": "an object", "array": "a list"}.get(kind, kind)


def _unknown(tool: Tool, name: str) -> str:
    from ..support.suggest import close

    accepted = list(tool.properties)
    found = close(name, accepted, limit=1) if len(name) <= 200 else []
    hint = f" (did you mean {found[0]!r}?)" if found else ""
    listed = ", ".join(accepted) if accepted else "none"
    return f"unknown argument {_shown(name)} for {tool.name}{hint}; it takes: {listed}"


# -- the SDK server ---------------------------------------------------------------------


def build(runner: ToolRunner, instructions: str = ""):
    """The SDK's low-level Server with thatch's tools."""
    import anyio.to_thread
    import mcp_types as types
    from mcp.server.lowlevel import Server

    listed = [types.Tool(name=tool.name, description=tool.description, input_schema=tool.schema(),
                         annotations=types.ToolAnnotations(read_only_hint=tool.read_only,
                                                           destructive_hint=tool.name == "memory_forget",
                                                           open_world_hint=False))
              for tool in TOOLS]

    async def list_tools(_ctx, _params) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def call_tool(_ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        reply = await anyio.to_thread.run_sync(partial(runner.call, params.name, params.arguments))
        return types.CallToolResult(content=[types.TextContent(type="text", text=reply.text())],
                                    structured_content=reply.data, is_error=reply.is_error)

    return Server("thatch", version=__version__, instructions=instructions, on_list_tools=list_tools,
                  on_call_tool=call_tool)


def run_sdk(env: Mapping[str, str], *, max_chars: int, lock_wait: float, instructions: str, source, first: list,
            wire) -> None:
    """Serve the rest of the session with the SDK (mcp/handshake.py answered
    the opening): `first` are the lines it read, `source` the rest of stdin."""
    import anyio
    from mcp.server.stdio import stdio_server

    from .transport import Lines

    server = build(ToolRunner(env, max_chars=max_chars, lock_wait=lock_wait), instructions)

    async def main() -> None:
        lines = Lines(source, first)  # every line checked, refused ones answered (transport.py)
        # Lines reads as the SDK's AsyncFile does (transport.py), which is all it uses of one.
        async with stdio_server(stdin=lines, stdout=wire) as (read, write):  # type: ignore[arg-type]
            lines.answer = write
            await server.run(read, write, server.create_initialization_options())

    try:
        anyio.run(main)
    except KeyboardInterrupt:
        pass
