"""The smaller points of sync round two: a mistyped --allow label, the
wording for a forget that lost, the refspec of a remote switched away from,
init's warning said once at a terminal."""

from __future__ import annotations

from helpers import thatch_pty

SPEC = "+refs/thatch/memories*:refs/thatch/remotes/{}/memories*"


def test_a_mistyped_allow_label_is_refused_with_did_you_mean(team):
    ann, = team(1)
    ann.ok("remember", "Deploy token", "token = ghp_" + "a1B2c3D4e5F6g7H8i9J0" * 2)
    refused = ann.run("sync", "--allow", "Deploy tokn")
    assert refused.exit_code == 3 and "did you mean 'Deploy token'?" in refused.stderr, refused
    assert ann.run("sync", "--allow", "Deploy token", "--json").json()["pushed"]["created"] == 1


def test_a_forget_that_lost_is_not_said_to_be_in_history(team):
    ann, bob = team(2)
    ann.ok("remember", "Port", "5432")
    ann.sync(), bob.sync()
    ann.ok("forget", "Port")
    bob.ok("remember", "Port", "5433", "--overwrite")
    bob.sync()
    result = ann.run("sync")
    line = next(line for line in result.stderr.splitlines() if "conflict" in line)
    assert "forget" in line and "undone" in line and "in its history" not in line, line


def test_switching_remotes_and_sync_off_leave_no_refspec_behind(team, tmp_path):
    ann, = team(1)
    ann.git("remote", "add", "backup", str(ann.remote))
    ann.ok("sync", "init", "--remote", "backup", "--yes")
    assert SPEC.format("origin") not in ann.git("config", "--get-all", "remote.origin.fetch")
    assert SPEC.format("backup") in ann.git("config", "--get-all", "remote.backup.fetch")
    ann.ok("sync", "off")
    assert "refs/thatch" not in ann.git("config", "--list")


def test_init_says_who_can_read_once_at_a_terminal(team):
    ann, = team(1, init=False)
    code, screen = thatch_pty(["sync", "init"], env=ann.env, cwd=ann.path, answer="y\n")
    assert code == 0, screen
    assert screen.count("anyone who can fetch from it can read them") == 1, screen


def test_list_shows_whose_a_memory_is_on_a_terminal(team):
    ann, bob = team(2)
    ann.ok("remember", "Shared note", "From ann.")
    ann.sync(), bob.sync()
    bob.ok("remember", "Own note", "Bob's own.")
    code, screen = thatch_pty(["list"], env={**bob.env, "THATCH_MODEL": "fake:64", "THATCH_DAEMON": "0"},
                              cwd=bob.path, cols=160)
    assert code == 0, screen
    row = next(line for line in screen.splitlines() if "Shared note" in line)
    assert "Ann <ann@example.com>" in row, screen


def test_two_machines_without_a_git_identity_get_distinct_authors(team):
    ann, bob = team(2)
    for clone in (ann, bob):
        for key in ("GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "USER",
                    "EMAIL", "LOGNAME"):
            clone.env.pop(key, None)
        clone.git("config", "user.useConfigOnly", "true")  # git knows no identity: `git var` fails
    ann.ok("remember", "From ann", "One.")
    bob.ok("remember", "From bob", "Two.")
    ann.sync(), bob.sync(), ann.sync()
    authors = {ann.memory("From bob")["author"], bob.memory("From ann")["author"]}
    assert len(authors) == 2 and None not in authors, authors
