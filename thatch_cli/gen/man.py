"""man/thatch.1: the manual page, from the CLI definitions.

Every command (nested groups included) and every visible option comes from
cli_model, so the page cannot drift from the CLI; environment, files and
exit status are described here and checked against support/errors.py by the tests.
"""

from __future__ import annotations

import re
from pathlib import Path

from .. import __version__
from ..memory import fields
from ..support import errors, settings
from . import cli_model

ROOT = Path(__file__).resolve().parents[2]
MAN_PATH = ROOT / "man" / "thatch.1"

DESCRIPTION = [
    "thatch keeps labelled notes (memories) in a local SQLite database and finds them again by meaning "
    "and by their words: recall fuses a small embedding model that runs on your machine with SQLite "
    "full-text search, and falls back to full-text search alone when the model is unavailable. It is "
    "written for coding agents and the people who work beside them.",
    "Memories live in stores. Inside a git repository the store is named after the repository "
    "(owner/repo from the origin remote, else the checkout's name); the global store holds knowledge "
    "that is not tied to one project. A memory may be scoped to a branch, in which case it is recalled "
    "only on that branch, next to the project-wide ones.",
    "The database is shared with the original thatch: both tools read and write the same file.",
    "Every command accepts --json and then prints one JSON object with stable keys, errors included; "
    "each command below lists its keys. Without it, output is a table on a terminal and, piped, the "
    "same columns tab-separated, one record per line.",
]

JSON_SHAPES = [
    f"A brief (one memory, short) has the keys {fields.brief_keys()}; a full memory adds {fields.full_keys()}. "
    "Timestamps are ISO-8601 UTC with milliseconds. Keys are stable: new ones may be added, existing ones "
    "are not renamed or removed.",
    "Errors are one line on standard error, thatch: error: MESSAGE, with the exit status below. With --json, "
    "an error is one compact JSON object on standard output instead: "
    '{"error": {"code": ..., "message": ..., "exit_code": ..., ...}}, where code is usage, invalid_input, '
    "not_found, conflict, database or error, and further keys name what the error is about (store, label, "
    "suggestions ...).",
]

ENVIRONMENT = [
    ("THATCH_DB", "Path of the database file. Overrides the default location."),
    ("THATCH_DB_PATH", "The original thatch's name for THATCH_DB, honoured so one setting points both "
                       "tools at the same file. THATCH_DB wins when both are set."),
    ("THATCH_STORE", "Store to use instead of the one detected from the current directory. "
                     "An explicit --store still wins."),
    ("THATCH_QUIET", "When set to 1, the shell hook (thatch init) stays silent."),
    ("THATCH_HOOKS", "When set to 0, the git hooks installed by thatch hooks install skip thatch's part "
                     "(a hook they chain to still runs)."),
    # Every setting's variable, from the registry (support/settings.py); each overrides the settings file.
    *((s.env, f"{s.doc} Overrides the setting {s.key} (default {s.show(s.default)}).")
      for s in settings.SETTINGS.values()),
    ("NO_COLOR", "When set (to anything), output has no colour; tables stay on a terminal. Output to a "
                 "pipe, or with TERM=dumb, is plain tab-separated text."),
    ("VISUAL, EDITOR", "The editor thatch edit (and thatch remember without content, on a terminal) opens; "
                       "VISUAL first, then EDITOR, then vi."),
    ("XDG_CONFIG_HOME", "Base of the settings file and the default database location (default ~/.config)."),
    ("XDG_CACHE_HOME", "Base of the cache directory (default ~/.cache)."),
    ("XDG_DATA_HOME", "Where bash completion is installed (default ~/.local/share)."),
    ("XDG_RUNTIME_DIR", "Base of the directory for the background process's socket and pid files "
                        "(default: a private directory under the system temporary directory)."),
    ("THATCH_HOOK_DEADLINE", "Seconds an agent hook (reminder, flush-tools, buffer-batch, buffer-tool) may take "
                             "before it prints its fallback and exits (default 1.5)."),
    ("XDG_STATE_HOME", "Base of the state directory: agents' extraction queues, what thatch setup wrote "
                       "(default ~/.local/state)."),
]

