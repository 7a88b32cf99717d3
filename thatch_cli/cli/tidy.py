"""`thatch hygiene | duplicates`: reports on a store's upkeep (operations in
ops/hygiene.py and ops/dedup.py). Both only report; nothing is changed."""

from __future__ import annotations

from typing import Annotated, Optional

from ..ops.context import Context
from ..ops.dedup import DEFAULT_PAIR_LIMIT
from ..ops.hygiene import DEFAULT_STALE_DAYS
from ..support import validate
from ..support.errors import EXIT_ATTENTION, EXIT_OK
from ..support.textsafe import shell_word
from .declare import Json, Option, Store, command
from .output import Output
from .render import Column, plural, section, table

MEMBERS_SHOWN = 10


@command("hygiene", examples=["thatch hygiene", "thatch hygiene --stale-days 30 --global", "thatch hygiene --json"],
         json="store, clean, exit_code, checked_at, stale_days, unreadable (memories that cannot be read),"
              " duplicates (score, a, b: briefs),"
              " duplicate_check (threshold, compared, skipped_other_model, without_vector, spaces, calibrated,"
              " pair_count, truncated),"
              " stale (brief plus last_recalled_at, last_activity, idle_days),"
              " drifted (brief plus anchor: path, start, end, commit, blob, fingerprint, anchored_at, drift),"
              " orphans (checked, skipped_reason, repository, branches: branch, deleted_at, memories)")
def hygiene(
    ctx: Context, out: Output, *,
    store: Store = None,
    stale_days: Annotated[int, Option("--stale-days", metavar="DAYS",
                                      help="Call a memory stale after this many days without update or recall (0-36500).")
                          ] = DEFAULT_STALE_DAYS,
    as_json: Json = False,
) -> int:
    """Report near-duplicates, stale memories, memories of deleted branches and memories whose anchored code changed or is gone (never deletes).

    Exits 0 when the store is clean and 5 when something needs attention."""
    from ..ops.hygiene import report as build

    report = build(ctx, store, stale_days=stale_days)
    code = EXIT_OK if report.clean else EXIT_ATTENTION
    if out.json_mode:
        out.json(report.to_json(code))
        return code
    scan, orphans = report.duplicates, report.orphans
    if scan.pairs:
        section(out, f"Near-duplicates (score ≥ {report.threshold:g})")
        _pairs(out, scan.pairs)
        out.line("  Merge them (remember --overwrite, then forget), or keep both:"
                 f" thatch dedup keep {shell_word(scan.pairs[0].a.label)} {shell_word(scan.pairs[0].b.label)}")
    if report.stale:
        section(out, f"Stale: no update or recall for {report.stale_days} days")
        if out.rich:
            table(out, [Column("label", "label", give=1, least=16), Column("branch", "branch", give=1),
                        Column("last activity", "dim", whole=True), Column("idle days", whole=True, right=True)],
                  [(s.memory.label, s.memory.branch or "", s.last_activity[:10], str(s.idle_days))
                   for s in report.stale])
        else:
            for s in report.stale:
                branch = f" [{s.memory.branch}]" if s.memory.branch else ""
                out.line(f"  {s.memory.label}{branch}  (idle {s.idle_days} days)")
        example = shell_word(report.stale[0].memory.label)
        out.line(f"  Keep what is history as record (thatch archive {example}), forget what is wrong"
                 f" (thatch forget {example}).")
    if orphans.branches:
        section(out, "Orphaned branches: memories scoped to branches that no longer exist")
        for b in orphans.branches:
            gone = f", deleted {b.deleted_at[:10]}" if b.deleted_at else ""
            out.line(f"  {b.branch} ({plural(len(b.memories), 'memory', 'memories')}{gone}):"
                     f" {', '.join(m.label for m in b.memories)}")
        branch = shell_word(orphans.branches[0].branch)
        out.line(f"  Move them (thatch rescope --from {branch} --to BRANCH | --unscoped)"
                 f" or keep them as record (thatch archive --branch {branch}).")
    if report.drifted:
        from ..support.textsafe import visible

        section(out, "Drifted: the code these memories describe changed or is gone")
        for m, _row, drift in report.drifted:
            label = shell_word(m.label)
            fix = (f"thatch archive {label}" if drift.state == "gone"
                   else f"thatch anchor --refresh {label}")
            out.line(f"  {visible(m.label, keep='')}: {drift.summary()}")
            out.line(f"    re-read it, then: {fix}  (or edit it, or thatch forget {label})")
    if not orphans.checked:
        out.notice(f"orphaned-branch check skipped: {orphans.skipped_reason}")
    if scan.truncated:
        out.notice(f"showing the best {len(scan.pairs)} of {scan.pair_count} near-duplicate pairs;"
                   " `thatch duplicates` groups them into clusters")
    _without_vector_notice(out, scan.without_vector)
    _uncalibrated_notice(out, scan)
    facts = [plural(scan.pair_count, "near-duplicate pair", "near-duplicate pairs"),
             plural(len(report.stale), "stale memory", "stale memories")]
    if orphans.checked:
        facts.append(plural(len(orphans.branches), "orphaned branch", "orphaned branches"))
    if report.drifted:
        facts.append(plural(len(report.drifted), "drifted anchor", "drifted anchors"))
    if report.unreadable:
        facts.append(plural(report.unreadable, "memory that cannot be read", "memories that cannot be read"))
    verdict = "clean" if report.clean else "needs attention"
    out.line(("\n" if not report.clean else "") + f"{report.store}: {verdict} ({', '.join(facts)})")
    return code


