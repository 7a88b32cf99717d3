"""`thatch mcp` (the MCP server coding agents talk to, thatch_cli/mcp/) and
`thatch setup` (wiring a host to it, integrations/hosts/)."""

from __future__ import annotations

from typing import Annotated, Optional

from ..integrations.hosts import HOSTS
from ..ops.context import Context
from ..support.errors import InvalidInput
from ..support.settings import LOCK_WAIT
from .declare import Argument, Json, Option, command
from .output import Output


@command("mcp", examples=["thatch mcp", "thatch mcp --max-chars 8000",
                          "claude mcp add --scope project thatch -- thatch mcp"])
def mcp(
    ctx: Context, out: Output, *,
    max_chars: Annotated[Optional[int], Option("--max-chars", metavar="CHARS", show_default=False,
                                               help="Cap each tool result at CHARS characters (default:"
                                                    " setting mcp.max_chars, 20000).")] = None,
    lock_wait: Annotated[float, Option("--lock-wait", metavar="SECONDS",
                                       help="How long a write waits for another writer's lock.")] = LOCK_WAIT,
) -> None:
    """Serve the memory store to coding agents over MCP (stdio): the original thatch's tools.

    Hosts start it themselves; register it once, e.g. with `thatch setup claude`, or by hand:

      claude mcp add thatch -- thatch mcp

    Tools: memory_remember, memory_recall, memory_list, memory_show, memory_forget, store_list, find_duplicates, dedup_mark_checked, memory_hygiene, get_extraction_payload, extraction_done. The store and branch are detected per call from CURSOR_PROJECT_DIR, CLAUDE_PROJECT_DIR or the working directory.
    """
    from ..mcp.handshake import serve
    from ..support.settings import MCP_MIN_CHARS

    if max_chars is None:
        max_chars = ctx.setting("mcp.max_chars")
    if max_chars < MCP_MIN_CHARS:
        raise InvalidInput(f"--max-chars must be at least {MCP_MIN_CHARS}, got {max_chars}")
    if not 0 <= lock_wait <= 600:
        raise InvalidInput(f"--lock-wait must be between 0 and 600 seconds, got {lock_wait:g}")
    serve(ctx.env, max_chars=max_chars, lock_wait=lock_wait)


@command("setup", examples=["thatch setup claude", "thatch setup cursor --plan", "thatch setup codex --global",
                            "thatch setup claude --uninstall", "thatch setup --status --json"],
         json="host, scope, root, executable, action (install or uninstall), written, files (path, role, action,"
              " changes, link), notes; with --status: executable, hosts (host, scope, state, version, files (path,"
              " role, state, detail), warnings)")
def setup(
    ctx: Context, out: Output, *,
    host: Annotated[Optional[str], Argument(metavar="[HOST]", show_default=False, choices=HOSTS,
                                            help="claude, cursor or codex.")] = None,
    global_: Annotated[bool, Option("--global", help="Wire your user configuration instead of this project.")] = False,
    plan: Annotated[bool, Option("--plan", help="List every file and change; write nothing.")] = False,
    uninstall: Annotated[bool, Option("--uninstall", help="Remove exactly what setup added.")] = False,
    status: Annotated[bool, Option("--status", help="Show which hosts are wired, and what drifted.")] = False,
    as_json: Json = False,
) -> None:
    """Wire a coding agent to thatch: the MCP server, the memory hooks and an instruction block.

    For the project (the repository you are in), or your user configuration with --global:

      claude  .mcp.json, .claude/settings.json (SessionStart, UserPromptSubmit, PostToolBatch; PostToolUse before Claude Code 2.1.110), CLAUDE.md
      cursor  .cursor/mcp.json, .cursor/hooks.json (sessionStart, postToolUse, beforeSubmitPrompt), AGENTS.md
      codex   .codex/config.toml (mcp_servers, SessionStart, UserPromptSubmit, PostToolUse hooks), AGENTS.md

    Everything else in those files keeps its bytes, including what the host itself wrote there since (Codex's hook trust, other servers); running it again changes nothing; --uninstall removes exactly thatch's entries. A malformed file, or a symbolic link out of the directory setup manages, is reported and left alone. Claude Code's project files (.mcp.json, .claude/settings.json), which a team commits, name thatch through a guard that stays silent where thatch is not installed; this machine's thatch path and settings go to .claude/settings.local.json. Elsewhere the hooks run the thatch that ran setup, by its absolute path, and the MCP server gets this terminal's thatch settings that a host would not pass on. --status warns when a file git tracks holds a path of this machine.
    """
    import sys

    from ..integrations.hosts import setup as hosts
    from ..integrations.shell import resolve_executable

    executable = resolve_executable(sys.argv[0] if sys.argv else "", ctx.env)
    if status:
        if plan or uninstall:
            raise InvalidInput("--status only reports; use it without --plan or --uninstall")
        found = hosts.status(ctx.env, ctx.cwd, executable, (host,) if host else hosts.HOSTS)
        _show_status(out, found, executable)
        return
    if host is None:
        raise InvalidInput(f"name the host to set up: thatch setup {'|'.join(HOSTS)} (or --status)")
    from ..integrations.hosts import versions

    version = versions.installed(host, ctx.env) if host == "claude" else None
    where = hosts.target(host, ctx.env, ctx.cwd, executable, global_=global_, version=version)
    report = hosts.run(where, executable, ctx.env, uninstall=uninstall, write=not plan, cwd=ctx.cwd)
    _show_report(out, report)


def _show_report(out: Output, report) -> None:
    if out.json_mode:
        out.json(report.to_json())
        return
    what = "remove thatch from" if report.uninstall else "set up"
    if report.written and report.uninstall and not any(f.changes for f in report.files):
        what = "Nothing to remove: thatch is not set up in"  # a second --uninstall once said "Removed"
    elif report.written:
        what = "Removed thatch from" if report.uninstall else "Set up"
    else:
        what = f"Would {what}"
    out.line(f"{what} {report.host} ({report.scope}: {report.root}):")
    for file in report.files:
        link = f" (a link to {file.link})" if file.link else ""
        out.line(f"  {file.action:<9}  {file.path}{link}")
        for change in file.changes:
            out.line(f"             - {change}")
    for note in [] if report.uninstall else report.notes:
        out.line(f"note: {note}")
    if not report.written:
        out.line("Nothing was written (--plan).")
    elif not report.uninstall and any(f.changes for f in report.files):
        out.line(f"Restart {report.host} (or start a new session) for the changes to take effect.")


def _show_status(out: Output, found: list[dict], executable: str) -> None:
    if out.json_mode:
        out.json({"executable": executable, "hosts": found})
        return
    for entry in found:
        version = f" ({entry['host']} {entry['version']})" if entry.get("version") else ""
        out.line(f"{entry['host']:<7} {entry['scope']:<8} {entry['state']}{version}")
        for file in entry["files"]:
            detail = f" ({file['detail']})" if file["detail"] else ""
            out.line(f"          {file['state']:<9} {file['path']}{detail}")
        for warning in entry.get("warnings") or []:
            out.notice(f"warning: {warning}")
