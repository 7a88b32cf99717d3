"""Editing one memory: `edit` and `remember` in $EDITOR (a fake editor
script; a pty where a terminal matters), `rename`, `archive`/`unarchive`
LABEL, dropping an empty store, and the derived-label cut."""

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from thatch_cli.storage import maintenance
from thatch_cli.storage.memories import MemoryDB

from helpers import BrokenEmbedder, thatch_pty


def open_db(env) -> MemoryDB:
    return MemoryDB.open(Path(env["THATCH_DB"]))


def fake_editor(tmp_path: Path, body: str, *, status: int = 0, name: str = "editor") -> str:
    """An $EDITOR that records the file it was given (to seen.md), then
    writes `body` into it and exits with `status`."""
    script = tmp_path / f"{name}.sh"
    (tmp_path / f"{name}.body").write_text(body)
    script.write_text(f'#!/bin/sh\ncp "$1" {shlex.quote(str(tmp_path / "seen.md"))}\n'
                      f'cat {shlex.quote(str(tmp_path / f"{name}.body"))} > "$1"\nexit {status}\n')
    script.chmod(0o755)
    return f"sh {shlex.quote(str(script))}"  # run through sh -c, as EDITOR="code --wait" would be


@pytest.fixture
def stored(cli):
    cli("remember", "Release process", "Tag, build, upload.", "--store", "s", "--confidence", "6", "--branch", "main")
    return "s"


# -- edit ------------------------------------------------------------------------------------------


def test_edit_opens_the_memory_with_its_label_as_heading(cli, stored, tmp_path, isolated_env):
    editor = fake_editor(tmp_path, "# Release process\n\nTag, build, twine upload.\n")
    db = open_db(isolated_env)
    before = db.get("s", "release-process")
    maintenance.record_verdict(db, "s", "release-process", "other", "distinct", "2026-01-01T00:00:00.000Z")
    result = cli("edit", "release process", "--store", "s", "--json", EDITOR=editor)
    assert (tmp_path / "seen.md").read_text() == "# Release process\n\nTag, build, upload.\n"
    data = json.loads(result.stdout)
    assert result.exit_code == 0 and data["status"] == "updated"
    assert data["memory"]["content"] == "Tag, build, twine upload." and data["memory"]["has_vector"] is True
    after = db.get("s", "release-process", with_vector=True)
    assert after.content == "# Release process\n\nTag, build, twine upload."
    assert (after.branch, after.confidence, after.created_at) == ("main", 6, before.created_at)
    assert after.embedding is not None and after.updated_at == "2026-11-30T12:00:00.123Z"
    assert maintenance.verdict_of(db, "s", "release-process", "other") is None  # new content, new verdicts
    # VISUAL wins over EDITOR, as in git.
    visual = fake_editor(tmp_path, "# Release process\n\nfrom VISUAL\n", name="visual")
    assert cli("edit", "Release process", "s", VISUAL=visual, EDITOR="false").stdout == \
        "Updated 'Release process' in s\n"


def test_edit_renames_through_the_heading(cli, stored, tmp_path, isolated_env):
    editor = fake_editor(tmp_path, "# Releasing a version\n\nTag, build, upload.\n")
    result = cli("edit", "Release process", "--store", "s", EDITOR=editor)
    assert result.stdout == "Updated 'Releasing a version' in s (was 'Release process')\n"
    db = open_db(isolated_env)
    assert db.get("s", "release-process") is None and db.get("s", "releasing-a-version").branch == "main"


def test_edit_without_changes_or_with_nothing_saves_nothing(cli, stored, tmp_path, isolated_env):
    db = open_db(isolated_env)
    before = db.get("s", "release-process")
    same = cli("edit", "Release process", "--store", "s", EDITOR=fake_editor(tmp_path, "# Release process\n\nTag, build, upload.\n"))
    assert same.exit_code == 0 and same.stdout == "No changes; 'Release process' in s left as it was\n"
    empty = cli("edit", "Release process", "--store", "s", EDITOR=fake_editor(tmp_path, "\n\n"))
    assert empty.exit_code == 2 and empty.stderr == "thatch: error: the memory is empty; nothing saved\n"
    failed = cli("edit", "Release process", "--store", "s", EDITOR=fake_editor(tmp_path, "# x\n\ny\n", status=1))
    assert failed.exit_code == 2 and "exited with status 1; nothing saved" in failed.stderr
    assert db.get("s", "release-process") == before
    off_terminal = cli("edit", "Release process", "--store", "s")  # no EDITOR, no terminal: never a blind vi
    assert off_terminal.exit_code == 2 and "set VISUAL or EDITOR" in off_terminal.stderr


