"""Reading and changing settings (`thatch config get|set|unset|list`).

The registry and how a value is resolved live in support/settings.py; this module
checks keys and values and edits the file. Edits go through tomlkit, so
the file's comments, order and formatting survive, and are written with
files.replace_atomically. Setting a value it already has writes nothing;
unsetting the last key removes the file, so `set` then `unset` leaves the
disk exactly as it was.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..support import settings
from ..support.errors import InvalidInput
from ..support.settings import SETTINGS, Setting, SettingsError
from .context import Context


def setting(key: str) -> Setting:
    """The registry entry for `key`; an unknown key is an error that names the closest ones."""
    found = SETTINGS.get((key or "").strip().lower())
    if found is not None:
        return found
    from ..support.suggest import close

    near = close((key or "").strip(), SETTINGS, limit=2)
    hint = f"did you mean {' or '.join(near)}? " if near else ""
    raise InvalidInput(f"unknown setting {key!r}; {hint}'thatch config list' shows them all", key=key)


class SettingValue:
    """A setting's value now, where it comes from, and what it means."""

    __slots__ = ("setting", "value", "source")

    def __init__(self, setting: Setting, value: Any, source: str) -> None:
        self.setting, self.value, self.source = setting, value, source

    @property
    def key(self) -> str:
        return self.setting.key

    def shown(self) -> str:
        return self.setting.show(self.value)

    def to_json(self) -> dict:
        s = self.setting
        return {"key": s.key, "value": self.value, "source": self.source, "default": s.default, "env": s.env,
                "type": s.kind, "doc": s.doc}


def get(ctx: Context, key: str) -> SettingValue:
    entry = setting(key)
    return SettingValue(entry, *settings.resolve(ctx.env, entry.key))


class Listing:
    __slots__ = ("path", "exists", "values", "unknown")

    def __init__(self, path: Path, exists: bool, values: list[SettingValue], unknown: list[str]) -> None:
        self.path, self.exists, self.values, self.unknown = path, exists, values, unknown

    def to_json(self) -> dict:
        return {"path": str(self.path), "exists": self.exists, "settings": [v.to_json() for v in self.values],
                "unknown": self.unknown}


def listing(ctx: Context) -> Listing:
    """Every setting; keys in the file that thatch does not know are listed
    apart (a newer thatch's, or a typo)."""
    table = settings.read_file(ctx.env)
    values = [SettingValue(entry, *settings.resolve(ctx.env, key)) for key, entry in SETTINGS.items()]
    return Listing(settings.path(ctx.env), settings.path(ctx.env).is_file(), values,
                   sorted(k for k in table if k not in SETTINGS))


class Change:
    """What `set` or `unset` did: the value in effect before and after, what
    the file now holds for the key (None: nothing), whether the file
    changed, and the variable that overrides the file, if one is set."""

    __slots__ = ("key", "before", "after", "filed", "changed", "path", "overridden_by")

    def __init__(self, key: str, before: SettingValue, after: SettingValue, filed: Any, changed: bool,
                 path: Path, overridden_by: str | None) -> None:
        self.key, self.before, self.after, self.filed, self.changed = key, before, after, filed, changed
        self.path, self.overridden_by = path, overridden_by

    def to_json(self) -> dict:
        return {"key": self.key, "value": self.after.value, "source": self.after.source, "file_value": self.filed,
                "previous": self.before.value, "previous_source": self.before.source, "changed": self.changed,
                "path": str(self.path), "overridden_by": self.overridden_by}


def set_value(ctx: Context, key: str, raw: str) -> Change:
    """Write `key = raw` (checked and typed) to the settings file."""
    entry = setting(key)
    try:
        value = entry.parse(raw)
    except ValueError as exc:
        raise InvalidInput(f"invalid value for {entry.key}: {exc}", key=entry.key) from None
    if entry.key == "model":
        value = _model_value(ctx, value)
    return _edit(ctx, entry, lambda doc: _put(doc, entry, value))


def unset(ctx: Context, key: str) -> Change:
    """Remove `key` from the settings file (nothing to do when it is not there)."""
    entry = setting(key)
    return _edit(ctx, entry, lambda doc: _remove(doc, entry.key), trim=True)


def _model_value(ctx: Context, name: str) -> str:
    """A local folder is recorded by its absolute path (the file is read from
    any directory); anything else (a hub id, `fake:DIM`) as given."""
    folder = (ctx.cwd / Path(name).expanduser())
    if folder.is_dir():
        return str(folder.absolute())
    if name.startswith(("/", "./", "../", "~")):
        raise InvalidInput(f"no model folder at {folder}", key="model")
    return name


def _state(ctx: Context, entry: Setting) -> SettingValue:
    try:
        return SettingValue(entry, *settings.resolve(ctx.env, entry.key))
    except SettingsError:  # the value being replaced or removed may be the broken one
        return SettingValue(entry, None, "file")


def _edit(ctx: Context, entry: Setting, change, *, trim: bool = False) -> Change:
    """Apply `change` to the parsed file and write it back if it changed.
    `trim` drops the blank lines a removal leaves at either end (the ones
    tomlkit put beside a table or key it added)."""
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    from ..support.files import private_dir, replace_atomically

    file = settings.path(ctx.env)
    before = _state(ctx, entry)
    settings.read_file(ctx.env)  # a file too large or not TOML is refused the same way as when read
    try:
        text = file.read_text(encoding="utf-8") if file.is_file() else ""
    except (OSError, UnicodeDecodeError) as exc:
        raise SettingsError(f"cannot read the settings file {file}: {getattr(exc, 'strerror', None) or exc}") from None
    bom = "\ufeff" if text.startswith("\ufeff") else ""  # kept as it was
    text = text[len(bom):]
    try:
        doc = tomlkit.parse(text)
        change(doc)
        new = tomlkit.dumps(doc)
    except TOMLKitError as exc:
        raise SettingsError(f"cannot edit the settings file {file}: {exc}; fix it by hand") from None
    if trim and new != text:
        new = new.strip("\n") + "\n" if new.strip() else ""
    if new != text:
        try:
            if new.strip():
                private_dir(file.parent)
                replace_atomically(file, bom + new, file.stat().st_mode & 0o777 if file.exists() else 0o600)
            else:
                file.unlink()
        except OSError as exc:
            raise SettingsError(f"cannot write the settings file {file}: {exc.strerror or exc}") from None
    after = _state(ctx, entry)
    overridden = settings.origin(ctx.env, entry.key) if after.source == "env" else None
    filed = settings.flatten(doc.unwrap()).get(entry.key)
    return Change(entry.key, before, after, entry.parse(filed) if filed is not None else None, new != text, file,
                  overridden)


def _put(doc, entry: Setting, value: Any) -> None:
    import tomlkit

    *tables, name = entry.key.split(".")
    node = doc
    for part in tables:
        if part not in node or not isinstance(node[part], dict):
            node[part] = tomlkit.table()
        node = node[part]
    if name in node:
        try:
            if entry.parse(node[name].unwrap()) == value:
                return  # the same value, however it is written: leave the file alone
        except (ValueError, AttributeError):
            pass
    node[name] = value


def _remove(doc, key: str) -> None:
    *tables, name = key.split(".")
    trail = [doc]
    for part in tables:
        node = trail[-1]
        if part not in node or not isinstance(node[part], dict):
            return
        trail.append(node[part])
    if name not in trail[-1]:
        return
    del trail[-1][name]
    # Drop tables the removal left empty (a table `set` created goes as it came).
    for parent, part in reversed(list(zip(trail, tables))):
        if len(parent[part]) or "#" in parent[part].as_string():
            break
        del parent[part]
