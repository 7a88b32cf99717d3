"""Settings that last between terminals: one registry, read from
`${XDG_CONFIG_HOME:-~/.config}/thatch/config.toml`, overridden by
environment variables.

SETTINGS is the registry: each key's type, default, environment variable
and one-line doc. Adding a setting is one line there; `thatch config`,
docs/settings.md's table check and every reader follow. A value is, in
order: its environment variable when set and not empty, else the file,
else the default (`resolve` says which).

Commands read strictly: a file that is not valid TOML, or a value of the
wrong type or range, is a SettingsError (one line naming the file or the
variable, exit 2). The machine-facing hot paths (the shell hook's warm-up,
the daemon's idle timer) pass strict=False and fall back to the default:
a prompt is no place for an error.

Reading costs one stat when there is no file; with one, the standard
library's tomllib parses it once per process and change. Standard library
only: the shell hook imports this. Writing (ops/config.py) uses tomlkit,
which keeps the file's comments and layout.
"""

from __future__ import annotations

import os

from . import paths
from .errors import InvalidInput

TYPE_CHECKING = False  # typing.TYPE_CHECKING would import typing: ~2 ms on every hot path (tests/hot checks)
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, Mapping


DEFAULT_MODEL = "BAAI/bge-small-en-v1.5"
# The cut-offs are on the calibrated scale (calibration/): all-MiniLM-L6-v2's
# cosine, every other model mapped onto it, so they hold whichever model runs.
# Chosen on a labelled set of 65 pairs of developer notes
# (bench/duplicate_threshold.py): precision 0.92, recall 0.77 with MiniLM.
DUPLICATE_THRESHOLD = 0.85
# Chosen with bench/calibration.py and bench/relevance_floor.py (docs/recall.md):
# with every model measured, 90-99% of off-topic queries answer nothing and
# LoCoMo Recall@5 does not drop.
RECALL_FLOOR = 0.35
# Versions kept per memory by the history (storage/history.py applies it).
HISTORY_KEEP = 10
# Backups of each kind thatch keeps in a folder (ops/backup.py prunes the older ones).
BACKUP_KEEP = 10
# The prompt nudge's cut-off on the calibrated semantic score (bench/calibration.py):
# fires for 80-92% of related prompts and at most 4% of unrelated ones, every model.
NUDGE_THRESHOLD = 0.45
# What one `thatch mcp` tool result may hold, and the least it can be set to.
MCP_MAX_CHARS = 20_000
MCP_MIN_CHARS = 1_000
# How long a write waits for another process's write lock (seconds): every
# command's, and an MCP tool's unless `thatch mcp --lock-wait` says otherwise.
LOCK_WAIT = 10.0
# The most of a settings file read: a few settings take a few hundred bytes,
# and every command (and hook) reads the file.
MAX_FILE_BYTES = 64 * 1024

# How long one git fetch or push of thatch sync may take.
SYNC_TIMEOUT = 60.0
SYNC_STALL = 10.0

_TRUE = ("1", "true", "on", "yes")
_FALSE = ("0", "false", "off", "no")


class SettingsError(InvalidInput):
    """The settings file or a settings variable holds something unusable."""

    code = "settings"


class Setting:
    """One key: its type ("str", "bool", "int" or "float"), default,
    environment variable, doc, and the range a number must lie in (`low`
    and `high` inclusive, `above` exclusive)."""

    __slots__ = ("key", "kind", "default", "env", "doc", "low", "high", "above")

    def __init__(self, key: str, kind: str, default: Any, env: str, doc: str, *, low: float | None = None,
                 high: float | None = None, above: float | None = None) -> None:
        self.key, self.kind, self.default, self.env, self.doc = key, kind, default, env, doc
        self.low, self.high, self.above = low, high, above

    def parse(self, raw: Any) -> Any:
        """The value `raw` (text from the command line or the environment, or
        a TOML value) stands for; ValueError saying what was expected."""
        if self.kind == "str":
            if not isinstance(raw, str) or not raw.strip():
                raise ValueError("expected a non-empty text")
            if any(ord(ch) < 32 or 127 <= ord(ch) < 160 for ch in raw):
                raise ValueError("expected one line without control characters")
            return raw.strip()
        if self.kind == "bool":
            if isinstance(raw, bool):
                return raw
            word = raw.strip().lower() if isinstance(raw, str) else None
            if word in _TRUE or word in _FALSE:
                return word in _TRUE
            raise ValueError(f"expected true or false (or on/off, yes/no, 1/0), got {raw!r}")
        return self._number(raw)

    def _number(self, raw: Any) -> int | float:
        wanted = "a whole number" if self.kind == "int" else "a number"
        if isinstance(raw, bool) or not isinstance(raw, (str, int, float)):
            raise ValueError(f"expected {wanted}, got {raw!r}")
        try:
            number: int | float = int(raw) if self.kind == "int" else float(raw)
        except ValueError:
            raise ValueError(f"expected {wanted}, got {raw!r}") from None
        if self.kind == "int" and isinstance(raw, float) or number != number or number in (float("inf"), -float("inf")):
            raise ValueError(f"expected {wanted}, got {raw!r}")
        if ((self.low is not None and number < self.low) or (self.high is not None and number > self.high)
                or (self.above is not None and number <= self.above)):
            raise ValueError(f"expected {self.range()}, got {raw!r}")
        return number

    def range(self) -> str:
        """The accepted values, in words."""
        if self.kind == "bool":
            return "true or false"
        if self.kind == "str":
            return "a text"
        bottom = f"above {self.above:g}" if self.above is not None else f"at least {self.low:g}" if self.low is not None else ""
        top = f"at most {self.high:g}" if self.high is not None else ""
        kind = "a whole number" if self.kind == "int" else "a number"
        return " ".join(part for part in (kind, bottom, "and" if bottom and top else "", top) if part)

    def show(self, value: Any) -> str:
        """`value` as `thatch config get` prints it (and `set` accepts it)."""
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, float):
            return f"{value:g}"
        return str(value)