@command("duplicates", examples=["thatch duplicates", "thatch duplicates --threshold 0.75 --limit 20"],
         json="store, threshold, model, limit, compared, skipped_other_model, without_vector, calibrated, pair_count,"
              " cluster_count, truncated, clusters (size, best_score, pair_count, members: slug and label,"
              " pairs: a, b, score)")
def duplicates(
    ctx: Context, out: Output, *,
    store: Store = None,
    threshold: Annotated[Optional[float], Option("--threshold", "-t", metavar="SCORE", show_default=False,
                                                 help="Report pairs scoring at least this (0-1, the same for every"
                                                      " model; above 0, at most 1; default: setting"
                                                      " duplicates.threshold, 0.85).")] = None,
    limit: Annotated[int, Option("--limit", "-n", metavar="N",
                                 help=f"Report the best N pairs (1-{validate.MAX_PAIR_LIMIT});"
                                      " counts still cover every pair.")] = DEFAULT_PAIR_LIMIT,
    as_json: Json = False,
) -> None:
    """List clusters of near-duplicate memories in a store (never deletes; exits 0).

    Compares the stored vectors of live memories pairwise, without loading
    the model, and only vectors of the configured model (setting model);
    memories with another model's vector or none are counted, not compared.
    Pairs with a dedup verdict are left out. A cluster is a connected group:
    A~B and B~C put A, B and C in one cluster even when A and C are not
    similar. Only the best --limit pairs are listed, with the clusters that
    hold them; every listed cluster names all its members and counts all
    its pairs, and the totals count every pair and cluster, so memory stays
    bounded even when every memory matches every other."""
    from ..ops.dedup import duplicates as scan_store

    report = scan_store(ctx, store, threshold=threshold, limit=limit)
    if out.json_mode:
        out.json(report.to_json())
        return
    scan = report.scan
    cut = f"score ≥ {report.threshold:g}, {plural(scan.compared, 'memory', 'memories')} compared"
    for number, cluster in enumerate(scan.clusters, 1):
        section(out, f"Cluster {number}: {plural(len(cluster.members), 'memory', 'memories')},"
                     f" {plural(cluster.pair_count, 'pair', 'pairs')}, best {cluster.best_score:.2f}")
        _pairs(out, cluster.pairs)
        paired = {m.slug for p in cluster.pairs for m in (p.a, p.b)}
        others = [m.label for m in cluster.members if m.slug not in paired]
        if others:
            more = f" and {len(others) - MEMBERS_SHOWN} more" if len(others) > MEMBERS_SHOWN else ""
            out.line(f"  also in this cluster: {', '.join(others[:MEMBERS_SHOWN])}{more}")
    if scan.pairs:
        first = scan.pairs[0]
        out.line("Merge a cluster into one memory (remember --overwrite, then forget the rest), or record a"
                 f" verdict: thatch dedup mark {shell_word(first.a.label)} {shell_word(first.b.label)}"
                 f" --status {'|'.join(validate.VERDICTS)}")
        out.line(f"\n{report.store}: {plural(scan.pair_count, 'near-duplicate pair', 'near-duplicate pairs')}"
                 f" in {plural(scan.cluster_count, 'cluster', 'clusters')} ({cut})")
    else:
        out.line(f"No near-duplicates in {report.store} ({cut}).")
    if scan.truncated:
        out.notice(f"showing the best {len(scan.pairs)} of {scan.pair_count} pairs"
                   f" ({len(scan.clusters)} of {scan.cluster_count} clusters); raise --limit or --threshold")
    if scan.skipped_other_model:
        out.notice(f"{plural(scan.skipped_other_model, 'live memory has', 'live memories have')} a vector of"
                   f" another model than {report.model} and {'was' if scan.skipped_other_model == 1 else 'were'}"
                   " not compared; run `thatch reindex`")
    _without_vector_notice(out, scan.without_vector)
    _uncalibrated_notice(out, scan)


def _uncalibrated_notice(out: Output, scan) -> None:
    if not scan.calibrated and scan.compared:
        out.notice("the model's scores could not be calibrated (it did not load), so raw cosines were compared")


def _without_vector_notice(out: Output, count: int) -> None:
    if count:
        out.notice(f"{plural(count, 'live memory has', 'live memories have')} no vector and"
                   " could not be checked for duplicates; run `thatch reindex`")


def _pairs(out: Output, pairs) -> None:
    if out.rich:
        table(out, [Column("score", "score", whole=True), Column("memory", "label", give=1, least=16),
                    Column("memory", "label", give=1, least=16)],
              [(f"{p.score:.2f}", p.a.label, p.b.label) for p in pairs])
        return
    for p in pairs:
        out.line(f"  {p.score:.2f}  {p.a.label}  <->  {p.b.label}")
