"""`thatch list --all-stores` and `--limit`: every store's memories newest first, and the newest N."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest


@pytest.fixture
def three_stores(cli, make_ctx):
    """Five memories in three stores, one a minute apart (oldest first)."""
    start = datetime(2026, 11, 30, 12, 0, tzinfo=timezone.utc)
    for n, store in enumerate(["acme/widget", "global", "acme/widget", "team/notes", "global"]):
        ctx = make_ctx(clock=lambda n=n: start + timedelta(minutes=n))
        assert cli("remember", f"Note {n}", f"body {n}", "--store", store, ctx=ctx).exit_code == 0
    return cli


def test_all_stores_lists_every_store_newest_first(three_stores):
    result = three_stores("list", "--all-stores", "--json")
    data = result.json()
    assert data["store"] is None and data["total"] == 5
    assert [(m["store"], m["label"]) for m in data["memories"]] == [
        ("global", "Note 4"), ("team/notes", "Note 3"), ("acme/widget", "Note 2"), ("global", "Note 1"),
        ("acme/widget", "Note 0")]
    piped = three_stores("list", "-a").stdout.splitlines()
    assert [line.split("\t")[:2] for line in piped][:2] == [["global", "Note 4"], ["team/notes", "Note 3"]]


def test_limit_keeps_the_newest_and_says_how_many_there_are(three_stores):
    result = three_stores("list", "--all-stores", "--limit", "2")
    assert [line.split("\t")[1] for line in result.stdout.splitlines()] == ["Note 4", "Note 3"]
    assert "the 2 newest of 5 memories (--limit)" in result.stderr
    one_store = three_stores("list", "acme/widget", "-n", "1", "--json").json()
    assert [m["label"] for m in one_store["memories"]] == ["Note 2"] and one_store["total"] == 2
    everything = three_stores("list", "acme/widget", "--limit", "5")
    assert len(everything.stdout.splitlines()) == 2 and everything.stderr == ""


@pytest.mark.parametrize("args, message", [
    (["--all-stores", "--store", "global"], "use either --store or --all-stores"),
    (["--limit", "0"], "greater than or equal to 1"),
])
def test_bad_combinations_are_usage_errors(three_stores, args, message):
    result = three_stores("list", *args)
    assert result.exit_code == 2 and message in result.stderr
