"""Whether the code an anchor describes (storage/anchors.py) is still there.

Cheap first: the git index already holds each tracked file's blob id and
the stat data it was computed from, so an unchanged file costs one stat and
a comparison of blob ids, read with the standard library (importing dulwich
alone costs a recall ~35 ms). Only a file whose blob differs is read and its
lines hashed and compared with the anchored ones; only a file that is gone
from its path costs dulwich, to follow a rename between the anchor's commit
and HEAD (git's rename detection).

Each anchor is classed as unchanged, moved (the same lines elsewhere in the
file, or the file renamed), changed (how many of its lines) or gone. The
working tree is what is compared: it is what an agent reads.
"""

from __future__ import annotations

import hashlib
import os
import struct
from stat import S_ISREG

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: recall checks drift
if TYPE_CHECKING:
    from collections.abc import Sequence

# Files larger than this, or holding a NUL byte, are anchored by blob id only.
MAX_LINE_FILE_BYTES = 2_000_000
HASH_CHARS = 8  # each line's hash, in hex

UNCHANGED, MOVED, CHANGED, GONE = "unchanged", "moved", "changed", "gone"


def blob_id(data: bytes) -> str:
    """The id git gives `data` as a blob (what `git hash-object` prints)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def line_hashes(data: bytes) -> list[str] | None:
    """One short hash per line (trailing blanks ignored, so re-indenting a
    line changes it but trimming its end does not); None for a file too
    large or binary to compare by lines."""
    if len(data) > MAX_LINE_FILE_BYTES or b"\0" in data:
        return None
    return [hashlib.blake2b(line.rstrip(), digest_size=HASH_CHARS // 2).hexdigest() for line in data.splitlines()]


def fingerprint(hashes: Sequence[str]) -> str:
    """One hash of a range's lines: equal fingerprints, equal code."""
    return hashlib.sha1("".join(hashes).encode()).hexdigest()


def split_hashes(text: str | None) -> list[str] | None:
    if not text:
        return None
    return [text[i:i + HASH_CHARS] for i in range(0, len(text), HASH_CHARS)]


