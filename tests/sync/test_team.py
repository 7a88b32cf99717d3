"""thatch sync between clones of one bare repository on local disk: every
change travels, nothing is lost whatever the remote's ref goes through."""

from __future__ import annotations

import threading

from helpers import git


def test_create_overwrite_forget_and_rename_travel(team):
    ann, bob = team(2)
    ann.ok("remember", "Release process", "Tag, build the wheel, twine upload.")
    ann.ok("remember", "Staging port", "The staging database listens on 5433.")
    preview = ann.sync("--dry-run")
    assert preview["status"] == "dry run" and preview["pushed"]["created"] == 2
    assert ann.ok("sync", "status", "--json").json()["to_push"]["created"] == 2
    assert ann.sync()["pushed"]["created"] == 2
    assert ann.ok("sync", "status", "--json").json()["last_sync"]["status"] == "synced"
    pulled = bob.sync()
    assert pulled["pulled"]["created"] == 2 and pulled["status"] == "pulled"
    assert bob.labels() == ["Release process", "Staging port"]
    shared = bob.memory("Release process")
    assert shared["author"] == "Ann <ann@example.com>" and shared["unreviewed"] is True

    bob.ok("remember", "Release process", "Tag, build, then upload with twine; announce it.", "--overwrite")
    bob.ok("forget", "Staging port")
    bob.ok("rename", "Release process", "Release steps")
    assert bob.sync()["pushed"] == {"created": 1, "updated": 0, "deleted": 2}
    assert ann.sync()["pulled"] == {"created": 1, "updated": 0, "deleted": 2}
    assert ann.labels() == ["Release steps"]
    assert ann.memory("Release steps")["content"] == "Tag, build, then upload with twine; announce it."
    assert ann.memory("Release steps")["author"] == "Bob <bob@example.com>"
    # What a teammate's sync replaced or forgot here stays in this machine's history.
    assert ann.ok("history", "Staging port", "--json").json()["forgotten"] is True
    # A second sync on each side has nothing left to do.
    assert ann.sync()["status"] == bob.sync()["status"] == "up to date"


def test_private_global_and_branch_scoped_memories_stay_here(team):
    ann, bob = team(2)
    ann.ok("remember", "Shared note", "Everyone may read this.")
    ann.ok("remember", "My aliases", "alias gs='git status'", "--private")
    ann.ok("remember", "Editor", "vim", "--global")
    ann.ok("remember", "WIP plan", "Half-done refactor.", "--branch", "feature")
    ann.ok("remember", "Later private", "Was shareable.")
    ann.ok("private", "Later private")
    assert ann.sync()["pushed"]["created"] == 1
    bob.sync()
    assert bob.labels() == ["Shared note"]
    assert bob.run("list", "--global", "--json").json()["memories"] == []
    # A private memory stays private when it is saved again, and the remote never sees its label.
    ann.ok("remember", "My aliases", "alias gl='git log'", "--overwrite")
    ann.sync()
    assert "my-aliases" not in git(ann.path, "ls-tree", "-r", "--name-only", "refs/thatch/memories")
    # Sharing it again is one command; branch-scoped memories with the setting.
    ann.ok("share", "Later private")
    assert ann.sync(THATCH_SYNC_BRANCHES="1")["pushed"]["created"] == 2
    bob.sync()
    assert bob.labels() == ["Later private", "Shared note", "WIP plan"]


def test_concurrent_edits_keep_both_versions(team):
    ann, bob = team(2)
    ann.ok("remember", "Deploy", "Deploy with make deploy.")
    ann.sync(), bob.sync()
    ann.ok("remember", "Deploy", "Deploy with make deploy ENV=prod.", "--overwrite")
    bob.ok("remember", "Deploy", "Deploy through the CI pipeline only.", "--overwrite")  # the later edit
    ann.sync()
    report = bob.sync()
    [conflict] = report["conflicts"]
    assert conflict["winner"] == "local" and conflict["remote"]["author"] == "Ann <ann@example.com>"
    ann.sync()
    for clone in (ann, bob):
        assert clone.memory("Deploy")["content"] == "Deploy through the CI pipeline only."
        texts = [v["memory"]["content"] for v in clone.ok("history", "Deploy", "--json").json()["versions"]]
        assert "Deploy with make deploy ENV=prod." in texts
    # restore-memory brings the losing version back, as a new change that syncs like any other.
    bob.ok("restore-memory", "Deploy")
    assert bob.memory("Deploy")["content"] == "Deploy with make deploy ENV=prod."


def test_a_forced_push_and_a_deleted_ref_lose_nothing(team, tmp_path):
    ann, bob = team(2)
    for n in range(3):
        ann.ok("remember", f"Note {n}", f"Text {n}.")
    ann.sync(), bob.sync()
    # Someone force-pushes a small orphan tree holding one unrelated memory.
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(ann.remote), str(other))
    blob = '{"author":"Eve <eve@example.com>","content":"# Orphan\\n\\nFrom elsewhere.","created_at":' \
           '"2026-01-01T00:00:00.000Z","hlc":"1767225600000.00000.e","label":"Orphan","slug":"orphan",' \
           '"updated_at":"2026-01-01T00:00:00.000Z"}\n'
    from thatch_cli.sync.records import path_of

    (other / "m" / path_of("orphan").split("/")[1]).mkdir(parents=True)
    (other / path_of("orphan")).write_text(blob)
    git(other, "checkout", "-q", "--orphan", "tmp")
    git(other, "add", "m")
    git(other, "commit", "-qm", "orphan")
    git(other, "push", "-qf", "origin", "HEAD:refs/thatch/memories")
    report = bob.sync()
    assert report["pulled"]["created"] == 1 and report["pushed"]["created"] == 3
    ann.sync()
    assert ann.labels() == bob.labels() == ["Note 0", "Note 1", "Note 2", "Orphan"]
    # The remote ref deleted outright: the next sync pushes the union back.
    git(ann.path, "push", "-q", "origin", ":refs/thatch/memories")
    assert bob.sync()["pushed"]["created"] == 4
    files = git(ann.path, "ls-remote", "origin", "refs/thatch/memories")
    assert files and ann.sync()["status"] in ("up to date", "pulled")
    assert ann.labels() == ["Note 0", "Note 1", "Note 2", "Orphan"]


