"""The memories ref's git objects: reading a commit's files (the user's
`git`, which lists a tree with sizes in one call and streams blobs), and
writing a new tree and commit (dulwich, into the repository's object store).

Reading refuses a tree over MAX_FILES files or MAX_TREE_BYTES bytes whole,
and never reads a file over records.MAX_RECORD_BYTES: a hostile remote
cannot make thatch read more than that. A file whose name is not UTF-8 is
kept in the tree and never read.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self, cast

from ..support.errors import ThatchError
from . import records

if TYPE_CHECKING:
    from dulwich.objects import ObjectID, ShaFile
    from dulwich.refs import Ref
    from dulwich.repo import Repo

MAX_FILES = 200_000
MAX_TREE_BYTES = 256 * 1024 * 1024
LOCAL_REF = b"refs/thatch/memories"
FILE_MODE = 0o100644
TREE_MODE = 0o040000


FEW_BLOBS = 16

class RemoteRefused(ThatchError):
    """The remote's memories ref holds something thatch will not read."""

    exit_code = 5
    code = "remote_refused"


def tracking_ref(remote: str) -> bytes:
    return f"refs/thatch/remotes/{remote}/memories".encode()


class Entry:
    __slots__ = ("mode", "path", "sha", "size")

    def __init__(self, path: str, mode: int, sha: str, size: int) -> None:
        self.path, self.mode, self.sha, self.size = path, mode, sha, size


class Snapshot:
    """The files of one commit of the ref: memory files by slug, anything
    else by path (kept as it is when thatch writes the next commit)."""

    def __init__(self, commit: str | None, memories: dict[str, Entry], others: dict[str, Entry],
                 misplaced: list[str], undecodable: list[str] | None = None) -> None:
        self.commit, self.memories, self.others, self.misplaced = commit, memories, others, misplaced
        # Names that are not UTF-8, as shown (bytes escaped): kept in the
        # tree untouched, never read.
        self.undecodable = undecodable or []

    @classmethod
    def empty(cls) -> Snapshot:
        return cls(None, {}, {}, [])


