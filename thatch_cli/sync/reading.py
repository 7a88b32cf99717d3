"""Reading both sides of a sync: the records in a commit of the memories
ref (checked as an import checks its lines; a file that fails is skipped
and reported, never written), and the store's own memories as records, with
what stays here (private, branch-scoped, suspected credentials) set apart."""

from __future__ import annotations

from functools import partial
from pathlib import Path

from ..memory import jsonl
from ..memory.records import SYNCED_FIELDS
from ..storage import sync as table
from ..support import secrets
from ..support.textsafe import one_line
from . import hlc, merge, records
from .records import Record
from .round import CacheEntry, Round
from .tree import Entry, Git, Snapshot

CACHE_FILE = "thatch-sync-cache.json"
CACHE_VERSION = 3


def load_cache(common_dir: Path) -> dict[str, CacheEntry]:
    """blob id -> [slug, label, digest, author, stamp, renamed_to, text_key] of every memory file
    this repository read and found valid before: a blob's id is its
    content, so what was checked once need not be read again. Derived data,
    rebuilt from git when missing or damaged, and when the synced fields
    changed (a digest covers them: an old one would make every memory look
    changed and be sent again)."""
    from ..support.files import read_json_object

    data = read_json_object(common_dir / CACHE_FILE)
    current = data.get("version") == CACHE_VERSION and data.get("fields") == list(SYNCED_FIELDS)
    found = data.get("records") if current else None
    return found if isinstance(found, dict) else {}


def save_cache(common_dir: Path, cache: dict[str, CacheEntry], keep: set[str],
               parsed: dict[str, Record | str]) -> None:
    """Keep the entries of the blobs in the commits just read, with those
    of the files this sync parsed (their digests are computed here, after
    what came in is written, not while it waits to be)."""
    for sha, record in parsed.items():
        if isinstance(record, Record) and sha in keep and sha not in cache:
            cache[sha] = cache_entry(record)
    from ..support.files import write_json_cache

    write_json_cache(common_dir / CACHE_FILE, {"version": CACHE_VERSION, "fields": list(SYNCED_FIELDS),
                                               "records": {sha: cache[sha] for sha in keep if sha in cache}})


def cache_entry(record: Record) -> CacheEntry:
    return [record.slug, record.label, record.digest, record.author, str(record.stamp), record.renamed_to,
            record.text_key]


def read_fields(step: Round, wanted: list[Record], snapshot: Snapshot) -> None:
    """Read the fields of the cached records of `snapshot` in `wanted` in one
    pass (one `git cat-file --batch`), not one by one: a restored database
    over an existing cache takes every memory at once."""
    shas = {r.slug: snapshot.memories[r.slug].sha for r in wanted if r.unread and r.slug in snapshot.memories}
    data = step.git.blobs(shas.values())
    now = step.ctx.now()
    for record in wanted:
        sha = shas.get(record.slug)
        if sha in data:
            record.provide(records.parse(snapshot.memories[record.slug].path, data[sha], now).fields)


def _full(step: Round, entry: Entry) -> Record:
    """The record in a file known to be valid (its fields, when first needed)."""
    data = step.git.blobs([entry.sha]).get(entry.sha, b"")
    return records.parse(entry.path, data, step.ctx.now())


def read_side(step: Round, snapshot: Snapshot, *, trusted: bool) -> dict[str, Record]:
    """slug -> record of every memory file of `snapshot` that passes the
    checks; failures go to the outcome's `skipped` unless `trusted` (a
    commit this database merged before). Files known from an earlier read
    (the cache) are not read again."""
    memo, cache, seen = step.shared.parsed, step.shared.cache, step.shared.seen
    paths: dict[str, str] = {}  # blob id -> the first path holding it, as the loop below meets them
    for e in snapshot.memories.values():
        if e.sha not in memo and e.sha not in cache and e.size <= records.MAX_RECORD_BYTES:
            paths.setdefault(e.sha, e.path)
    now = step.ctx.now()
    for sha, data in step.git.each_blob(paths):  # each file checked while git reads the next
        try:
            memo[sha] = records.parse(paths[sha], data, now)
        except jsonl.Invalid as exc:
            memo[sha] = str(exc)
    found: dict[str, Record] = {}
    for slug, entry in snapshot.memories.items():
        seen.add(entry.sha)
        got = memo.get(entry.sha)
        known = cache.get(entry.sha) if got is None else None
        stamp = hlc.parse(known[4]) if known is not None else None
        if known is not None and known[0] == slug and stamp is not None:
            got = records.FAR_AHEAD if hlc.too_far_ahead(stamp, hlc.millis_of(now)) else Record(
                slug, known[1], None, known[3], stamp, digest=known[2], load=partial(_full, step, entry),
                renamed_to=known[5], text_key=known[6])
        elif got is None:  # not read above
            if entry.size > records.MAX_RECORD_BYTES:
                got = f"{entry.size} bytes; the limit is {records.MAX_RECORD_BYTES}"
            else:
                got = "its object is missing"
        memo[entry.sha] = got
        if isinstance(got, Record) and not trusted and got.text_key in step.purged:
            step.outcome.skipped.append({"path": one_line(entry.path), "reason": "its text was purged from the"
                                         " remote (thatch sync purge); not taken"})
        elif isinstance(got, Record):
            found[slug] = got
        elif not trusted:
            step.outcome.skipped.append({"path": one_line(entry.path), "reason": got})
    if not trusted:
        step.outcome.skipped += [{"path": one_line(p), "reason": "not where a memory's file belongs"}
                                 for p in snapshot.misplaced]
        step.outcome.skipped += [{"path": one_line(p), "reason": "its name is not UTF-8; left on the remote unread"}
                                 for p in snapshot.undecodable]
    return found