def test_a_failed_save_keeps_the_text(cli, stored, tmp_path, isolated_env):
    cli("remember", "Taken", "another memory", "--store", "s")
    editor = fake_editor(tmp_path, "# Taken\n\nmy careful rewrite\n")
    result = cli("edit", "Release process", "--store", "s", EDITOR=editor)
    assert result.exit_code == 4 and len(result.stderr.splitlines()) == 1
    kept = Path(result.stderr.rsplit("your text is kept in ", 1)[1].strip())
    assert kept.read_text() == "# Taken\n\nmy careful rewrite\n" and oct(kept.stat().st_mode)[-3:] == "600"
    kept.unlink()
    assert open_db(isolated_env).get("s", "release-process").content == "# Release process\n\nTag, build, upload."


def test_edit_never_reaches_into_global_unasked(cli, tmp_path):
    cli("remember", "Python style", "black", "--global")
    result = cli("edit", "Python style", EDITOR=fake_editor(tmp_path, "# Python style\n\nruff\n"), THATCH_STORE="proj")
    assert result.exit_code == 3 and "global has one: add --store global" in result.stderr


def test_remember_on_a_terminal_opens_the_editor_only_without_content(tmp_path, isolated_env):
    env = {**os.environ, "THATCH_MODEL": "fake:64", "EDITOR": fake_editor(tmp_path, "# Staging port\n\n5433\n"),
           "THATCH_STORE": "s"}
    # `thatch remember` alone: an empty file; the first heading becomes the label.
    code, output = thatch_pty(["remember", "--json"], env=env, cwd=tmp_path)
    assert "the first heading becomes the label" in (tmp_path / "seen.md").read_text()
    assert "waiting for your editor" in output
    assert code == 0 and '"label": "Staging port"' in output
    assert open_db(isolated_env).get("s", "staging-port").content == "# Staging port\n\n5433"
    # One argument is the content, on a terminal as in a pipe: no editor opens.
    (tmp_path / "seen.md").unlink()
    for args in (["remember", "Use uv for installs", "--json"], ["remember", "CI/CD notes", "--json"]):
        code, output = thatch_pty(args, env=env, cwd=tmp_path)
        assert code == 0 and "waiting for your editor" not in output, output
        assert f'"label": "{args[1]}"' in output and f'"content": "{args[1]}"' in output
        piped = subprocess.run([sys.executable, "-m", "thatch_cli", *args, "--overwrite"], env=env, cwd=tmp_path,
                               capture_output=True, text=True, stdin=subprocess.DEVNULL)
        assert json.loads(piped.stdout)["memory"]["content"] == args[1]
    assert not (tmp_path / "seen.md").exists()


def test_remember_without_content_off_a_terminal_says_how(cli):
    result = cli("remember")
    assert result.exit_code == 2 and result.stderr == (
        "thatch: error: give the content ('-' reads standard input; on a terminal, your editor opens)\n")


# -- rename ----------------------------------------------------------------------------------------


def test_rename_moves_slug_and_verdicts(cli, stored, isolated_env):
    cli("remember", "Other", "something else", "--store", "s")
    db = open_db(isolated_env)
    maintenance.record_verdict(db, "s", "release-process", "other", "supplement", "2026-01-01T00:00:00.000Z")
    result = cli("rename", "Release process", "Releasing", "--store", "s", "--json")
    data = json.loads(result.stdout)
    assert result.exit_code == 0 and data["status"] == "renamed" and data["old_slug"] == "release-process"
    assert data["memory"]["slug"] == "releasing" and data["memory"]["content"] == "Tag, build, upload."
    renamed = db.get("s", "releasing", with_vector=True)
    assert renamed.content == "# Releasing\n\nTag, build, upload." and renamed.embedding is not None
    assert (renamed.branch, renamed.confidence) == ("main", 6)
    assert db.get("s", "release-process") is None
    assert maintenance.verdict_of(db, "s", "releasing", "other") == "supplement"  # the verdict followed
    found = cli("recall", "Releasing", "--store", "s", "-b", "main", "--mode", "lexical", "--json").stdout
    assert [r["slug"] for r in json.loads(found)["results"]] == ["releasing"]  # the keyword index followed
    taken = cli("rename", "Releasing", "other", "--store", "s")
    assert taken.exit_code == 4 and "already exists in s" in taken.stderr
    assert cli("rename", "Releasing", "RELEASING", "--store", "s").exit_code == 0  # same slug, new spelling
    assert db.get("s", "releasing").label == "RELEASING"


