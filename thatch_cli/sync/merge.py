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

from . import hlc, records
from .records import Record


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

    def pulled(self) -> dict[str, int]:
        counts = {"created": 0, "updated": 0, "deleted": 0}
        for record, before in self.apply:
            counts["deleted" if record.deleted else "updated" if before is not None else "created"] += 1
        return counts


def local_records(rows: Mapping[str, Mapping[str, Any]], last: Mapping[str, Record], excluded: set[str],
                  clock: hlc.Clock, me: str | None, forgotten_at: Callable[[str], int]) -> dict[str, Record]:
    """This database's version of each memory it knows: a row as it is now
    (with the last synced stamp when unchanged since, a new one otherwise),
    or a tombstone for a memory synced before and forgotten here."""
    found: dict[str, Record] = {}
    for slug in sorted(set(rows) | set(last)):
        if slug in excluded:
            continue
        row, previous = rows.get(slug), last.get(slug)
        if row is not None:
            record = records.from_row(row, me, hlc.ZERO)
            if record.same(previous):
                record.author, record.stamp = previous.author, previous.stamp
            else:
                record.stamp = clock.issue(hlc.millis_of(row["updated_at"]))
        elif previous is not None and not previous.deleted:
            record = records.tombstone(slug, previous.label, me, clock.issue(forgotten_at(slug)))
        elif previous is not None:
            record = previous
        else:
            continue
        found[slug] = record
    return found


def merge(local: Mapping[str, Record], base: Mapping[str, Record], remote: Mapping[str, Record],
          rows: Mapping[str, Any], excluded: set[str], clock: hlc.Clock) -> Plan:
    """Decide every memory (see the module's rules). `rows` maps a slug to
    the state its row was read in (None: no row here)."""
    plan = Plan()
    for slug in sorted(set(local) | set(remote) | excluded):
        mine, theirs, common = local.get(slug), remote.get(slug), base.get(slug)
        remote_changed = theirs is not None and not theirs.same(common)
        if slug in excluded:
            if remote_changed:
                plan.held.append(slug)
            continue
        local_changed = mine is not None and not mine.same(common)
        if local_changed:
            plan.local_changes[slug] = mine
        chosen = theirs if theirs is not None else mine
        if local_changed and remote_changed and not mine.same(theirs):
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
        if chosen is not None and chosen is not theirs and not chosen.identical(theirs):
            plan.tree[slug] = chosen
    for record in remote.values():
        clock.see(record.stamp)
    return plan