def test_writers_racing_for_the_lease_converge(team):
    clones = team(4)
    for clone in clones:
        for n in range(3):
            clone.ok("remember", f"{clone.name} note {n}", f"Written by {clone.name}.")
    results: dict[str, dict] = {}

    def go(clone):
        results[clone.name] = clone.sync()

    threads = [threading.Thread(target=go, args=(clone,)) for clone in clones]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(r["status"] in ("synced", "deferred") for r in results.values()), results
    assert sum(r["rounds"] for r in results.values()) > 4  # the lease lost at least once
    for clone in clones:
        clone.sync()
    for clone in clones:
        clone.sync()
        assert len(clone.labels()) == 12


def test_a_remote_without_the_ref_and_plain_git_fetch(team):
    _ann, bob = team(2)
    assert bob.git("fetch") == ""  # the wildcard refspec is harmless while the ref is missing
    assert bob.sync()["status"] == "up to date"
    assert "thatch" not in bob.git("branch", "-a")


def test_review_lists_and_accepts_incoming_memories(team):
    ann, bob = team(2)
    ann.ok("remember", "Cache keys", "Keys are sha256 of the request.")
    ann.sync()
    assert bob.sync()["unreviewed"] == 1
    listing = bob.ok("sync", "--review", "--json").json()
    assert [m["label"] for m in listing["incoming"]] == ["Cache keys"]
    assert listing["incoming"][0]["author"] == "Ann <ann@example.com>"
    assert bob.ok("sync", "--review", "--accept", "Cache keys", "--json").json()["accepted"] == 1
    assert bob.memory("Cache keys")["unreviewed"] is False
    # A memory a teammate shares after this machine edited it is new again.
    assert bob.ok("sync", "--review", "--json").json()["incoming"] == []


def test_purge_rewrites_the_ref_and_teammates_forget_it(team):
    ann, bob = team(2)
    ann.ok("remember", "Old key", "It was hunter2 on staging.")
    ann.ok("remember", "Keep me", "Useful.")
    ann.sync(), bob.sync()
    purged = ann.ok("sync", "purge", "Old key", "--json").json()
    assert purged["kept_private"] is True and "keep a copy" in " ".join(purged["notices"])
    history = git(ann.path, "rev-list", "--count", "refs/thatch/remotes/origin/memories")
    assert history == "1"  # rewritten without history
    bob.sync()
    assert bob.labels() == ["Keep me"]
    assert ann.labels() == ["Keep me", "Old key"] and ann.memory("Old key")["private"] is True


def test_offline_is_a_retryable_exit_and_quiet_in_the_background(team):
    ann, = team(1)
    ann.git("remote", "set-url", "origin", str(ann.remote) + "-gone")
    result = ann.run("sync")
    assert result.exit_code == 7 and result.stderr.startswith("thatch: error: offline:")
    assert ann.run("sync", "--json").json()["error"]["retryable"] is True
    background = ann.run("sync", "--background")
    assert background.exit_code == 0 and len(background.stderr.splitlines()) == 1


def test_a_reader_without_push_rights_gets_pull_only(team):
    ann, bob = team(2)
    ann.ok("remember", "Shared", "Read me.")
    ann.sync()
    bob.ok("remember", "Mine", "Local.")
    hook = ann.remote / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'permission denied: read-only for bob' >&2\nexit 1\n")
    hook.chmod(0o755)
    result = bob.run("sync")
    assert result.exit_code == 0, result
    assert [line for line in result.stderr.splitlines() if "pull-only" in line]
    assert bob.labels() == ["Mine", "Shared"]


def test_init_says_who_can_read_and_asks(team):
    ann, = team(1, init=False)
    refused = ann.run("sync", "init")
    assert refused.exit_code == 2 and "anyone who can fetch from it can read them" in refused.stderr
    assert "thatch" not in ann.git("config", "--list")
    assert ann.run("sync").exit_code == 3  # not set up: nothing is shared
    from thatch_cli.sync.setup import init

    asked: list[str] = []
    declined = init(ann.ctx(), None, yes=False, ask=lambda question: asked.append(question) or False)
    assert declined.status == "declined" and "anyone who can fetch from it" in asked[0]
    assert "thatch" not in ann.git("config", "--list")
    ann.ok("sync", "init", "--yes")
    assert ann.ok("sync", "init", "--yes", "--json").json()["status"] == "unchanged"
    specs = ann.git("config", "--get-all", "remote.origin.fetch").splitlines()
    assert specs.count("+refs/thatch/memories*:refs/thatch/remotes/origin/memories*") == 1
    ann.ok("sync", "off")
    assert ann.git("config", "--get-all", "remote.origin.fetch").splitlines() == ["+refs/heads/*:refs/remotes/origin/*"]