def test_rename_without_a_model_drops_the_stale_vector(cli, stored, isolated_env):
    result = cli("rename", "Release process", "Releasing", "--store", "s", embedder=BrokenEmbedder())
    assert result.exit_code == 0 and "without a vector" in result.stderr and "reindex" in result.stderr
    assert open_db(isolated_env).get("s", "releasing", with_vector=True).embedding is None


# -- archive / unarchive one memory --------------------------------------------------------------


def test_archive_and_unarchive_one_memory(cli, stored, isolated_env):
    assert cli("archive", "Release process", "--store", "s").stdout == "Archived 'Release process' in s\n"
    assert open_db(isolated_env).get("s", "release-process").archived
    assert json.loads(cli("recall", "upload", "--store", "s", "--json").stdout)["results"] == []
    again = cli("archive", "release-process", "--store", "s", "--json")
    assert again.exit_code == 0 and json.loads(again.stdout)["changed"] is False
    assert cli("unarchive", "Release process", "--store", "s").stdout == "Restored 'Release process' in s\n"
    assert not open_db(isolated_env).get("s", "release-process").archived
    assert cli("archive", "Release process", "--branch", "main", "--store", "s").exit_code == 2
    assert cli("archive", "--store", "s").exit_code == 2
    assert cli("unarchive", "nope", "--store", "s").exit_code == 3


# -- stores --drop ---------------------------------------------------------------------------------


def test_drop_an_empty_store(cli, isolated_env):
    cli("remember", "a", "one", "--store", "tmp/store")
    full = cli("stores", "--drop", "tmp/store")
    assert full.exit_code == 4 and "still holds 1 memory" in full.stderr
    cli("forget", "a", "tmp/store")
    assert cli("stores", "--drop", "tmp/store").stdout == "Dropped the empty store tmp/store\n"
    assert "tmp/store" not in cli("stores").stdout
    assert cli("stores", "--drop", "tmp/stor").exit_code == 3
    assert cli("stores", "--drop", "global").exit_code == 2


def test_a_store_holding_the_originals_other_rows_is_kept_with_a_reason(cli, isolated_env):
    """The original thatch keeps behaviors (and predictions) per store, with
    a foreign key to stores: dropping the store would fail on the key (or,
    without it, orphan them). thatch refuses in one line and keeps them."""
    import sqlite3

    cli("remember", "a", "one", "--store", "tmp/store")
    cli("forget", "a", "tmp/store")
    with sqlite3.connect(isolated_env["THATCH_DB"]) as conn:
        conn.execute("CREATE TABLE behaviors (id TEXT PRIMARY KEY, store TEXT NOT NULL REFERENCES stores(name),"
                     " statement TEXT NOT NULL)")
        conn.execute("INSERT INTO behaviors VALUES ('b1', 'tmp/store', 'Prefer small commits')")
    result = cli("stores", "--drop", "tmp/store")
    assert result.exit_code == 4 and "Traceback" not in result.output
    assert "1 row of the original thatch (behaviors)" in result.stderr and "FOREIGN KEY" not in result.stderr
    assert "tmp/store" in cli("stores").stdout
    with sqlite3.connect(isolated_env["THATCH_DB"]) as conn:
        assert conn.execute("SELECT count(*) FROM behaviors").fetchone() == (1,)
        conn.execute("DELETE FROM behaviors")
    assert cli("stores", "--drop", "tmp/store").exit_code == 0


# -- derived labels --------------------------------------------------------------------------------


