"""The settings a host's MCP server must be started with so that the agent
uses the same database, model, settings file and daemon as the user's
terminal.

Hosts start `thatch mcp` with an environment of their own: Codex passes a
short list of variables (HOME, PATH, USER ...) and what the server's `env`
table adds; clients built on the TypeScript MCP SDK pass HOME, LOGNAME,
PATH, SHELL, TERM and USER. A user with THATCH_DB, THATCH_MODEL or
XDG_CONFIG_HOME set in their shell would get another database inside the
agent. So setup records, in the server's `env`, every variable that
decides where thatch's files are or which setting applies, as the terminal
that ran setup has it, when it differs from what the same user would get
without it.
"""

from __future__ import annotations

import os
from typing import Mapping

# Where thatch's files are.
PATH_VARIABLES = ("THATCH_DB", "THATCH_DB_PATH", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME",
                  "XDG_RUNTIME_DIR")


def _defaults(env: Mapping[str, str]) -> dict[str, str]:
    home = env.get("HOME") or os.path.expanduser("~")
    return {"XDG_CONFIG_HOME": os.path.join(home, ".config"), "XDG_STATE_HOME": os.path.join(home, ".local", "state"),
            "XDG_CACHE_HOME": os.path.join(home, ".cache"), "XDG_RUNTIME_DIR": f"/run/user/{os.getuid()}"}


def _absolute(value: str, cwd: str) -> str:
    return os.path.normpath(os.path.join(cwd, os.path.expanduser(value)))


def server_env(env: Mapping[str, str], cwd: str) -> dict[str, str]:
    """The variables to record for a host's `thatch mcp`: each of
    PATH_VARIABLES and each setting's variable (settings.SETTINGS) that is
    set here to something other than its default, paths made absolute (the
    host starts the server in another directory)."""
    from ...support.settings import SETTINGS

    defaults = _defaults(env)
    recorded: dict[str, str] = {}
    for name in PATH_VARIABLES:
        value = env.get(name)
        if value and _absolute(value, cwd) != defaults.get(name):
            recorded[name] = _absolute(value, cwd)
    for setting in SETTINGS.values():
        value = env.get(setting.env)
        if not value:
            continue
        if setting.key == "model" and not value.startswith("fake:") and os.path.isdir(_absolute(value, cwd)):
            value = _absolute(value, cwd)  # a model folder named relative to where setup ran
        recorded[setting.env] = value
    return recorded


def names() -> tuple[str, ...]:
    """Every variable server_env or machine_env may record."""
    from ...support.settings import SETTINGS

    return ("THATCH_BIN", *PATH_VARIABLES, *(setting.env for setting in SETTINGS.values()))


def machine_env(env: Mapping[str, str], cwd: str, executable: str) -> dict[str, str]:
    """What a file a team shares must not hold, for this user's own
    settings: server_env, and THATCH_BIN (the executable) when `thatch` on
    PATH is not the thatch that ran setup."""
    import shutil

    recorded = server_env(env, cwd)
    found = shutil.which("thatch", path=env.get("PATH") or os.defpath)
    if found is None or os.path.realpath(found) != os.path.realpath(executable):
        recorded = {"THATCH_BIN": executable, **recorded}
    return recorded
