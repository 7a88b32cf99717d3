"""How hygiene, duplicates, rescope, archive, dedup and completion results look: stable
JSON payloads (keys documented in README), and the same facts for people."""

from __future__ import annotations

import shlex

from .hygiene import BranchChange, DuplicateReport, HygieneReport, Verdict
from .lifecycle import DUPLICATE_THRESHOLD, VERDICTS
from .models import Memory
from .output import Output
from .render import esc, table, memory_brief


def _plural(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


def _q(text: str) -> str:
    return shlex.quote(text)


# -- hygiene -------------------------------------------------------------------------


def hygiene_payload(report: HygieneReport, exit_code: int) -> dict:
    scan, orphans = report.duplicates, report.orphans
    return {
        "store": report.store,
        "clean": report.clean,
        "exit_code": exit_code,
        "checked_at": report.checked_at,
        "stale_days": report.stale_days,
        "duplicates": [{"score": round(p.score, 4), "a": memory_brief(p.a), "b": memory_brief(p.b)}
                       for p in scan.pairs],
        "duplicate_check": {"threshold": DUPLICATE_THRESHOLD, "compared": scan.compared,
                            "without_vector": scan.without_vector, "spaces": scan.spaces,
                            "pair_count": scan.pair_count, "truncated": scan.truncated},
        "stale": [{**memory_brief(s.memory), "last_recalled_at": s.memory.last_recalled_at,
                   "last_activity": s.last_activity, "idle_days": s.idle_days} for s in report.stale],
        "orphans": {
            "checked": orphans.checked,
            "skipped_reason": orphans.skipped_reason,
            "repository": orphans.repository,
            "branches": [{"branch": b.branch, "deleted_at": b.deleted_at,
                          "memories": [memory_brief(m) for m in b.memories]} for b in orphans.branches],
        },
    }


def hygiene(out: Output, report: HygieneReport, exit_code: int) -> None:
    if out.json_mode:
        out.json(hygiene_payload(report, exit_code))
        return
    scan, orphans = report.duplicates, report.orphans
    if scan.pairs:
        _section(out, f"Near-duplicates (cosine ≥ {DUPLICATE_THRESHOLD})")
        _pairs(out, scan.pairs)
        out.line("  Merge them (remember --overwrite, then forget), or keep both:"
                 f" thatch dedup keep {_q(scan.pairs[0].a.label)} {_q(scan.pairs[0].b.label)}")
    if report.stale:
        _section(out, f"Stale: no update or recall for {report.stale_days} days")
        if out.rich:
            table(out, ("label", "branch", "last activity", "idle days"),
                   [(esc(s.memory.label), esc(s.memory.branch or ""), s.last_activity[:10], str(s.idle_days))
                    for s in report.stale])
        else:
            for s in report.stale:
                branch = f" [{s.memory.branch}]" if s.memory.branch else ""
                out.line(f"  {s.memory.label}{branch}  (idle {s.idle_days} days)")
        out.line("  Archive what is history (remember --overwrite --archived) and forget what is wrong.")
    if orphans.branches:
        _section(out, "Orphaned branches: memories scoped to branches that no longer exist")
        for b in orphans.branches:
            gone = f", deleted {b.deleted_at[:10]}" if b.deleted_at else ""
            out.line(f"  {b.branch} ({_plural(len(b.memories), 'memory', 'memories')}{gone}):"
                     f" {', '.join(m.label for m in b.memories)}")
        branch = _q(orphans.branches[0].branch)
        out.line(f"  Move them (thatch rescope --from {branch} --to BRANCH | --unscoped)"
                 f" or keep them as record (thatch archive --branch {branch}).")
    if not orphans.checked:
        out.notice(f"orphaned-branch check skipped: {orphans.skipped_reason}")
    if scan.truncated:
        out.notice(f"showing the best {len(scan.pairs)} of {scan.pair_count} near-duplicate pairs;"
                   " `thatch duplicates` groups them into clusters")
    _without_vector_notice(out, scan.without_vector)
    facts = [_plural(scan.pair_count, "near-duplicate pair", "near-duplicate pairs"),
             _plural(len(report.stale), "stale memory", "stale memories")]
    if orphans.checked:
        facts.append(_plural(len(orphans.branches), "orphaned branch", "orphaned branches"))
    verdict = "clean" if report.clean else "needs attention"
    out.line(("\n" if not report.clean else "") + f"{report.store}: {verdict} ({', '.join(facts)})")


def _without_vector_notice(out: Output, count: int) -> None:
    if count:
        out.notice(f"{_plural(count, 'live memory has', 'live memories have')} no vector and"
                   " could not be checked for duplicates; run `thatch reindex`")


def _pairs(out: Output, pairs) -> None:
    if out.rich:
        table(out, ("score", "memory", "memory"), [(f"{p.score:.2f}", esc(p.a.label), esc(p.b.label)) for p in pairs])
        return
    for p in pairs:
        out.line(f"  {p.score:.2f}  {p.a.label}  <->  {p.b.label}")


def _section(out: Output, title: str) -> None:
    if out.rich:
        out.console.print(f"[bold]{esc(title)}[/]")
    else:
        out.line(title)


# -- duplicates ------------------------------------------------------------------------

MEMBERS_SHOWN = 10


def _ref(memory: Memory) -> dict:
    return {"slug": memory.slug, "label": memory.label}


def duplicates_payload(report: DuplicateReport) -> dict:
    scan = report.scan
    return {
        "store": report.store,
        "threshold": report.threshold,
        "model": report.model,
        "limit": report.limit,
        "compared": scan.compared,
        "skipped_other_model": scan.skipped_other_model,
        "without_vector": scan.without_vector,
        "pair_count": scan.pair_count,
        "cluster_count": scan.cluster_count,
        "truncated": scan.truncated,
        "clusters": [{
            "size": len(c.members),
            "best_score": round(c.best_score, 4),
            "pair_count": c.pair_count,
            "members": [_ref(m) for m in c.members],
            "pairs": [{"a": _ref(p.a), "b": _ref(p.b), "score": round(p.score, 4)} for p in c.pairs],
        } for c in scan.clusters],
    }


def duplicates(out: Output, report: DuplicateReport) -> None:
    if out.json_mode:
        out.json(duplicates_payload(report))
        return
    scan = report.scan
    cut = f"cosine ≥ {report.threshold:g}, {_plural(scan.compared, 'memory', 'memories')} compared"
    for number, cluster in enumerate(scan.clusters, 1):
        _section(out, f"Cluster {number}: {_plural(len(cluster.members), 'memory', 'memories')},"
                      f" {_plural(cluster.pair_count, 'pair', 'pairs')}, best {cluster.best_score:.2f}")
        _pairs(out, cluster.pairs)
        paired = {m.slug for p in cluster.pairs for m in (p.a, p.b)}
        others = [m.label for m in cluster.members if m.slug not in paired]
        if others:
            more = f" and {len(others) - MEMBERS_SHOWN} more" if len(others) > MEMBERS_SHOWN else ""
            out.line(f"  also in this cluster: {', '.join(others[:MEMBERS_SHOWN])}{more}")
    if scan.pairs:
        first = scan.pairs[0]
        out.line("Merge a cluster into one memory (remember --overwrite, then forget the rest), or record a"
                 f" verdict: thatch dedup mark {_q(first.a.label)} {_q(first.b.label)}"
                 f" --status {'|'.join(VERDICTS)}")
        out.line(f"\n{report.store}: {_plural(scan.pair_count, 'near-duplicate pair', 'near-duplicate pairs')}"
                 f" in {_plural(scan.cluster_count, 'cluster', 'clusters')} ({cut})")
    else:
        out.line(f"No near-duplicates in {report.store} ({cut}).")
    if scan.truncated:
        out.notice(f"showing the best {len(scan.pairs)} of {scan.pair_count} pairs"
                   f" ({len(scan.clusters)} of {scan.cluster_count} clusters); raise --limit or --threshold")
    if scan.skipped_other_model:
        out.notice(f"{_plural(scan.skipped_other_model, 'live memory has', 'live memories have')} a vector of"
                   f" another model than {report.model} and {'was' if scan.skipped_other_model == 1 else 'were'}"
                   " not compared; run `thatch reindex`")
    _without_vector_notice(out, scan.without_vector)


# -- rescope / archive --------------------------------------------------------------


def _change_lines(out: Output, memories: list[Memory]) -> None:
    for m in memories:
        out.line(f"  {m.label}" + (" (archived)" if m.archived else ""))


def rescoped(out: Output, change: BranchChange) -> None:
    target = change.to
    if out.json_mode:
        out.json(_change_json(change, {"from": change.branch, "to": target}))
        return
    where = f"branch {target}" if target is not None else "unscoped (project-wide)"
    if not change.memories:
        out.line(f"No memories scoped to branch {change.branch} in {change.store}; nothing moved.")
        _branches_hint(out, change)
        return
    out.line(f"Moved {_plural(len(change.memories), 'memory', 'memories')} in {change.store}"
             f" from branch {change.branch} to {where}:")
    _change_lines(out, change.memories)


def archived(out: Output, change: BranchChange) -> None:
    if out.json_mode:
        out.json(_change_json(change, {"branch": change.branch}))
        return
    if not change.memories:
        out.line(f"No live memories scoped to branch {change.branch} in {change.store}; nothing archived.")
        _branches_hint(out, change)
        return
    out.line(f"Archived {_plural(len(change.memories), 'memory', 'memories')} of branch {change.branch}"
             f" in {change.store}:")
    _change_lines(out, change.memories)


def _change_json(change: BranchChange, which: dict) -> dict:
    return {"store": change.store, **which, "changed": len(change.memories),
            "memories": [memory_brief(m) for m in change.memories], "branches_left": change.branches_left}


def _branches_hint(out: Output, change: BranchChange) -> None:
    if change.branches_left:
        out.notice(f"branches with memories in {change.store}: {', '.join(change.branches_left)}")


# -- dedup -------------------------------------------------------------------------


def verdict(out: Output, v: Verdict) -> None:
    if out.json_mode:
        out.json({"store": v.store, "status": v.status, "checked_at": v.checked_at, "previous": v.previous,
                  "a": memory_brief(v.a), "b": memory_brief(v.b)})
        return
    was = f" (was {v.previous})" if v.previous and v.previous != v.status else ""
    out.line(f"Marked {v.a.label!r} and {v.b.label!r} in {v.store} as {v.status}{was};"
             " duplicates and hygiene will not report the pair again until one of them changes.")


def verdicts(out: Output, store: str, rows: list[dict]) -> None:
    if out.json_mode:
        out.json({"store": store, "verdicts": rows})
        return
    if not rows:
        out.line(f"No dedup verdicts in {store}.")
        return
    if out.rich:
        table(out, ("status", "memory", "memory", "checked"),
              [(row["status"], esc(row["label_a"] or row["slug_a"]), esc(row["label_b"] or row["slug_b"]),
                row["checked_at"][:10]) for row in rows])
        return
    for row in rows:
        out.line(f"{row['status']}\t{row['label_a'] or row['slug_a']}\t{row['label_b'] or row['slug_b']}"
                 f"\t{row['checked_at']}")


# -- completion --------------------------------------------------------------------


def completion_installed(out: Output, outcome) -> None:
    if out.json_mode:
        out.json({"shell": outcome.shell, "path": str(outcome.path), "status": outcome.status,
                  "notes": outcome.notes})
        return
    if outcome.status == "unchanged":
        out.line(f"{outcome.shell} completion already up to date: {outcome.path}")
    else:
        out.line(f"{outcome.status.capitalize()} {outcome.shell} completion: {outcome.path}")
    for note in outcome.notes:
        out.line(note)


def completion_script(out: Output, shell: str, script: str) -> None:
    if out.json_mode:
        out.json({"shell": shell, "script": script})
        return
    out.stdout.write(script)
