"""Tags travel with thatch sync because they are declared synced
(memory/fields.py): set in one clone, they arrive in the other, a change of
tags alone is a change, and a file whose tags are not tags is skipped."""

from __future__ import annotations

import json


def test_tags_travel_between_two_clones(team):
    ann, bob = team(2)
    ann.ok("remember", "Deploy steps", "ship it with the release workflow", "--tag", "ci", "--tag", "Release")
    ann.ok("remember", "Editor", "vim keybindings")
    ann.sync()
    bob.sync()
    assert bob.memory("Deploy steps")["tags"] == ["ci", "release"]
    listed = bob.ok("list", "--tag", "release", "--json").json()["memories"]
    assert [m["label"] for m in listed] == ["Deploy steps"]

    # A change of tags alone is a change the other clone receives, either way.
    bob.ok("untag", "Deploy steps", "ci")
    bob.ok("tag", "Editor", "tools")
    bob.sync()
    ann.sync()
    assert ann.memory("Deploy steps")["tags"] == ["release"]
    assert ann.memory("Editor")["tags"] == ["tools"]
    # The file carries them as stored: one text, sorted and unique.
    files = [line for line in bob.git("ls-tree", "-r", "--name-only", "refs/thatch/memories").splitlines()
             if line.startswith("m/")]
    records = [json.loads(bob.git("show", f"refs/thatch/memories:{path}")) for path in files]
    assert sorted(r.get("tags") or "" for r in records) == [",release,", ",tools,"]


def test_a_file_whose_tags_are_not_tags_is_skipped_not_written(team, tmp_path):
    from tests.sync.test_limits import _plant, _record
    from thatch_cli.sync import records

    ann, bob = team(2)
    ann.ok("remember", "Seed", "So the ref exists.")
    ann.sync()
    _plant(ann, tmp_path, {
        records.path_of("bad-tags"): _record("Bad tags", "x", tags=",a\u200bb,"),
        records.path_of("good-tags"): _record("Good tags", "x", tags=",Ok,fine,"),
    })
    report = bob.sync()
    reasons = {item["path"].rsplit("/", 1)[1]: item["reason"] for item in report["skipped"]}
    assert "holds ','" in reasons["bad-tags.json"]
    assert bob.labels() == ["Good tags", "Seed"]
    assert bob.memory("Good tags")["tags"] == ["fine", "ok"]