SETTINGS: dict[str, Setting] = {s.key: s for s in (
    Setting("model", "str", DEFAULT_MODEL, "THATCH_MODEL",
            "Embedding model: a Hugging Face model id or a local model folder."),
    Setting("daemon.enabled", "bool", True, "THATCH_DAEMON",
            "Keep the model loaded in a background process between commands."),
    Setting("daemon.idle", "float", 600.0, "THATCH_DAEMON_IDLE",
            "Seconds the background process waits without a request before it exits.", above=0),
    Setting("daemon.warm", "bool", True, "THATCH_WARM",
            "Start the background process (about 500 MB of memory) when the shell hook sees you enter a"
            " repository whose store has memories with vectors."),
    Setting("recall.floor", "float", RECALL_FLOOR, "THATCH_RECALL_FLOOR",
            "Lowest score (0-1) recall shows; weaker matches are left out and not counted as recalled."
            " 0 shows everything.", low=0, high=1),
    Setting("recall.limit", "int", 10, "THATCH_RECALL_LIMIT",
            "Most results recall shows when --limit is not given.", low=1, high=1000),
    Setting("duplicates.threshold", "float", DUPLICATE_THRESHOLD, "THATCH_DUPLICATE_THRESHOLD",
            "Score (0-1, the same for every model) from which two memories count as near-duplicates"
            " (remember's warning, hygiene, duplicates).", above=0, high=1),
    Setting("history.keep", "int", HISTORY_KEEP, "THATCH_HISTORY_KEEP",
            "Earlier versions kept per memory (overwrites, edits, renames, archiving, forgetting); 0 keeps none.",
            low=0, high=1000),
    Setting("backup.keep", "int", BACKUP_KEEP, "THATCH_BACKUP_KEEP",
            "Backups of each kind (thatch backup, before a restore) kept in a folder; older ones are removed.",
            low=1, high=10_000),
    Setting("nudge.threshold", "float", NUDGE_THRESHOLD, "THATCH_RECALL_THRESHOLD",
            "Score (0-1, the same for every model) a memory needs for the agent hook flush-tools to list it"
            " to an agent (the recall nudge).", above=0, high=1),
    Setting("activity.enabled", "bool", True, "THATCH_ACTIVITY",
            "Keep a private record of what the agent hooks and the MCP server gave each agent session"
            " (thatch activity)."),
    Setting("mcp.max_chars", "int", MCP_MAX_CHARS, "THATCH_MCP_MAX_CHARS",
            "Most characters of one thatch mcp tool result (--max-chars wins).", low=MCP_MIN_CHARS),
    Setting("sync.timeout", "float", SYNC_TIMEOUT, "THATCH_SYNC_TIMEOUT",
            "Seconds one git fetch or push of thatch sync may take before it is killed (with its ssh).",
            above=0, high=3600),
    Setting("sync.stall", "float", SYNC_STALL, "THATCH_SYNC_STALL",
            "Seconds a git fetch or push of thatch sync may go without any progress before it is given up"
            " (a silent server), within sync.timeout.", above=0, high=3600),
    Setting("sync.auto_push", "bool", False, "THATCH_SYNC_AUTO_PUSH",
            "After a plain git fetch brings teammates' memories, push this repository's new ones too"
            " (otherwise thatch sync pushes)."),
    Setting("sync.branches", "bool", False, "THATCH_SYNC_BRANCHES",
            "Share branch-scoped memories too (by default they stay on this machine)."),
    Setting("sync.review", "bool", True, "THATCH_SYNC_REVIEW",
            "Show a teammate's memory to agents by label only until 'thatch sync --review' accepts it."),
    Setting("sync.secret_rules", "str", "", "THATCH_SYNC_SECRET_RULES",
            "A further gitleaks-format rules file (a newer gitleaks config, your own rules) for the credential"
            " check before sharing, besides the bundled gitleaks and thatch rules."),
)}