def read_index(git_dir: str) -> tuple[dict[str, tuple[str, int, int]], int] | None:
    """{path: (blob id, mtime_ns, size)} of the index's stage-0 entries, and
    the index file's own mtime_ns; None when there is no index or its format
    is one this reader does not know (the caller then hashes files)."""
    index_path = os.path.join(git_dir, "index")
    try:
        with open(index_path, "rb") as f:
            data = f.read()
        stamp = os.stat(index_path).st_mtime_ns
    except OSError:
        return None
    if len(data) < 12 or data[:4] != b"DIRC":
        return None
    version, count = struct.unpack(">II", data[4:12])
    if version not in (2, 3, 4):
        return None
    entries: dict[str, tuple[str, int, int]] = {}
    pos, previous = 12, b""
    fixed = struct.Struct(">IIIIIIIIII20sH")
    try:
        for _ in range(count):
            (_cs, _cn, ms, mn, _dev, _ino, _mode, _uid, _gid, size, sha, flags) = fixed.unpack_from(data, pos)
            start = pos
            pos += fixed.size
            if flags & 0x4000:
                pos += 2
            if version == 4:
                byte = data[pos]
                pos += 1
                strip = byte & 0x7F
                while byte & 0x80:  # git's offset varint
                    byte = data[pos]
                    pos += 1
                    strip = ((strip + 1) << 7) | (byte & 0x7F)
                end = data.index(b"\0", pos)
                name = previous[:len(previous) - strip] + data[pos:end]
                pos = end + 1
            else:
                end = data.index(b"\0", pos)
                name = data[pos:end]
                pos = start + ((end - start) // 8 + 1) * 8
            previous = name
            if (flags >> 12) & 3 == 0:
                entries[name.decode("utf-8", "surrogateescape")] = (sha.hex(), ms * 1_000_000_000 + mn, size)
    except (struct.error, ValueError, IndexError):
        return None
    return entries, stamp


def head_commit(git_dir: str, common_dir: str) -> str | None:
    """The commit HEAD names (detached or through a branch), read from the
    files; None on an unborn branch or refs this reader cannot follow."""
    try:
        with open(os.path.join(git_dir, "HEAD"), encoding="utf-8") as f:
            head = f.read().strip()
    except OSError:
        return None
    if not head.startswith("ref:"):
        return head if len(head) == 40 else None
    ref = head[4:].strip()
    for base in (git_dir, common_dir):
        try:
            with open(os.path.join(base, ref), encoding="utf-8") as f:
                value = f.read().strip()
            return value if len(value) == 40 else None
        except OSError:
            continue
    try:
        with open(os.path.join(common_dir, "packed-refs"), encoding="utf-8") as f:
            for line in f:
                sha, _, name = line.strip().partition(" ")
                if name == ref:
                    return sha
    except OSError:
        pass
    return None


class Drift:
    """What became of one anchor: `state`, where its code is now (`path`,
    `start`, `end`), how many of its `lines` `changed`, the commit it was
    anchored at (`since`) and a `note` on what could not be checked."""

    __slots__ = ("state", "path", "start", "end", "changed", "lines", "since", "note")

    def __init__(self, state: str, path: str, start: int | None = None, end: int | None = None, *,
                 changed: int | None = None, lines: int | None = None, since: str | None = None,
                 note: str | None = None) -> None:
        self.state, self.path, self.start, self.end = state, path, start, end
        self.changed, self.lines, self.since, self.note = changed, lines, since, note

    @property
    def doubtful(self) -> bool:
        """Whether what the memory says may no longer hold."""
        return self.state in (CHANGED, GONE)

    def where(self) -> str:
        return self.path + (f":{self.start}-{self.end}" if self.start is not None else "")

    def summary(self) -> str:
        since = f"since {self.since[:7]}" if self.since else "since it was anchored"
        if self.state == CHANGED:
            count = f": {self.changed} of {self.lines} lines" if self.changed is not None else ""
            return f"the code it describes changed {since}{count} ({self.where()})"
        if self.state == GONE:
            return f"the code it describes is gone {since} ({self.path} no longer has it)"
        if self.state == MOVED:
            return f"the code it describes moved {since}: now {self.where()}"
        return f"the code it describes is unchanged {since}"

    def to_json(self) -> dict:
        return {"state": self.state, "path": self.path, "start": self.start, "end": self.end,
                "changed_lines": self.changed, "lines": self.lines, "since": self.since, "note": self.note,
                "summary": self.summary()}


class Worktree:
    """One checkout's files, read as drift checks need them (each at most once)."""

    def __init__(self, top: str, git_dir: str, common_dir: str) -> None:
        self.top, self.git_dir, self.common_dir = top, git_dir, common_dir
        self._index: tuple[dict[str, tuple[str, int, int]], int] | None | bool = False
        self._blobs: dict[str, str | None] = {}
        self._data: dict[str, bytes | None] = {}

    def _entries(self) -> tuple[dict[str, tuple[str, int, int]], int] | None:
        if self._index is False:
            self._index = read_index(self.git_dir)
        return self._index  # type: ignore[return-value]

    def data(self, path: str) -> bytes | None:
        if path not in self._data:
            try:
                with open(os.path.join(self.top, path), "rb") as f:
                    self._data[path] = f.read()
            except OSError:
                self._data[path] = None
        return self._data[path]

    def blob(self, path: str) -> str | None:
        """The blob id of the file at `path` now; None when there is none.
        Taken from the index when the file's stat data matches its entry and
        the entry is not racy (written in the same tick as the index)."""
        if path in self._blobs:
            return self._blobs[path]
        found: str | None = None
        index = self._entries()
        try:
            st = os.stat(self.top + "/" + path)
        except (OSError, ValueError):
            st = None
        if st is not None and S_ISREG(st.st_mode):
            entry = index[0].get(path) if index else None
            if entry is not None and entry[1] == st.st_mtime_ns and entry[2] == (st.st_size & 0xFFFFFFFF) \
                    and entry[1] < index[1]:  # type: ignore[index]
                found = entry[0]
            else:
                data = self.data(path)
                found = blob_id(data) if data is not None else None
        self._blobs[path] = found
        return found

    def path_of_blob(self, blob: str) -> str | None:
        """A tracked path whose indexed content is `blob` (a file moved as it was)."""
        index = self._entries()
        if not index:
            return None
        for path, entry in index[0].items():
            if entry[0] == blob and self.blob(path) == blob:
                return path
        return None

    def renamed(self, path: str, commit: str | None) -> tuple[str | None, str | None]:
        """(the path `path` was renamed to between `commit` and HEAD, by
        git's rename detection, or None; a note when history cannot tell)."""
        if not commit:
            return None, None
        from dulwich.diff_tree import RenameDetector, tree_changes
        from dulwich.objects import Commit, ObjectID
        from dulwich.repo import Repo

        try:
            repo = Repo(self.top)
        except Exception:  # noqa: BLE001 - an unreadable repository: nothing to follow
            return None, "the repository could not be read to follow renames"
        try:
            store = repo.object_store
            try:
                old = store[ObjectID(commit.encode())]
            except KeyError:
                shallow = os.path.isfile(os.path.join(self.common_dir, "shallow"))
                return None, (f"commit {commit[:7]} is not in this {'shallow clone' if shallow else 'repository'}'s"
                              " history: renames since then cannot be followed")
            head = head_commit(self.git_dir, self.common_dir)
            if head is None:
                return None, None
            new = store[ObjectID(head.encode())]
            if not isinstance(old, Commit) or not isinstance(new, Commit):
                return None, None
            wanted = path.encode("utf-8", "surrogateescape")
            for change in tree_changes(store, old.tree, new.tree, rename_detector=RenameDetector(store)):
                if change.type in ("rename", "copy") and change.old is not None and change.new is not None \
                        and change.old.path == wanted and change.new.path is not None:
                    moved = change.new.path.decode("utf-8", "surrogateescape")
                    if self.blob(moved) is not None:
                        return moved, None
            return None, None
        finally:
            repo.close()


def check(tree: Worktree, row: Sequence) -> Drift:
    """Class one anchor row (storage/anchors.py) against the working tree."""
    path, start, end, commit, blob, _fingerprint, hashes_text, _at = row
    now = tree.blob(path)
    moved_file = False
    note = None
    if now is None:
        found = tree.path_of_blob(blob)
        if found is None:
            found, note = tree.renamed(path, commit)
        if found is None:
            return Drift(GONE, path, start, end, since=commit, note=note)
        path, now, moved_file = found, tree.blob(found), True
    if now == blob:
        return Drift(MOVED if moved_file else UNCHANGED, path, start, end, since=commit)
    old = split_hashes(hashes_text)
    data = tree.data(path)
    current = line_hashes(data) if data is not None else None
    if old is None or current is None:
        return Drift(CHANGED, path, start, end, since=commit, note="compared by blob id only (binary or large)")
    if start is None:
        changed = _changed(old, current)
        if changed == 0:
            return Drift(MOVED if moved_file else UNCHANGED, path, since=commit)
        return Drift(CHANGED, path, changed=changed, lines=len(old), since=commit)
    if current[start - 1:end] == old:
        return Drift(MOVED if moved_file else UNCHANGED, path, start, end, since=commit)
    at = _find(current, old)
    if at is not None:
        return Drift(MOVED, path, at + 1, at + len(old), since=commit)
    lo = max(0, start - 1 - len(old))
    window = current[lo:end + len(old)]
    first, last, matched = _aligned(old, window)
    changed = len(old) - matched
    new_start, new_end = (lo + first + 1, lo + last) if matched else (start, end)
    return Drift(CHANGED, path, new_start, new_end, changed=changed, lines=len(old), since=commit)


def _find(haystack: list[str], needle: list[str]) -> int | None:
    if not needle:
        return None
    first = needle[0]
    for i in range(len(haystack) - len(needle) + 1):
        if haystack[i] == first and haystack[i:i + len(needle)] == needle:
            return i
    return None


def _aligned(old: list[str], new: list[str]) -> tuple[int, int, int]:
    """(first, end) of the part of `new` that matches `old`, and how many of `old`'s lines it kept."""
    from difflib import SequenceMatcher

    blocks = [b for b in SequenceMatcher(None, old, new, autojunk=False).get_matching_blocks() if b.size]
    if not blocks:
        return 0, 0, 0
    # Lines changed at either end still belong to the range: extend by them.
    first, last = blocks[0], blocks[-1]
    start = max(0, first.b - first.a)
    end = min(len(new), last.b + last.size + len(old) - (last.a + last.size))
    return start, end, sum(b.size for b in blocks)


def _changed(old: list[str], new: list[str]) -> int:
    """How many lines differ between two versions of a whole file (the larger side of the edit)."""
    from difflib import SequenceMatcher

    matched = sum(b.size for b in SequenceMatcher(None, old, new, autojunk=False).get_matching_blocks())
    return max(len(old), len(new)) - matched
