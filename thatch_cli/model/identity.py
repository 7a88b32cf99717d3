"""What a local model folder is, independent of where it lies: its
declared name plus a fingerprint of its weight files (model/embeddings.py uses
it for model identities). Standard library only; the fingerprint is
remembered per folder and file stamps, so a copy is hashed once."""

from __future__ import annotations

import os
import re
from pathlib import Path

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: hooks import this module
if TYPE_CHECKING:
    from typing import Any

_GENERIC_DIRS = {"model", "models", "snapshots", "onnx", "main"}
_DECLARED = re.compile(r"^[\w.\-]+(/[\w.\-]+)?$")
_WEIGHTS = (".safetensors", ".bin", ".pt", ".pth")


def legacy_family(name: str) -> str | None:
    """A family from a path or hub id: its most specific directory name."""
    parts = [p for p in re.split(r"[\\/]+", name.strip()) if p]
    if not parts:
        return None
    meaningful = [p for p in parts if p.lower() not in _GENERIC_DIRS] or parts
    return meaningful[-1].lower().replace("_", "-")


def _declared_name(folder: Path) -> str:
    """What a local model folder says it is: the hub id of a hub cache
    snapshot, else its model card's title, else its directory name."""
    for part in folder.parts:
        if part.startswith("models--") and part.count("--") >= 2:
            return part[len("models--"):].replace("--", "/", 1)
    try:
        with open(folder / "README.md", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.startswith("# "):
                    title = line[2:].strip()
                    if _DECLARED.match(title):
                        return title
                    break
    except OSError:
        pass
    return legacy_family(str(folder)) or folder.name


def _weight_files(folder: Path) -> list[tuple[str, os.stat_result]]:
    found = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in ("onnx", "openvino"))
        for name in sorted(files):
            if name.endswith(_WEIGHTS):
                path = Path(root) / name
                found.append((path.relative_to(folder).as_posix(), path.stat()))
    return found


def _fingerprint(folder: Path, files: list[tuple[str, os.stat_result]]) -> str:
    import hashlib

    digest = hashlib.sha256()
    for relative, _ in files:
        digest.update(relative.encode("utf-8") + b"\0")
        with open(folder / relative, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                digest.update(chunk)
    return digest.hexdigest()[:12]


def local_identity(folder: str | os.PathLike, cache: Path | None = None, *, compute: bool = True) -> str | None:
    """The identity of a local model folder: its declared name, plus (unless
    it is a hub cache snapshot, named by its hub id) a fingerprint of its
    weight files. The fingerprint is remembered in `cache` per folder and
    file stamps, so hashing happens once per copy of a model. With
    `compute=False`, None instead of hashing (a shell prompt must not read
    hundreds of megabytes)."""
    folder = Path(os.path.realpath(os.path.expanduser(folder)))
    declared = _declared_name(folder)
    if any(part.startswith("models--") for part in folder.parts):
        return declared
    files = _weight_files(folder)
    stamp = [[rel, st.st_size, st.st_mtime_ns, st.st_ino] for rel, st in files]
    entries = _read_cache(cache)
    known = entries.get(str(folder))
    if isinstance(known, dict) and known.get("stamp") == stamp and isinstance(known.get("identity"), str):
        return known["identity"]
    if files and not compute:
        return None
    identity = f"{declared}@{_fingerprint(folder, files)}" if files else declared
    if cache is not None:
        entries[str(folder)] = {"stamp": stamp, "identity": identity}
        _write_cache(cache, entries)
    return identity


def _read_cache(cache: Path | None) -> dict[str, Any]:
    from ..support.files import read_json_object

    return read_json_object(cache) if cache is not None else {}


def _write_cache(cache: Path, entries: dict[str, Any]) -> None:
    from ..support.files import write_json_cache

    write_json_cache(cache, dict(list(entries.items())[-64:]))