FILES = [
    ("$XDG_CONFIG_HOME/thatch/config.toml", "Settings (thatch config), read by every command; environment "
                                            "variables override them."),
    ("$XDG_CONFIG_HOME/thatch/thatch.db", "The database (default ~/.config/thatch/thatch.db), shared with "
                                          "the original thatch. THATCH_DB moves it."),
    ("$XDG_CACHE_HOME/thatch/repos.tsv", "Cache of each repository's store name, refreshed when its git "
                                          "config changes. Safe to delete."),
    ("$XDG_RUNTIME_DIR/thatch/", "Socket and pid file of the background model process."),
    ("$XDG_DATA_HOME/bash-completion/completions/thatch", "bash completion, from thatch completion install bash."),
    ("~/.zfunc/_thatch", "zsh completion, from thatch completion install zsh (~/.zfunc must be in fpath)."),
    ("$XDG_CONFIG_HOME/fish/completions/thatch.fish", "fish completion, from thatch completion install fish."),
    ("$XDG_STATE_HOME/thatch/queue/", "Agents' tool calls queued for memory extraction, one file per session "
                                      "(0600, directory 0700); deleted after 7 idle days."),
    ("$XDG_STATE_HOME/thatch/setup.json", "What thatch setup needs to undo its edits byte for byte."),
    ("$XDG_CACHE_HOME/thatch/pair-counts.json", "Each store's last near-duplicate count, for thatch reminder."),
]

EXIT_STATUS = {
    "EXIT_OK": "Success. For hygiene: the store is clean.",
    "EXIT_INTERNAL": "Internal error (a bug); set THATCH_DEBUG=1 for a traceback.",
    "EXIT_USAGE": "Invalid input: a bad option, argument or value.",
    "EXIT_NOT_FOUND": "Not found: no memory with that label.",
    "EXIT_CONFLICT": "Conflict: a memory with that label exists (use --overwrite), or it is archived and "
                     "--archived/--no-archived was not given.",
    "EXIT_ATTENTION": "Attention needed: hygiene found near-duplicates, stale memories or memories of "
                      "deleted branches; import skipped lines; sync held a memory back or skipped a remote file.",
    "EXIT_DATABASE": "Database error: the file cannot be opened, or was written by a newer thatch.",
    "EXIT_RETRY": "Try again later: thatch sync cannot reach the remote now, or another sync of the repository is"
                  " running; nothing was lost.",
    "EXIT_REFUSED": "Refused: the remote does not accept this machine's credentials (thatch sync), or refuses a"
                    " purge's rewrite; trying again will not help until that is fixed; nothing was lost.",
}


def exit_codes() -> list[tuple[int, str]]:
    codes = {name: getattr(errors, name) for name in dir(errors) if name.startswith("EXIT_")}
    return sorted((code, EXIT_STATUS.get(name, name)) for name, code in codes.items())


# -- roff ------------------------------------------------------------------------------


def text(value: str) -> str:
    """Running text: backslashes escaped, no line taken for a request."""
    value = value.replace("\\", "\\e")
    lines = []
    for line in value.splitlines() or [""]:
        line = line.strip()
        if line.startswith((".", "'")):
            line = "\\&" + line
        lines.append(line)
    return "\n".join(lines)


def opt(name: str) -> str:
    return "\\fB" + name.replace("\\", "\\e").replace("-", "\\-") + "\\fR"


def var(name: str) -> str:
    return "\\fI" + name.replace("\\", "\\e").replace("-", "\\-") + "\\fR"


def _verbatim(block: str) -> str:
    """Indented help lines (examples, tables) keep their layout."""
    rows = block.splitlines()
    indent = min(len(r) - len(r.lstrip()) for r in rows if r.strip())
    body = []
    for row in rows:
        row = row[indent:].rstrip().replace("\\", "\\e")
        body.append("\\&" + row if row.startswith((".", "'")) else row)
    return "\n".join([".RS 4", ".nf", *body, ".fi", ".RE"])


def paragraphs(help_text: str) -> list[str]:
    out = []
    for block in re.split(r"\n\s*\n", (help_text or "").strip("\n")):
        if not block.strip():
            continue
        if any(row[:1].isspace() for row in block.splitlines() if row.strip()):
            out.append(_verbatim(block))
        else:
            out.append(text(" ".join(block.split())))
    return out


def metavar_roff(name: str) -> str:
    """A metavar such as "[LABEL] CONTENT": names in italics, brackets plain."""
    return " ".join(("[" + var(w.strip("[]")) + "]") if w.startswith("[") and w.endswith("]") else var(w)
                    for w in name.split())


def _metavar(param: dict) -> str:
    metavar = (param.get("metavar") or "").strip()
    if metavar:
        return metavar
    if param["type"] in ("int", "float"):
        return "N"
    return param["name"].strip("_").upper()


def value_roff(param: dict) -> str:
    """What a parameter takes: its fixed values as literals (a|b|c), else its
    metavar in italics; an optional argument in brackets."""
    if param.get("choices"):
        value = "|".join(opt(choice) for choice in param["choices"])
        return f"[{value}]" if param["kind"] == "argument" and not param["required"] else value
    name = _metavar(param)
    if param["kind"] == "argument" and not param["required"] and not name.startswith("["):
        name = f"[{name}]"
    return metavar_roff(name)