def test_a_long_first_line_is_cut_at_a_word_boundary(cli):
    line = "When the staging database refuses connections after a deploy, restart pgbouncer before anything else"
    data = json.loads(cli("remember", line + "\nmore detail", "--store", "s", "--json").stdout)
    label = data["memory"]["label"]
    assert label == "When the staging database refuses connections after a deploy, restart pgbouncer…"
    assert len(label) <= 81 and line.startswith(label[:-1])
    assert data["memory"]["content"] == line + "\nmore detail"  # nothing of the text is lost


# -- a --store close to an existing one ------------------------------------------------------------


def test_a_store_close_to_an_existing_one_is_refused_off_a_terminal(cli):
    cli("remember", "One", "first", "--store", "acme/widget")
    result = cli("remember", "Two", "second", "--store", "acme/widgt")
    assert result.exit_code == 3
    assert result.stderr == ("thatch: error: no store named 'acme/widgt'; did you mean 'acme/widget'? (nothing saved;"
                             " --create makes a new store of that name)\n")
    data = cli("remember", "Two", "second", "--store", "acme/widgt", "--json").json()["error"]
    assert data["suggestions"] == ["acme/widget"] and data["store"] == "acme/widgt"
    created = cli("remember", "Two", "second", "--store", "acme/widgt", "--create")
    assert created.exit_code == 0 and "created store acme/widgt" in created.stderr
    # A name like no other store's is created as before, and an existing one is just used.
    assert cli("remember", "Three", "third", "--store", "team/notes").exit_code == 0
    assert cli("remember", "Four", "fourth", "--store", "acme/widgt").exit_code == 0


@pytest.mark.parametrize("answer, saved", [("y\n", True), ("\n", False)])
def test_on_a_terminal_a_store_close_to_an_existing_one_is_asked_about(tmp_path, isolated_env, answer, saved):
    env = {**os.environ, "THATCH_MODEL": "fake:64"}
    subprocess.run([sys.executable, "-m", "thatch_cli", "remember", "One", "first", "--store", "acme/widget"],
                   env=env, check=True, capture_output=True)
    code, output = thatch_pty(["remember", "Two", "second", "--store", "acme/widgt"], env=env, cwd=tmp_path,
                              answer=answer)
    assert "there is no store 'acme/widgt'; did you mean 'acme/widget'?" in output and "Create 'acme/widgt'? [y/N]" in output
    assert (code, "Remembered 'Two' in acme/widgt" in output) == ((0, True) if saved else (3, False)), output
    assert (open_db(isolated_env).get("acme/widgt", "two") is not None) == saved


def test_only_a_likely_slip_is_held_back(cli):
    """A name that is merely similar (acme/deploy next to acme/widget) is a new store, saved at once;
    a slip of a letter, a case or separator change, or a bare repository name is held back."""
    cli("remember", "One", "first", "--store", "acme/widget")
    assert cli("remember", "Two", "second", "--store", "acme/deploy").exit_code == 0
    for slip in ("acme/widgt", "Acme/Widget", "widget"):
        result = cli("remember", "Three", "third", "--store", slip)
        assert result.exit_code == 3 and "did you mean 'acme/widget'?" in result.stderr, slip


def test_a_bare_remember_hints_at_the_label_and_saves_without_the_hint(tmp_path, isolated_env):
    """The editor opens on a comment saying the first heading becomes the label; an editor
    that writes below it (as a person does) saves the memory without it, and one that
    leaves only the comment saves nothing."""
    below = tmp_path / "below.sh"
    (tmp_path / "below.body").write_text("# Staging port\n\n5433\n")
    below.write_text(f'#!/bin/sh\ncp "$1" {shlex.quote(str(tmp_path / "opened.md"))}\n'
                     f'cat {shlex.quote(str(tmp_path / "below.body"))} >> "$1"\n')
    env = {**os.environ, "THATCH_MODEL": "fake:64", "EDITOR": f"sh {shlex.quote(str(below))}", "THATCH_STORE": "s"}
    code, output = thatch_pty(["remember", "--json"], env=env, cwd=tmp_path)
    assert code == 0 and '"label": "Staging port"' in output, output
    assert (tmp_path / "opened.md").read_text().startswith("<!-- thatch: the first heading becomes the label")
    assert open_db(isolated_env).get("s", "staging-port").content == "# Staging port\n\n5433"
    code, output = thatch_pty(["remember"], env={**env, "EDITOR": "true"}, cwd=tmp_path)
    assert code == 2 and "the memory is empty; nothing saved" in output, output