def local_state(step: Round, store: str, last: dict[str, Record], remote: dict[str, Record],
                clock: hlc.Clock) -> tuple[dict[str, tuple], set[str], dict[str, Record]]:
    """(slug -> the row's state as read, slugs kept out of the merge, slug ->
    this database's record of it)."""
    conn = step.db.conn
    rows = {row["slug"]: row for row in table.rows(conn, store)}
    from ..storage import anchors

    for anchor in anchors.export_rows(step.db, [store]):
        if anchor["slug"] in rows:
            rows[anchor["slug"]].setdefault("anchors", []).append(records.synced_anchor(anchor))
    state = {slug: tuple(r[name] for name in SYNCED_FIELDS) for slug, r in rows.items()}
    excluded = table.private_slugs(conn, store)
    if not step.ctx.setting("sync.branches"):
        excluded |= {slug for slug, r in rows.items() if r["branch"] and slug not in last}

    now = hlc.millis_of(step.ctx.now())

    def changed_at(slug: str) -> int:
        row = rows[slug]
        flagged = table.flagged_at(conn, store, slug, row["content"], row["label"])
        return max(hlc.millis_of(row["updated_at"]), hlc.millis_of(flagged)) or now

    def left(slug: str) -> tuple[str | None, int | None]:
        moved = table.moved_from(conn, store, slug)
        if moved is not None and moved[0] in rows:
            return rows[moved[0]]["label"], hlc.millis_of(moved[1]) or None
        return None, hlc.millis_of(table.deleted_at(conn, store, slug)) or None

    # Only what was forgotten since this database first synced: a memory
    # forgotten before never reached the team, and a teammate's of the same
    # label is another memory.
    since = hlc.millis_of(table.state(conn, store).get("since"))
    shown = {slug: r.label for slug, r in remote.items() if since and not r.deleted and slug not in rows
             and slug not in last and hlc.millis_of(table.deleted_at(conn, store, slug)) >= since}
    local = merge.local_records(rows, last, excluded, clock, step.git.identity, changed_at, left, now, shown)
    scanner = None
    for slug, record in list(local.items()):
        fields = record.fields  # None: a tombstone
        if fields is None or slug in step.shared.allowed or record.same(last.get(slug)):
            continue
        if scanner is None:
            scanner = secrets.load(step.ctx.setting("sync.secret_rules") or None)
        findings = scanner.scan(record.label + "\n" + fields["content"])
        if findings:
            excluded.add(slug)
            del local[slug]
            step.outcome.held.append({"slug": slug, "label": secrets.redact(record.label, findings),
                                      "reason": "looks like it holds a"
                                      " credential; not shared (thatch sync --allow LABEL shares it anyway)",
                                      "rules": [f.to_json() for f in findings]})
    return state, excluded, local


def purged_keys(git: Git, snapshot: Snapshot, known: str | None) -> set[str]:
    """The text keys purged so far: the remote's purged.json and what this
    database remembers (`known`, from its state)."""
    keys = records.parse_purged(known.encode()) if known else set()
    entry = snapshot.others.get(records.PURGED_PATH)
    if entry is not None and entry.size <= records.MAX_PURGED * 50:
        keys |= records.parse_purged(git.blobs([entry.sha]).get(entry.sha, b""))
    return keys


def hold_purged(step: Round, tree: dict[str, Record]) -> None:
    """Take out of the next commit every version whose text was purged: it
    stays here, reported as held, and is never published again."""
    for slug, record in list(tree.items()):
        if record.text_key in step.purged:
            del tree[slug]
            step.outcome.held.append({"slug": slug, "label": record.label, "reason": "its text was purged from"
                                      " the remote (thatch sync purge); not shared again", "rules": []})