def _synopsis(path: str, params: list[dict]) -> str:
    parts = [opt("thatch")] + [opt(word) for word in path.split()]
    for param in params:
        if param["kind"] == "option" and param["required"]:
            parts.append(f"{opt(param['opts'][0])} {value_roff(param)}")
    if any(p["kind"] == "option" and not p["required"] and not p["hidden"] for p in params):
        parts.append("[" + var("OPTIONS") + "]")
    for param in params:
        if param["kind"] == "argument" and not param["hidden"]:
            parts.append(value_roff(param))
    return " ".join(parts)


def _option_item(param: dict) -> list[str]:
    names = sorted(param["opts"], key=lambda o: (not o.startswith("--"), o))
    head = ", ".join(opt(n) for n in names)
    if param["secondary_opts"]:
        head += " / " + ", ".join(opt(n) for n in param["secondary_opts"])
    if not param["flag"]:
        head += " " + value_roff(param)
    body = " ".join(paragraphs(param["help"])) or "No description."
    default = param["default"]
    if not param["flag"] and default not in (None, "", False) and not param["required"]:
        body += f" Default: {text(str(default))}."
    return [".TP", head, body]


def _argument_item(param: dict) -> list[str]:
    head = value_roff(param)
    return [".TP", head, " ".join(paragraphs(param["help"])) or "No description."]


def render() -> str:
    commands = {path: spec for path, spec in cli_model.commands().items()
                if not spec.get("hidden") and not any(w.startswith("_") for w in path.split())}
    groups = cli_model.groups()
    lines = [
        ".\\\" Generated from the CLI definitions by `python -m thatch_cli.gen man`; do not edit.",
        f'.TH THATCH 1 "" "thatch {__version__}" "User Commands"',
        ".SH NAME",
        "thatch \\- a local, git\\-aware memory store for coding agents",
        ".SH SYNOPSIS",
        f"{opt('thatch')} {var('COMMAND')} [{var('OPTIONS')}] [{var('ARGUMENTS')}]",
        ".br",
        f"{opt('thatch')} {var('GROUP')} {var('COMMAND')} [{var('OPTIONS')}] [{var('ARGUMENTS')}]",
        ".br",
        f"{opt('thatch')} {opt('--version')}",
        ".SH DESCRIPTION",
    ]
    for i, para in enumerate(DESCRIPTION):
        if i:
            lines.append(".PP")
        lines.append(text(para))
    lines += [
        ".SH OPTIONS",
        "These work with every command and group.",
        ".TP", f"{opt('--help')}, {opt('-h')}", "Show help for thatch, a group or a command, and exit.",
        ".TP", f"{opt('--version')}, {opt('-V')}", "Show the version and exit (thatch itself only).",
        ".SH COMMANDS",
    ]
    shown_groups: set[str] = set()
    for path in sorted(commands):
        spec = commands[path]
        words = path.split()
        if len(words) > 1 and words[0] not in shown_groups:
            shown_groups.add(words[0])
            lines.append(f'.SS "{opt("thatch")} {opt(words[0])} {var("COMMAND")}"')
            lines += paragraphs(groups.get(words[0], "")) or [f"Commands of the {words[0]} group."]
        lines.append(f'.SS "{_synopsis(path, spec["params"])}"')
        for i, para in enumerate(paragraphs(spec["help"])):
            if i:
                lines.append(".PP")
            lines.append(para)
        for param in spec["params"]:
            if param["kind"] == "argument" and not param["hidden"]:
                lines += _argument_item(param)
        for param in spec["params"]:
            if param["kind"] == "option" and not param["hidden"]:
                lines += _option_item(param)
        if spec.get("examples"):
            lines += [".PP", "Examples:", _verbatim("\n".join(spec["examples"]))]
        if spec.get("json"):
            lines += [".PP", text(f"JSON (--json): {spec['json']}.")]
    lines.append(".SH JSON OUTPUT")
    for i, para in enumerate(JSON_SHAPES):
        if i:
            lines.append(".PP")
        lines.append(text(para))
    lines.append(".SH ENVIRONMENT")
    for name, description in ENVIRONMENT:
        lines += [".TP", opt(name), text(description)]
    lines.append(".SH FILES")
    for name, description in FILES:
        lines += [".TP", var(name), text(description)]
    lines.append(".SH EXIT STATUS")
    for code, description in exit_codes():
        lines += [".TP", opt(str(code)), text(description)]
    lines += [
        ".SH SEE ALSO",
        f"{opt('git')}(1), {opt('sqlite3')}(1)",
        ".PP",
        f"Shell completion: {opt('thatch completion install')}.",
    ]
    return "\n".join(lines) + "\n"


def write() -> list[Path]:
    MAN_PATH.parent.mkdir(parents=True, exist_ok=True)
    MAN_PATH.write_text(render(), encoding="utf-8")
    return [MAN_PATH]