def path(env: Mapping[str, str]) -> Path:
    """The settings file."""
    return paths.config_home(env) / "thatch" / "config.toml"


# path -> (the file's stat stamp, its flattened table or the error reading it)
_READ: dict[str, tuple[tuple, Any]] = {}


def flatten(table: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """{"daemon": {"idle": 60}} -> {"daemon.idle": 60}; an empty table
    stays a key of its own ({"recall": {"sub": {}}} -> {"recall.sub": {}})."""
    found: dict[str, Any] = {}
    for name, item in table.items():
        key = f"{prefix}{name}"
        if isinstance(item, dict) and item:
            found.update(flatten(item, key + "."))
        else:
            found[key] = item
    return found


def read_file(env: Mapping[str, str]) -> dict[str, Any]:
    """Every key the settings file sets (known or not), flattened; {} when
    there is no file. Raises SettingsError when it cannot be read or parsed."""
    file = path(env)
    try:
        st = os.stat(file)
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise SettingsError(f"cannot read the settings file {file}: {exc.strerror or exc}") from None
    stamp = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    cached = _READ.get(str(file))
    if cached is None or cached[0] != stamp:
        cached = _READ[str(file)] = (stamp, _parse(file, st.st_size))
    if isinstance(cached[1], SettingsError):
        raise cached[1]
    return cached[1]


def _parse(file: Path, size: int) -> dict[str, Any] | SettingsError:
    import tomllib

    if size > MAX_FILE_BYTES:
        return SettingsError(f"the settings file {file} is {size:,} bytes; thatch reads settings files of at most"
                             f" {MAX_FILE_BYTES // 1024} KiB (fix or remove it)")
    try:
        with open(file, "rb") as fh:
            data = fh.read(MAX_FILE_BYTES + 1)
        if len(data) > MAX_FILE_BYTES:
            return SettingsError(f"the settings file {file} is over {MAX_FILE_BYTES // 1024} KiB; fix or remove it")
        # A byte-order mark (some Windows editors write one) is not TOML, but means no harm.
        return flatten(tomllib.loads(data.removeprefix(b"\xef\xbb\xbf").decode("utf-8")))
    except tomllib.TOMLDecodeError as exc:
        return SettingsError(f"the settings file {file} is not valid TOML ({exc}); fix or remove it")
    except (OSError, UnicodeDecodeError) as exc:
        return SettingsError(f"cannot read the settings file {file}: {getattr(exc, 'strerror', None) or exc}")


def resolve(env: Mapping[str, str], key: str, *, strict: bool = True) -> tuple[Any, str]:
    """(value, source) of setting `key`: source is "env", "file" or "default"."""
    setting = SETTINGS[key]
    raw = env.get(setting.env)
    if raw is not None and raw.strip():
        try:
            return setting.parse(raw), "env"
        except ValueError as exc:
            if strict:
                raise SettingsError(f"{setting.env}={raw!r} is not a valid {key}: {exc}") from None
            return setting.default, "default"
    try:
        table = read_file(env)
    except SettingsError:
        if strict:
            raise
        table = {}
    if key in table:
        try:
            return setting.parse(table[key]), "file"
        except ValueError as exc:
            if strict:
                raise SettingsError(f"{key} in {path(env)} is not valid: {exc}") from None
    return setting.default, "default"


def unknown(env: Mapping[str, str]) -> list[str]:
    """Keys (and tables) the settings file sets that no setting has: a typo,
    or a newer thatch's. Empty when the file cannot be read (that error is
    reported where a value is read)."""
    try:
        table = read_file(env)
    except SettingsError:
        return []
    return sorted(key for key in table if key not in SETTINGS)


_WARNED: set[tuple[str, str]] = set()


def warnings(env: Mapping[str, str], *, once: bool = True) -> list[str]:
    """One line per unknown key of the settings file, with the setting it
    was probably meant to be; with `once`, each said once per process."""
    lines = []
    for key in unknown(env):
        mark = (str(path(env)), key)
        if once and mark in _WARNED:
            continue
        _WARNED.add(mark)
        from .suggest import close

        near = close(key, SETTINGS, limit=1)
        hint = f" (did you mean {near[0]}?)" if near else "; 'thatch config list' shows the settings there are"
        lines.append(f"warning: {path(env)} sets {key!r}, which is not a thatch setting: it is ignored{hint}")
    return lines


def value(env: Mapping[str, str], key: str, *, strict: bool = True) -> Any:
    """The value of setting `key` (see resolve)."""
    return resolve(env, key, strict=strict)[0]


def origin(env: Mapping[str, str], key: str) -> str:
    """Where `key`'s value comes from, in words: "THATCH_DAEMON=0",
    "daemon.enabled in ~/.config/thatch/config.toml" or "the default"."""
    setting = SETTINGS[key]
    _, source = resolve(env, key, strict=False)
    if source == "env":
        return f"{setting.env}={env.get(setting.env, '').strip()}"
    if source == "file":
        return f"{key} in {path(env)}"
    return "the default"
