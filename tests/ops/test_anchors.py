"""Anchors and drift through the real entry point, against real git
repositories: each class of drift (unchanged, moved, changed, gone) from a
real commit, a rebase, a linked worktree, a detached HEAD and a shallow clone."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from thatch_cli.location import drift

from helpers import git

LABEL = "Config parsing"
LINES = [f"value_{i} = {i}" for i in range(1, 101)]


@pytest.fixture
def repo(git_repo) -> Path:
    path = git_repo("widget", remote="git@github.com:acme/widget.git")
    (path / "src").mkdir()
    write(path / "src" / "config.py", LINES)
    git(path, "add", "src")
    git(path, "commit", "-qm", "config")
    return path


def write(path: Path, lines: list[str]) -> None:
    path.write_text("\n".join(lines) + "\n")


def commit(repo: Path, message: str = "change") -> None:
    git(repo, "commit", "-qam", message)


def remember(cli, repo: Path, *files: str, label: str = LABEL) -> dict:
    args = [arg for f in files for arg in ("--file", f)]
    result = cli("remember", label, "parse_config ignores unknown keys", *args, "--json", cwd=repo)
    assert result.exit_code == 0, result.output
    return result.json()


def anchors(cli, cwd: Path, label: str = LABEL) -> list[dict]:
    result = cli("show", label, "--json", cwd=cwd)
    assert result.exit_code == 0, result.output
    return result.json()["memory"]["anchors"]


def state(cli, cwd: Path, label: str = LABEL) -> dict:
    (found,) = anchors(cli, cwd, label)
    return found["drift"]


def test_remember_file_records_path_range_commit_blob_and_fingerprint(cli, repo):
    head = git(repo, "rev-parse", "HEAD")
    saved = remember(cli, repo / "src", "config.py:40-75")  # a path from a subdirectory
    (anchor,) = saved["memory"]["anchors"]
    assert anchor["path"] == "src/config.py" and (anchor["start"], anchor["end"]) == (40, 75)
    assert anchor["commit"] == head
    assert anchor["blob"] == git(repo, "rev-parse", "HEAD:src/config.py")
    assert anchor["fingerprint"] == drift.fingerprint(drift.line_hashes("\n".join(LINES[39:75]).encode()))
    assert state(cli, repo)["state"] == "unchanged"
    text = cli("show", LABEL, cwd=repo).stdout
    assert f"anchored src/config.py:40-75 @{head[:7]}" in text


def test_a_commit_editing_other_lines_leaves_the_anchor_unchanged(cli, repo):
    remember(cli, repo, "src/config.py:40-75")
    write(repo / "src" / "config.py", LINES[:89] + ["value_90 = 'ninety'"] + LINES[90:])
    commit(repo)
    assert state(cli, repo)["state"] == "unchanged"


def test_lines_inserted_above_or_the_block_moved_elsewhere_are_moved(cli, repo):
    remember(cli, repo, "src/config.py:40-75")
    write(repo / "src" / "config.py", ["import os", "import sys"] + LINES)
    commit(repo)
    moved = state(cli, repo)
    assert (moved["state"], moved["start"], moved["end"]) == ("moved", 42, 77)
    block = LINES[39:75]
    write(repo / "src" / "config.py", [line for line in LINES if line not in block] + block)
    commit(repo, "move the block to the end")
    moved = state(cli, repo)
    assert (moved["state"], moved["start"], moved["end"]) == ("moved", 65, 100)
    assert "moved since" in moved["summary"] and "now src/config.py:65-100" in moved["summary"]


def test_a_commit_editing_anchored_lines_is_changed_with_a_count_in_recall_and_hygiene(cli, repo):
    first = git(repo, "rev-parse", "--short=7", "HEAD")
    remember(cli, repo, "src/config.py:40-75")
    edited = [line.replace("= 5", "= 500") for line in LINES]  # value_5 and value_50..59
    write(repo / "src" / "config.py", edited)
    commit(repo)
    changed = state(cli, repo)
    assert (changed["state"], changed["changed_lines"], changed["lines"]) == ("changed", 10, 36)
    expected = f"the code it describes changed since {first}: 10 of 36 lines (src/config.py:40-75)"
    assert changed["summary"] == expected
    recalled = cli("recall", "parse config keys", cwd=repo)
    assert f"[{expected}]" in recalled.stdout, recalled.output
    result = cli("recall", "parse config keys", "--json", cwd=repo).json()["results"][0]
    assert result["drift"] == [expected] and result["anchors"][0]["drift"]["state"] == "changed"
    report = cli("hygiene", cwd=repo)
    assert report.exit_code == 5 and expected in report.stdout
    assert "thatch anchor --refresh 'Config parsing'" in report.stdout and "1 drifted anchor" in report.stdout
    data = cli("hygiene", "--json", cwd=repo).json()
    assert data["drifted"][0]["anchor"]["drift"]["changed_lines"] == 10
    refreshed = cli("anchor", "--refresh", LABEL, "--json", cwd=repo)
    assert refreshed.exit_code == 0 and refreshed.json()["changed"] == 1
    assert state(cli, repo)["state"] == "unchanged"
    assert cli("hygiene", cwd=repo).exit_code == 0


def test_a_working_tree_edit_counts_before_it_is_committed(cli, repo):
    remember(cli, repo, "src/config.py:1-10")
    write(repo / "src" / "config.py", ["changed"] + LINES[1:])
    assert (state(cli, repo)["state"], state(cli, repo)["changed_lines"]) == ("changed", 1)


def test_git_mv_is_followed_as_a_move_even_with_edits(cli, repo):
    remember(cli, repo, "src/config.py:40-75")
    git(repo, "mv", "src/config.py", "src/settings.py")
    commit(repo, "rename")
    moved = state(cli, repo)
    assert (moved["state"], moved["path"]) == ("moved", "src/settings.py")
    assert [r["label"] for r in cli("recall", "--file", "src/settings.py", "--json", cwd=repo).json()["results"]] \
        == [LABEL]
    write(repo / "src" / "settings.py", LINES + ["extra = 1"])
    commit(repo, "edit after the rename")
    moved = state(cli, repo)
    assert (moved["state"], moved["path"], moved["start"]) == ("moved", "src/settings.py", 40)
    write(repo / "src" / "settings.py", [f"# {i}" for i in range(60)] + LINES[39:75])
    commit(repo, "rewrite most of it")
    # Too different for rename detection against the anchor's commit: gone.
    assert state(cli, repo)["state"] in ("gone", "moved")


def test_a_deleted_file_is_gone_and_hygiene_offers_archive(cli, repo):
    remember(cli, repo, "src/config.py:40-75")
    git(repo, "rm", "-q", "src/config.py")
    commit(repo, "delete")
    gone = state(cli, repo)
    assert gone["state"] == "gone" and "is gone since" in gone["summary"]
    report = cli("hygiene", cwd=repo)
    assert "thatch archive 'Config parsing'" in report.stdout


def test_anchors_survive_rename_edit_and_overwrite_and_go_with_forget(cli, repo):
    remember(cli, repo, "src/config.py:40-75", "README")
    assert cli("rename", LABEL, "Config keys", cwd=repo).exit_code == 0
    assert [a["path"] for a in anchors(cli, repo, "Config keys")] == ["README", "src/config.py"]
    assert cli("remember", "Config keys", "new text", "--overwrite", cwd=repo).exit_code == 0
    assert len(anchors(cli, repo, "Config keys")) == 2
    assert cli("remember", "Config keys", "newer", "--overwrite", "--file", "README", cwd=repo).exit_code == 0
    assert [a["path"] for a in anchors(cli, repo, "Config keys")] == ["README"]
    unanchored = cli("unanchor", "Config keys", "README", "--json", cwd=repo).json()
    assert unanchored["changed"] == 1 and unanchored["anchors"] == []
    assert cli("anchor", "Config keys", "src/config.py:1-3", cwd=repo).exit_code == 0
    assert cli("forget", "Config keys", cwd=repo).exit_code == 0
    remember(cli, repo, label="Config keys")
    assert anchors(cli, repo, "Config keys") == []


def test_files_outside_git_or_past_the_end_are_refused_and_nothing_is_saved(cli, repo, tmp_path):
    outside = tmp_path / "notes.txt"
    outside.write_text("x\n")
    result = cli("remember", LABEL, "text", "--file", str(outside), cwd=repo)
    assert result.exit_code == 2 and "outside any git checkout" in result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.output
    assert cli("show", LABEL, cwd=repo).exit_code == 3
    past = cli("remember", LABEL, "text", "--file", "src/config.py:90-120", "--json", cwd=repo)
    assert past.exit_code == 2 and "100 lines" in past.json()["error"]["message"]
    assert cli("remember", LABEL, "text", "--file", "src/config.py:9-3", cwd=repo).exit_code == 2
    assert cli("remember", LABEL, "text", "--file", "src/missing.py", cwd=repo).exit_code == 2
    assert cli("show", LABEL, cwd=repo).exit_code == 3


def test_recall_file_finds_memories_anchored_to_a_file_or_directory(cli, repo):
    remember(cli, repo, "src/config.py:40-75")
    remember(cli, repo, "README", label="Readme note")
    by_dir = cli("recall", "--file", "src", "--json", cwd=repo).json()
    assert by_dir["mode"] == "anchored" and [r["label"] for r in by_dir["results"]] == [LABEL]
    assert [r["label"] for r in cli("recall", "--file", ".", "--json", cwd=repo).json()["results"]] \
        == [LABEL, "Readme note"]
    ranked = cli("recall", "parse config", "--file", "README", "--json", "--floor", "0", cwd=repo).json()
    assert [r["label"] for r in ranked["results"]] == ["Readme note"]
    assert cli("recall", cwd=repo).exit_code == 2


def test_a_rebase_keeps_anchors_checkable(cli, repo):
    git(repo, "checkout", "-qb", "feature")
    write(repo / "src" / "config.py", LINES + ["feature = True"])
    commit(repo, "feature")
    remember(cli, repo, "src/config.py:40-75")
    git(repo, "checkout", "-q", "main")
    write(repo / "src" / "config.py", ["import os"] + LINES)
    commit(repo, "main moves on")
    git(repo, "checkout", "-q", "feature")
    git(repo, "rebase", "-q", "main")
    moved = state(cli, repo)
    assert (moved["state"], moved["start"]) == ("moved", 41)


def test_a_linked_worktree_and_a_detached_head(cli, repo, tmp_path):
    remember(cli, repo, "src/config.py:40-75")
    other = tmp_path / "other"
    git(repo, "worktree", "add", "-q", "--detach", str(other))
    assert state(cli, other)["state"] == "unchanged"
    write(other / "src" / "config.py", LINES[:45] + ["changed"] + LINES[46:])
    assert state(cli, other)["changed_lines"] == 1
    assert state(cli, repo)["state"] == "unchanged"  # each checkout is compared on its own
    saved = remember(cli, other, "src/config.py:1-2", label="Detached")
    assert saved["memory"]["anchors"][0]["commit"] == git(other, "rev-parse", "HEAD")


def test_a_shallow_clone_says_what_history_cannot_tell(cli, repo, tmp_path):
    remember(cli, repo, "src/config.py:40-75")
    git(repo, "mv", "src/config.py", "src/settings.py")
    write(repo / "src" / "settings.py", LINES + ["more = 1"])
    git(repo, "add", "-A")
    commit(repo, "rename and edit")
    clone = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{repo}", str(clone)], check=True,
                   capture_output=True)
    git(clone, "remote", "set-url", "origin", "git@github.com:acme/widget.git")  # the same store
    gone = state(cli, clone)
    assert gone["state"] == "gone" and "shallow clone" in gone["note"]
    assert state(cli, repo)["path"] == "src/settings.py"  # the full history follows the rename


def test_anchor_and_unanchor_say_what_they_did(cli, repo):
    remember(cli, repo)
    added = cli("anchor", LABEL, "src/config.py:5", "README", cwd=repo)
    assert added.exit_code == 0 and "2 anchors; 2 in all" in added.stdout
    assert "src/config.py:5-5" in added.stdout
    assert cli("anchor", LABEL, "--refresh", "README", cwd=repo).exit_code == 2
    removed = cli("unanchor", LABEL, cwd=repo)
    assert removed.exit_code == 0 and "2 anchors; 0 in all" in removed.stdout
    none = cli("anchor", "--refresh", LABEL, cwd=repo)
    assert none.exit_code == 3


def test_the_index_reader_agrees_with_git(repo):
    for version in ("2", "4"):
        git(repo, "update-index", "--index-version", version)
        entries, _stamp = drift.read_index(str(repo / ".git"))
        listed = {line.split("\t")[1]: line.split()[1] for line in git(repo, "ls-files", "-s").splitlines()}
        assert {path: entry[0] for path, entry in entries.items()} == listed


def test_the_original_schema_file_gains_the_table_additively(cli, repo, isolated_env):
    remember(cli, repo, "README")
    import sqlite3

    conn = sqlite3.connect(isolated_env["THATCH_DB"])
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    conn.close()
    assert "thatch_cli_anchors" in tables and "entries" in tables
    assert json.loads(cli("show", LABEL, "--json", cwd=repo).stdout)["memory"]["anchors"][0]["path"] == "README"


def test_export_and_import_carry_anchors_and_refuse_a_path_that_leaves_the_repository(cli, repo, tmp_path):
    remember(cli, repo, "src/config.py:40-75", "README")
    exported = tmp_path / "export.jsonl"
    assert cli("export", "--output", str(exported), cwd=repo).exit_code == 0
    records = [json.loads(line) for line in exported.read_text().splitlines()]
    anchored = [r for r in records if r.get("_record") == "anchor"]
    assert [(r["path"], r["start_line"], r["end_line"]) for r in anchored] == [("README", 0, 0),
                                                                               ("src/config.py", 40, 75)]
    assert cli("forget", LABEL, cwd=repo).exit_code == 0
    evil = {**anchored[0], "path": "../outside"}
    exported.write_text(exported.read_text() + json.dumps(evil) + "\n")
    result = cli("import", str(exported), "--json", cwd=repo)
    data = result.json()
    assert data["anchors"] == 2 and data["error_count"] == 1 and "repository's top level" in data["errors"][0]["message"]
    assert [a["path"] for a in anchors(cli, repo)] == ["README", "src/config.py"]
    assert anchors(cli, repo)[1]["drift"]["state"] == "unchanged"


def test_the_original_writing_with_its_own_sql_keeps_the_anchors(cli, repo, isolated_env):
    """The original's overwrite (INSERT OR REPLACE, no delete trigger fires) and
    update keep a memory's anchors; its delete takes them with the memory."""
    import sqlite3

    remember(cli, repo, "README")
    slug = cli("show", LABEL, "--json", cwd=repo).json()["memory"]["slug"]
    conn = sqlite3.connect(isolated_env["THATCH_DB"])
    conn.execute("INSERT OR REPLACE INTO entries (slug, store, label, content, created_at, updated_at)"
                 " VALUES (?, 'acme/widget', ?, ?, '2026-03-01T00:00:00.000Z', '2026-03-01T00:00:00.000Z')",
                 (slug, LABEL, f"# {LABEL}\n\nrewritten by the original"))
    conn.execute("UPDATE entries SET content = ? WHERE slug = ?", (f"# {LABEL}\n\nagain", slug))
    conn.commit()
    assert [a["path"] for a in anchors(cli, repo)] == ["README"]
    conn.execute("DELETE FROM entries WHERE slug = ?", (slug,))
    conn.commit()
    assert conn.execute("SELECT count(*) FROM thatch_cli_anchors").fetchone()[0] == 0
    conn.close()
