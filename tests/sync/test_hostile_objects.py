"""One bad object on the remote never blocks the team: a tree entry whose
name is not UTF-8, or a memories ref pointing at a blob, a tree or an
annotated tag, is skipped and reported (exit 5) while everything else
syncs, through `sync`, `sync status`, `--dry-run` and the background import
after a plain `git fetch`. The hostile remotes are built with git plumbing
and forced onto the bare repository, as anyone who can push could."""

from __future__ import annotations

import json
import subprocess
import time

import pytest

from thatch_cli.sync import hlc, records

from helpers import THATCH, git_env

REF = "refs/thatch/memories"


def plumb(cwd, *args: str, data: bytes | None = None) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env=git_env(), input=data, capture_output=True,
                          check=True).stdout.decode().strip()


def _good_record(label: str) -> bytes:
    from thatch_cli.support.slugs import slugify

    return json.dumps({"slug": slugify(label), "label": label, "content": f"# {label}\n\nFine.",
                       "created_at": "2026-01-01T00:00:00.000Z", "updated_at": "2026-01-01T00:00:00.000Z",
                       "author": "Eve <eve@example.com>", "hlc": "1767225600000.00000.e"}).encode()


def _with_bad_name(bare) -> None:
    """The remote's ref gains a good memory and a file whose name is not UTF-8."""
    good = plumb(bare, "hash-object", "-w", "--stdin", data=_good_record("Good one"))
    junk = plumb(bare, "hash-object", "-w", "--stdin", data=b"{}")
    path = records.path_of("good-one")
    shard, name = path.rsplit("/", 1)
    shard_dir = shard.split("/")[1]
    current = plumb(bare, "ls-tree", "-z", f"{REF}:m").split("\0")
    kept = [line.encode() for line in current if line and not line.endswith("\t" + shard_dir)]
    existing = plumb(bare, "ls-tree", "-z", f"{REF}:m/{shard_dir}") if _has(bare, f"{REF}:m/{shard_dir}") else ""
    inner = [line.encode() for line in existing.split("\0") if line]
    inner += [f"100644 blob {good}\t{name}".encode(), f"100644 blob {junk}\t".encode() + b"bad\xff\xfe.json"]
    shard_tree = plumb(bare, "mktree", "-z", data=b"\0".join(inner) + b"\0")
    m_tree = plumb(bare, "mktree", "-z", data=b"\0".join([*kept, f"040000 tree {shard_tree}\t{shard_dir}".encode()])
                   + b"\0")
    top = [line.encode() for line in plumb(bare, "ls-tree", "-z", REF).split("\0") if line and not line.endswith("\tm")]
    top += [f"040000 tree {m_tree}\tm".encode(), f"100644 blob {junk}\t".encode() + b"\xff.json"]
    root = plumb(bare, "mktree", "-z", data=b"\0".join(top) + b"\0")
    commit = plumb(bare, "commit-tree", root, "-p", REF, "-m", "hostile names")
    plumb(bare, "update-ref", REF, commit)


def _has(bare, spec: str) -> bool:
    return subprocess.run(["git", "cat-file", "-e", spec], cwd=bare, env=git_env(), capture_output=True).returncode == 0


def _point_ref_at(bare, kind: str) -> None:
    """The remote's memories ref, forced to point at something not a commit."""
    if kind == "blob":
        target = plumb(bare, "hash-object", "-w", "--stdin", data=b"not a commit")
    elif kind == "tree":
        target = plumb(bare, "rev-parse", f"{REF}^{{tree}}")
    else:
        target = plumb(bare, "mktag", data=(f"object {plumb(bare, 'rev-parse', REF)}\ntype commit\ntag evil\n"
                                            "tagger Eve <eve@example.com> 0 +0000\n\nannotated\n").encode())
    plumb(bare, "update-ref", REF, target)