class Git:
    """Local git commands in one repository (no network here: transport.py
    runs fetch and push) and its dulwich Repo."""

    def __init__(self, top: Path, env: Mapping[str, str]) -> None:
        self.top, self.env = top, dict(env)
        self._repo: Repo | None = None
        self._snapshots: dict[str, Snapshot] = {}
        self._identity: str | None = None
        self.anonymous = "thatch"  # the name when git knows none (sync sets one of the database's own)

    def identity(self) -> str:
        """Who commits here (`git var`, asked once: a sync needs it several times)."""
        if self._identity is None:
            from .gitconfig import identity

            self._identity = identity(self.top, self.env, self.anonymous)
        return self._identity

    @property
    def repo(self) -> Repo:
        if self._repo is None:
            from dulwich.repo import Repo

            self._repo = Repo(os.fspath(self.top))
        return self._repo

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._repo is not None:
            self._repo.close()
            self._repo = None

    def run(self, *args: str, data: bytes | None = None) -> bytes:
        result = subprocess.run(["git", *args], cwd=self.top, env=self.env, input=data, capture_output=True, check=False,
                                timeout=600)
        if result.returncode != 0:
            raise ThatchError(f"git {args[0]} failed: {result.stderr.decode(errors='replace').strip()[:300]}")
        return result.stdout

    def ref(self, name: bytes) -> str | None:
        try:
            return self.repo.refs[cast("Ref", name)].decode()
        except KeyError:
            return None

    def has(self, sha: str | None) -> bool:
        return sha is not None and sha != "" and _oid(sha) in self.repo.object_store

    def kind(self, sha: str) -> str:
        """The type of an object this repository has: commit, tree, blob or tag."""
        return self.repo.object_store[_oid(sha)].type_name.decode()

    def set_ref(self, name: bytes, old: str | None, new: str) -> bool:
        return self.repo.refs.set_if_equals(cast("Ref", name), _oid(old) if old else None, _oid(new))

    def merge_base(self, a: str | None, b: str | None) -> str | None:
        if not (a and b):
            return None
        if a == b:
            return a
        from dulwich.graph import find_merge_base

        found = find_merge_base(self.repo, [_oid(a), _oid(b)])
        return found[0].decode() if found else None

    # -- reading -----------------------------------------------------------------------

    def snapshot(self, commit: str | None) -> Snapshot:
        if not commit:
            return Snapshot.empty()
        if commit not in self._snapshots:
            self._snapshots[commit] = self._read_snapshot(commit)
        return self._snapshots[commit]

    def _read_snapshot(self, commit: str) -> Snapshot:
        listing = self.run("ls-tree", "-r", "-l", "-z", "--full-tree", commit)
        memories: dict[str, Entry] = {}
        others: dict[str, Entry] = {}
        misplaced: list[str] = []
        undecodable: list[str] = []
        total = 0
        for line in listing.split(b"\0"):
            if not line:
                continue
            meta, _, raw_path = line.partition(b"\t")
            mode, kind, sha, size = meta.split()
            path = raw_path.decode("utf-8", "surrogateescape")
            entry = Entry(path, int(mode, 8), sha.decode(), int(size) if size != b"-" else 0)
            total += entry.size
            if len(memories) + len(others) >= MAX_FILES or total > MAX_TREE_BYTES:
                raise RemoteRefused(f"the memories ref at {commit[:12]} holds over {MAX_FILES} files or"
                                    f" {MAX_TREE_BYTES // 2**20} MiB; nothing was read from it")
            try:
                raw_path.decode("utf-8")
            except UnicodeDecodeError:
                undecodable.append(raw_path.decode("utf-8", "backslashreplace"))
                others[path] = entry
                continue
            slug = records.slug_of(path) if kind == b"blob" else None
            if slug is not None:
                memories[slug] = entry
            elif path.startswith("m/"):
                misplaced.append(path)
                others[path] = entry
            else:
                others[path] = entry
        return Snapshot(commit, memories, others, misplaced, undecodable)

    def check_format(self, snapshot: Snapshot) -> None:
        """Refuse a ref written in a format newer than this thatch reads."""
        entry = snapshot.others.get(records.FORMAT_PATH)
        if entry is None or entry.size > 4096:
            return
        import json

        try:
            version = json.loads(self.blobs([entry.sha]).get(entry.sha, b"{}")).get("version", 1)
        except (ValueError, AttributeError):
            return
        if isinstance(version, int) and version > records.FORMAT_VERSION:
            raise RemoteRefused(f"the memories ref was written in format {version} by a newer thatch; this one"
                                f" reads format {records.FORMAT_VERSION}: upgrade thatch to sync")

    def blobs(self, shas: Iterable[str]) -> dict[str, bytes]:
        """The content of each blob (one `git cat-file --batch`, or dulwich
        for a few)."""
        return dict(self.each_blob(shas))

    def each_blob(self, shas: Iterable[str]) -> Iterator[tuple[str, bytes]]:
        """(id, content) of each blob this repository has, in the order
        asked, as `git cat-file --batch` writes them: the caller works on
        one while git reads the next (a big pull checks 10,000 files)."""
        wanted = list(dict.fromkeys(shas))
        if len(wanted) <= FEW_BLOBS:  # read here: a process costs more than a few small objects
            store = self.repo.object_store
            for sha in wanted:
                try:
                    data = store[_oid(sha)].as_raw_string()
                except KeyError:
                    continue
                yield sha, data
            return
        yield from self._cat_file(wanted)

    def _cat_file(self, wanted: list[str]) -> Iterator[tuple[str, bytes]]:
        import threading

        git = subprocess.Popen(["git", "cat-file", "--batch"], cwd=self.top, env=self.env, stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert git.stdin is not None and git.stdout is not None and git.stderr is not None
        stdin, stdout, stderr = git.stdin, git.stdout, git.stderr

        def feed() -> None:  # in a thread: git answers while it reads, and a full pipe would block us both
            try:
                stdin.write(("\n".join(wanted) + "\n").encode())
                stdin.close()
            except OSError:  # git ended early; its exit status says why
                pass

        feeder = threading.Thread(target=feed, daemon=True)
        watchdog = threading.Timer(600, git.kill)  # as run()'s timeout: a stuck git never hangs a sync
        feeder.start()
        watchdog.start()
        finished = False
        try:
            for sha in wanted:
                header = stdout.readline().split()
                if not header:
                    break
                if len(header) < 3:  # "<sha> missing"
                    continue
                data = stdout.read(int(header[2]))
                stdout.read(1)
                yield sha, data
            finished = True
        finally:
            watchdog.cancel()
            if not finished and git.poll() is None:  # the caller stopped reading (or failed)
                git.kill()
            feeder.join()
            stdout.close()
            error = stderr.read()
            stderr.close()
            code = git.wait()
        if code != 0:
            raise ThatchError(f"git cat-file failed: {error.decode(errors='replace').strip()[:300]}")

    # -- writing -----------------------------------------------------------------------

    def write_commit(self, start: Snapshot, blobs: Mapping[str, bytes | None], parents: list[str],
                     identity: str, message: str, *, now: int) -> str:
        """A commit whose tree is `start`'s files with `blobs` (path -> new
        content, None to drop the file) applied; returns its id."""
        from dulwich.objects import Blob, Commit

        files = {e.path: (e.mode, e.sha.encode()) for e in (*start.memories.values(), *start.others.values())}
        new_objects: list[ShaFile] = []
        for path, data in blobs.items():
            if data is None:
                files.pop(path, None)
                continue
            blob = Blob.from_string(data)
            new_objects.append(blob)
            files[path] = (FILE_MODE, blob.id)
        store = self.repo.object_store
        root = _build(files, new_objects)
        commit = Commit()
        commit.tree = root
        commit.parents = [_oid(p) for p in parents]
        commit.author = commit.committer = identity.encode("utf-8", "replace")
        commit.author_time = commit.commit_time = now
        commit.author_timezone = commit.commit_timezone = 0
        commit.encoding = b"UTF-8"
        commit.message = message.encode("utf-8")
        new_objects.append(commit)
        fresh = [(obj, None) for obj in new_objects if obj.id not in store]
        if len(fresh) > 64:
            store.add_objects(fresh)
        else:
            for obj, _ in fresh:
                store.add_object(obj)
        return commit.id.decode()


def _build(files: Mapping[str, tuple[int, bytes]], new_objects: list[ShaFile]) -> bytes:
    """Tree objects for flat `files` (path -> (mode, sha)), appended to
    `new_objects`; returns the root tree's id."""
    from dulwich.objects import Tree

    nested: dict[str, Any] = {}
    for path, (mode, sha) in files.items():
        node = nested
        *dirs, name = path.split("/")
        for part in dirs:
            node = node.setdefault(part, {})
        node[name] = (mode, sha)

    def make(node: dict[str, Any]) -> bytes:
        tree = Tree()
        for name, item in node.items():
            if isinstance(item, dict):
                tree.add(name.encode("utf-8", "surrogateescape"), TREE_MODE, cast("ObjectID", make(item)))
            else:
                tree.add(name.encode("utf-8", "surrogateescape"), item[0], cast("ObjectID", item[1]))
        new_objects.append(tree)
        return tree.id

    return make(nested)


def _oid(sha: str) -> ObjectID:
    return cast("ObjectID", sha.encode())
