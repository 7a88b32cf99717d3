"""`thatch help [COMMAND]`: the help of thatch, a group or a command, as
git and gh users type it (the same text as `thatch COMMAND --help`)."""

from __future__ import annotations

from typing import Annotated, Optional

from ..ops.context import Context
from .declare import Argument, command
from .output import Output


@command("help", examples=["thatch help", "thatch help recall", "thatch help dedup mark"])
def help_(
    ctx: Context, out: Output, *,
    words: Annotated[Optional[list[str]], Argument(metavar="COMMAND", show_default=False, complete="commands",
                                                   help="The command (or group and command) to explain.")] = None,
) -> int:
    """Show the help of thatch or of one command."""
    from .app import main

    return main([*(words or []), "--help"], ctx)