def _cli(clone, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([THATCH, *args], cwd=clone.path, env={**clone.env, "THATCH_MODEL": "fake:64",
                                                                   "THATCH_DAEMON": "0"},
                          capture_output=True, text=True, timeout=120)


def test_a_name_that_is_not_utf8_is_skipped_and_the_rest_syncs(team):
    ann, bob = team(2)
    ann.ok("remember", "Seed", "So the ref exists.")
    ann.sync()
    _with_bad_name(ann.remote)
    for args in (["sync", "status", "--json"], ["sync", "--dry-run", "--json"]):
        result = _cli(bob, *args)
        assert result.returncode in (0, 5) and "Traceback" not in result.stderr, (args, result)
        json.loads(result.stdout)
    result = _cli(bob, "sync", "--json")
    assert result.returncode == 5, result
    skipped = json.loads(result.stdout)["skipped"]
    assert len(skipped) == 2 and all("UTF-8" in item["reason"] for item in skipped), skipped
    assert all("\\x" in item["path"] for item in skipped)
    assert bob.labels() == ["Good one", "Seed"]
    # The bad files stay where they are, and the others' syncs go on.
    ann.ok("remember", "Later", "After the bad names.")
    assert ann.run("sync", "--json").exit_code == 5
    _cli(bob, "sync", "--json")
    assert bob.labels() == ["Good one", "Later", "Seed"]


@pytest.mark.parametrize("kind", ["blob", "tree", "tag"])
def test_a_ref_that_is_not_a_commit_is_reported_and_nothing_breaks(team, kind):
    ann, bob = team(2)
    ann.ok("remember", "Seed", "So the ref exists.")
    ann.sync()
    _point_ref_at(ann.remote, kind)
    bob.ok("remember", "Mine", "Written here.")
    # A plain git fetch, and the import it starts in the background, survive.
    fetched = subprocess.run(["git", "fetch", "-q", "origin"], cwd=bob.path, env=bob.env, capture_output=True,
                             text=True)
    assert fetched.returncode == 0 and "Traceback" not in fetched.stderr, fetched.stderr
    for args in (["sync", "status", "--json"], ["sync", "--dry-run", "--json"]):
        result = _cli(bob, *args)
        assert result.returncode in (0, 5) and "Traceback" not in result.stderr, (args, result)
        assert "error" not in json.loads(result.stdout), (args, result)
    result = _cli(bob, "sync", "--json")
    assert result.returncode == 5, result
    assert json.loads(result.stdout)["skipped"] == [{"path": REF, "reason": f"points at a {kind}, not a commit;"
                                                    " nothing was read from it"}]
    # The push put a commit back: everyone syncs again, and nothing was lost.
    assert plumb(ann.remote, "cat-file", "-t", REF) == "commit"
    ann.sync()
    bob.sync()
    assert ann.labels() == bob.labels() == ["Mine", "Seed"]


FAR = "9999999999999.99999.x"


def test_a_stamp_from_the_far_future_is_refused_and_a_forget_survives(team, tmp_path):
    from .test_limits import _plant, _record

    ann, bob = team(2)
    ann.ok("remember", "Keep", "Shared, then forgotten.")
    ann.sync()
    bob.sync()
    bob.ok("forget", "Keep")
    bob.sync()
    _plant(ann, tmp_path, {records.path_of("keep"): _record("Keep", "Back from the future.", hlc=FAR),
                           records.path_of("future-only"): _record("Future only", "x", hlc=FAR)})
    result = bob.run("sync", "--json")
    assert result.exit_code == 5, result
    reasons = {item["path"].rsplit("/", 1)[1]: item["reason"] for item in result.json()["skipped"]}
    assert "ahead of this machine's clock" in reasons["keep.json"] and "future-only.json" in reasons
    assert bob.memory("Keep") is None and bob.memory("Future only") is None
    # This machine's next stamp is still one every thatch reads.
    bob.ok("remember", "After", "Stamped in the format.")
    bob.sync()
    stamp = json.loads(plumb(ann.remote, "cat-file", "-p", f"{REF}:{records.path_of('after')}"))["hlc"]
    assert hlc.parse(stamp) is not None and not hlc.too_far_ahead(hlc.parse(stamp)), stamp


def test_a_clock_pushed_to_the_end_of_the_format_stays_in_it():
    clock = hlc.Clock("me", hlc.parse(FAR))
    assert not hlc.too_far_ahead(clock.issue(int(time.time() * 1000)))
    at_the_end = hlc.Clock("me")
    at_the_end.last = hlc.parse(FAR)  # as an earlier thatch could have left it in memory
    for _ in range(3):
        assert hlc.parse(str(at_the_end.issue(int(time.time() * 1000)))) is not None
