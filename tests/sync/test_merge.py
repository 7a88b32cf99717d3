"""The merge rules and the hybrid logical clock, without git."""

from __future__ import annotations

from thatch_cli.sync import hlc, merge, records


def _row(label: str, content: str, updated: str = "2026-01-01T00:00:00.000Z") -> dict:
    from thatch_cli.support.slugs import slugify

    return {"slug": slugify(label), "label": label, "content": f"# {label}\n\n{content}", "branch": None,
            "confidence": None, "archived": 0, "created_at": updated, "updated_at": updated}


def _rec(label: str, content: str, stamp: hlc.Stamp, author: str = "Ann") -> records.Record:
    return records.from_row(_row(label, content), author, stamp)


def test_a_clock_running_ahead_wins_only_until_it_is_seen():
    ahead = hlc.Clock("fast")
    future = ahead.issue(hlc.millis_of("2031-01-01T00:00:00.000Z"))
    mine = hlc.Clock("slow")
    assert mine.issue(hlc.millis_of("2026-01-01T00:00:00.000Z")) < future  # before seeing it: it wins
    mine.see(future)
    assert mine.issue(hlc.millis_of("2026-01-02T00:00:00.000Z")) > future  # after: every later edit wins
    assert hlc.parse(str(future)) == future and hlc.parse("2031-01-01") is None


def test_one_side_changed_takes_that_side_and_absence_deletes_nothing():
    base_stamp = hlc.Stamp(1, 0, "a")
    common = _rec("Note", "v1", base_stamp)
    clock = hlc.Clock("me", base_stamp)
    rows = {"note": _row("Note", "v1"), "mine": _row("Mine", "only here")}
    local = merge.local_records(rows, {"note": common}, set(), clock, lambda: "Me", lambda slug: 0, lambda slug: (None, 0), 0)
    assert local["note"].stamp == base_stamp  # unchanged since the last sync: its old stamp
    theirs = _rec("Note", "v2", hlc.Stamp(5, 0, "b"), "Bob")
    plan = merge.merge(local, {"note": common}, {"note": theirs}, {"note": ("state",)}, set(), clock)
    assert [r for r, _ in plan.apply] == [theirs] and set(plan.tree) == {"mine"} and not plan.conflicts
    # The remote lacking a memory never forgets it here; it is pushed back instead.
    plan = merge.merge(local, {"note": common}, {}, {}, set(), clock)
    assert plan.apply == [] and set(plan.tree) == {"note", "mine"}


def test_both_changed_the_later_stamp_wins_and_the_loser_is_kept():
    common = _rec("Note", "v1", hlc.Stamp(1, 0, "a"))
    mine = _rec("Note", "mine", hlc.Stamp(9, 0, "me"))
    theirs = _rec("Note", "theirs", hlc.Stamp(5, 0, "b"), "Bob")
    plan = merge.merge({"note": mine}, {"note": common}, {"note": theirs}, {}, set(), hlc.Clock("me"))
    assert plan.tree == {"note": mine} and plan.losers == [theirs] and plan.conflicts[0].winner == "local"
    stone = records.tombstone("note", "Note", "Bob", hlc.Stamp(12, 0, "b"))
    plan = merge.merge({"note": mine}, {"note": common}, {"note": stone}, {"note": ("s",)}, set(), hlc.Clock("me"))
    assert plan.apply == [(stone, ("s",))] and plan.losers == []
    # With no base (a forced push), identical content is no conflict at all.
    same = _rec("Note", "mine", hlc.Stamp(3, 0, "b"), "Bob")
    assert not merge.merge({"note": mine}, {}, {"note": same}, {}, set(), hlc.Clock("me")).conflicts


def test_held_back_memories_take_part_in_neither_direction():
    theirs = _rec("Note", "theirs", hlc.Stamp(5, 0, "b"))
    plan = merge.merge({}, {}, {"note": theirs}, {"note": ("s",)}, {"note"}, hlc.Clock("me"))
    assert plan.held == ["note"] and plan.apply == [] and plan.tree == {}
