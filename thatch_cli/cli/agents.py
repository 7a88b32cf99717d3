"""`thatch mcp`: the MCP server coding agents talk to (thatch_cli/mcp/)."""

from __future__ import annotations

from typing import Annotated, Optional

from ..context import Context
from ..errors import InvalidInput
from .declare import Option, command
from .output import Output

MAX_CHARS_VARIABLE = "THATCH_MCP_MAX_CHARS"


@command("mcp")
def mcp(
    ctx: Context, out: Output, *,
    max_chars: Annotated[Optional[int], Option("--max-chars", metavar="CHARS", show_default=False,
                                               help="Cap each tool result at CHARS characters (default"
                                                    f" {MAX_CHARS_VARIABLE} or 20000).")] = None,
    lock_wait: Annotated[float, Option("--lock-wait", metavar="SECONDS",
                                       help="How long a write waits for another writer's lock.")] = 10.0,
) -> None:
    """Serve the memory store to coding agents over MCP (stdio): the original thatch's tools.

    Hosts start it themselves; register it once, e.g. with `thatch setup claude`, or by hand:

      claude mcp add thatch -- thatch mcp

    Tools: memory_remember, memory_recall, memory_list, memory_show, memory_forget, store_list, find_duplicates, dedup_mark_checked, memory_hygiene, get_extraction_payload, extraction_done. The store and branch are detected per call from CURSOR_PROJECT_DIR, CLAUDE_PROJECT_DIR or the working directory.
    """
    from ..mcp.results import DEFAULT_MAX_CHARS, MIN_MAX_CHARS
    from ..mcp.server import serve

    if max_chars is None:
        configured = ctx.env.get(MAX_CHARS_VARIABLE, "").strip()
        try:
            max_chars = int(configured) if configured else DEFAULT_MAX_CHARS
        except ValueError:
            raise InvalidInput(f"{MAX_CHARS_VARIABLE} must be a whole number of characters, got {configured!r}") from None
    if max_chars < MIN_MAX_CHARS:
        raise InvalidInput(f"--max-chars must be at least {MIN_MAX_CHARS}, got {max_chars}")
    if not 0 <= lock_wait <= 600:
        raise InvalidInput(f"--lock-wait must be between 0 and 600 seconds, got {lock_wait:g}")
    serve(ctx.env, max_chars=max_chars, lock_wait=lock_wait)
