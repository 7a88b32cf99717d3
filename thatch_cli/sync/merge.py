"""The merge, per memory, three-way against the merge base of the last
synced commit and the remote's tip (git's commit graph gives it; none after
a forced push or a deleted ref, and then the same rules apply with an empty
base, so the union survives).

For each memory:
- only one side changed it since the base: that side's version is taken;
- both changed it to the same thing: nothing to do;
- both changed it differently: the later hybrid-logical stamp wins, the
  other version is kept in thatch's history (restore-memory brings it back)
  and the conflict is reported;
- a tombstone is a change like any other; a file missing from one side is
  not (absence is never a deletion).

Local changes are stamped here, before the remote's stamps are taken into
the clock, so that a conflict compares when each edit was made. Memories
held back (private, branch-scoped and never shared, a suspected secret) take
part in neither direction. Pure: no git, no SQL.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..support.slugs import slugify
from . import hlc, records
from .records import Record

ROW_OF_LOCAL = object()  # stands for "the row as the merge read it" until merge() has the rows


class Conflict:
    __slots__ = ("label", "local", "remote", "slug", "winner")

    def __init__(self, slug: str, label: str, winner: str, local: Record, remote: Record) -> None:
        self.slug, self.label, self.winner, self.local, self.remote = slug, label, winner, local, remote

    def to_json(self) -> dict[str, Any]:
        def side(record: Record) -> dict[str, Any]:
            return {"author": record.author, "hlc": str(record.stamp), "deleted": record.deleted}

        return {"slug": self.slug, "label": self.label, "winner": self.winner, "local": side(self.local),
                "remote": side(self.remote)}


class Plan:
    """What a merge decided: rows to write here (`apply`, with the state
    each was read in), remote versions that lost (`losers`, for the
    history), files for the next commit (`tree`, only where they differ
    from the remote's), conflicts, and remote changes not taken (`held`)."""

    def __init__(self) -> None:
        self.apply: list[tuple[Record, Any]] = []
        self.losers: list[Record] = []
        self.tree: dict[str, Record] = {}
        self.conflicts: list[Conflict] = []
        self.held: list[str] = []
        self.local_changes: dict[str, Record] = {}
        self.followers: set[str] = set()

    def pulled(self) -> dict[str, int]:
        counts = {"created": 0, "updated": 0, "deleted": 0}
        for record, before in self.apply:
            counts["deleted" if record.deleted else "updated" if before is not None else "created"] += 1
        return counts


def local_records(rows: Mapping[str, Mapping[str, Any]], last: Mapping[str, Record], excluded: set[str],
                  clock: hlc.Clock, me: Callable[[], str | None], changed_at: Callable[[str], int],
                  left: Callable[[str], tuple[str | None, int | None]], now: int,
                  shown: Mapping[str, str] | None = None) -> dict[str, Record]:
    """This database's version of each memory it knows: a row as it is now
    (with the last synced stamp when unchanged since, else stamped with when
    it changed: `changed_at`), or a tombstone for a memory synced before
    and gone from here since (`left`: the label it was renamed to, None when
    forgotten, and when; None: unknown, then `now`). A memory the remote
    `shows` that this database forgot is a tombstone too, even when the last
    synced commit is lost (a deleted ref, pruned and collected): a forget
    made here is never dropped. Stamps are issued in the order the changes
    were made, so a sync never makes an earlier change look later. `me`
    (who commits here) is asked only when something changed."""
    found: dict[str, Record] = {}
    pending: list[tuple[int, str, Record]] = []
    shown = shown or {}
    for slug in sorted(set(rows) | set(last) | set(shown)):
        if slug in excluded:
            continue
        row, previous = rows.get(slug), last.get(slug)
        if row is not None:
            record = records.from_row(row, None, hlc.ZERO)
            if previous is not None and record.same(previous):
                record.author, record.stamp = previous.author, previous.stamp
            else:
                pending.append((changed_at(slug), slug, record))
        elif previous is None or not previous.deleted:
            renamed_to, at = left(slug)
            if previous is None and at is None:
                continue  # never here, or not known to have been: the remote's is simply new
            if renamed_to is not None and slugify(renamed_to) in excluded:
                renamed_to = None  # moved out of what is shared: the remote never learns its new label
            label = previous.label if previous is not None else shown[slug]
            record = records.tombstone(slug, label, None, hlc.ZERO, renamed_to)
            pending.append((now if at is None else at, slug, record))
        else:
            record = previous
        found[slug] = record
    for at, _slug, record in sorted(pending, key=lambda item: (item[0], item[1])):
        record.author, record.stamp = me(), clock.issue(at)
    return found


def _follow_renames(local: dict[str, Record], base: Mapping[str, Record], remote: Mapping[str, Record],
                    plan: Plan) -> set[str]:
    """A change made after a rename on the other side follows the memory to
    its new label: the old label keeps the rename's tombstone, the change
    lands on the new one (`local` is changed to say so). The slugs settled
    here (the merge leaves them alone)."""
    settled: set[str] = set()
    for slug in sorted(set(local) & set(remote)):
        mine, theirs = local[slug], remote[slug]
        for stone, live, stone_is_mine in ((theirs, mine, False), (mine, theirs, True)):
            if stone.renamed_to is None or live.deleted or live.same(base.get(slug)) or live.stamp < stone.stamp:
                continue
            follower = records.moved(live, stone.renamed_to)
            if follower.slug == slug:
                continue
            there = local.get(follower.slug)
            if there is None or there.stamp < follower.stamp:
                local[follower.slug] = follower
                plan.followers.add(follower.slug)
            settled.add(slug)
            if stone_is_mine:
                if not stone.identical(theirs):
                    plan.tree[slug] = stone
            else:
                plan.apply.append((theirs, ROW_OF_LOCAL))
    return settled


def merge(local: Mapping[str, Record], base: Mapping[str, Record], remote: Mapping[str, Record],
          rows: Mapping[str, Any], excluded: set[str], clock: hlc.Clock) -> Plan:
    """Decide every memory (see the module's rules). `rows` maps a slug to
    the state its row was read in (None: no row here)."""
    plan = Plan()
    local = dict(local)
    settled = _follow_renames(local, base, remote, plan)
    plan.apply = [(record, rows.get(record.slug) if before is ROW_OF_LOCAL else before)
                  for record, before in plan.apply]
    for slug in sorted(set(local) | set(remote) | excluded):
        if slug in settled:
            continue
        mine, theirs, common = local.get(slug), remote.get(slug), base.get(slug)
        remote_changed = theirs is not None and not theirs.same(common)
        if slug in excluded:
            if remote_changed:
                plan.held.append(slug)
            continue
        local_changed = mine is not None and not mine.same(common)
        if mine is not None and local_changed:
            plan.local_changes[slug] = mine
        chosen: Record | None = theirs if theirs is not None else mine
        if mine is not None and theirs is not None and local_changed and remote_changed and not mine.same(theirs):
            winner = max(mine, theirs, key=lambda r: r.stamp)
            plan.conflicts.append(Conflict(slug, (theirs if winner is theirs else mine).label,
                                           "remote" if winner is theirs else "local", mine, theirs))
            chosen = winner
            if winner is mine and not theirs.deleted:
                plan.losers.append(theirs)
        elif local_changed and not remote_changed:
            chosen = mine
        if chosen is theirs and theirs is not None and not theirs.same(mine) and not (theirs.deleted and mine is None):
            plan.apply.append((theirs, rows.get(slug)))
        elif chosen is mine and mine is not None and slug in plan.followers:  # made here by the merge: written like an incoming one
            plan.apply.append((mine, rows.get(slug)))
        if chosen is not None and chosen is not theirs and not chosen.identical(theirs):
            plan.tree[slug] = chosen
    for record in remote.values():
        clock.see(record.stamp)
    return plan
