"""Anchors travel with thatch sync: a memory anchored in one clone arrives
anchored in the other, its drift checked there; a change of anchors alone is
a change; a file from the remote with a bad anchor is skipped, not written."""

from __future__ import annotations

import json


def test_anchors_travel_between_two_clones(team):
    ann, bob = team(2)
    ann.push_file("config.py", "".join(f"key_{i} = {i}\n" for i in range(1, 31)))
    ann.ok("remember", "Config keys", "unknown keys are ignored", "--file", "config.py:5-14")
    ann.sync()
    bob.git("pull", "-q", "origin", "main")
    bob.sync()
    (anchor,) = bob.memory("Config keys")["anchors"]
    assert (anchor["path"], anchor["start"], anchor["end"]) == ("config.py", 5, 14)
    assert anchor["drift"]["state"] == "unchanged"
    (bob.path / "config.py").write_text("".join(f"key_{i} = {i * (i != 7)}\n" for i in range(1, 31)))
    assert bob.memory("Config keys")["anchors"][0]["drift"]["changed_lines"] == 1

    # Re-anchoring alone is a change the other clone receives.
    ann.ok("anchor", "Config keys", "config.py:20-25")
    ann.sync()
    bob.sync()
    assert [(a["start"], a["end"]) for a in bob.memory("Config keys")["anchors"]] == [(5, 14), (20, 25)]
    ann.ok("unanchor", "Config keys")
    ann.sync()
    bob.sync()
    assert bob.memory("Config keys")["anchors"] == []


def test_a_memory_without_anchors_syncs_as_before(team):
    ann, bob = team(2)
    ann.ok("remember", "Plain", "no code here")
    ann.sync()
    bob.sync()
    shown = bob.memory("Plain")
    assert shown is not None and shown["anchors"] == []
    files = [line for line in ann.git("ls-tree", "-r", "--name-only", "refs/thatch/memories").splitlines()
             if line.startswith("m/")]
    (path,) = files
    record = json.loads(ann.git("show", f"refs/thatch/memories:{path}"))
    assert "anchors" not in record


def test_a_file_with_a_bad_anchor_is_skipped_not_written(team, tmp_path):
    from tests.sync.test_limits import _plant, _record
    from thatch_cli.sync import records

    ann, bob = team(2)
    ann.ok("remember", "Seed", "So the ref exists.")
    ann.sync()
    good = {"path": "src/a.py", "start_line": 1, "end_line": 2, "blob": "0" * 40, "anchored_at": "2026-01-01T00:00:00Z"}
    _plant(ann, tmp_path, {
        records.path_of("escapes"): _record("Escapes", "x", anchors=[{**good, "path": "../../etc/passwd"}]),
        records.path_of("not-a-list"): _record("Not a list", "x", anchors="src/a.py"),
        records.path_of("anchored"): _record("Anchored", "x", anchors=[good]),
    })
    report = bob.sync()
    reasons = {item["path"].rsplit("/", 1)[1]: item["reason"] for item in report["skipped"]}
    assert "repository's top level" in reasons["escapes.json"] and "a list" in reasons["not-a-list.json"]
    assert bob.labels() == ["Anchored", "Seed"]
    assert [a["path"] for a in bob.memory("Anchored")["anchors"]] == ["src/a.py"]
