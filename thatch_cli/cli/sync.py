"""`thatch sync [init|status|off|purge LABEL]`, `thatch private LABEL`,
`thatch share LABEL`: team memory through the repository's own git remote
(sync/run.py and sync/setup.py)."""

from __future__ import annotations

from typing import Annotated, Any

from ..ops.context import Context
from ..support.errors import EXIT_ATTENTION, InvalidInput, ThatchError
from ..sync.setup import ACTIONS
from .declare import BRIEF, Argument, Json, Label, Option, Store, command
from .output import Output
from .render import table, tsv


@command("sync", examples=[
    "thatch sync init            # says who will be able to read them, and asks",
    "thatch sync                 # fetch, merge, push",
    "thatch sync --dry-run",
    "thatch sync --review        # teammates' memories not reviewed yet",
    "thatch sync --review --accept 'Release process'",
    "thatch sync --allow 'Staging access'   # share it despite the credential check",
    "thatch sync status",
    "thatch sync purge 'Old deploy key'",
    "thatch sync off",
], json="sync: store, remote, status (synced, pulled, up to date, dry run, pull-only, deferred, offline, refused,"
        " disk_full: the last two with --background),"
        " dry_run, pulled and pushed (created, updated, deleted), conflicts (slug, label, winner, local, remote),"
        " held (slug, label, reason, rules), skipped (path, reason), unreviewed, commit, rounds, notices;"
        " init/off: store, remote, url, status, changes, notices; status: store, enabled, remote, url, base,"
        " last_sync, to_push, to_pull, held, unreviewed, private; purge: store, remote, slug, label, commit,"
        f" kept_private, notices; --review: store, accepted, incoming ({BRIEF}, snippet)",
    notes="Shares this repository's own store through its git remote, as one ref (refs/thatch/memories) that no"
          " branch listing shows. Nothing is shared before 'thatch sync init'; never the global store, memories"
          " marked private (remember --private, thatch private), branch-scoped ones (setting sync.branches) or"
          " one that looks like it holds a credential (unless --allow). Conflicting edits keep the newer one; the"
          " other goes into thatch history. Offline or a silent server is exit 7 (nothing lost; sync again); a"
          " push the server declines is pull-only; refused credentials exit 8; a full disk exit 6.")
def sync(
    ctx: Context, out: Output, *,
    action: Annotated[str | None, Argument(metavar="ACTION", choices=ACTIONS, show_default=False,
                                              help="init, status, off or purge LABEL; none: sync now.")] = None,
    label: Annotated[str | None, Argument(metavar="LABEL", show_default=False,
                                             help="The memory purge takes off the remote.")] = None,
    remote: Annotated[str | None, Option("--remote", metavar="NAME",
                                            help="init: the remote to share through (default: the"
                                                 " branch's, else origin).")] = None,
    yes: Annotated[bool, Option("--yes", "-y", help="init: share without asking.")] = False,
    dry_run: Annotated[bool, Option("--dry-run", "-n", help="Say what would be pulled and pushed; change nothing"
                                                            " (uses what git last fetched).")] = False,
    review: Annotated[bool, Option("--review", help="List teammates' memories not reviewed yet.")] = False,
    accept: Annotated[list[str] | None, Option("--accept", metavar="LABEL",
                                                  help="With --review: accept this one (repeatable).")] = None,
    accept_all: Annotated[bool, Option("--accept-all", help="With --review: accept them all.")] = False,
    allow: Annotated[list[str] | None, Option("--allow", metavar="LABEL",
                                                 help="Share this memory even if it looks like it holds a"
                                                      " credential (repeatable).")] = None,
    background: Annotated[bool, Option("--background", hidden=True)] = False,
    from_hook: Annotated[bool, Option("--from-hook", hidden=True)] = False,
    as_json: Json = False,
) -> int:
    """Share this repository's memories with your team through its own git remote."""
    if action != "purge" and label is not None:
        raise InvalidInput("only 'thatch sync purge LABEL' takes a label")
    if (accept or accept_all) and not review:
        raise InvalidInput("--accept and --accept-all go with --review")
    if action == "init":
        return _setup(out, _init(ctx, out, remote, yes))
    if action == "off":
        from ..sync.setup import off

        return _setup(out, off(ctx))
    if action == "status":
        return _status(ctx, out)
    if action == "purge":
        return _purge(ctx, out, label)
    if review:
        return _review(ctx, out, accept or [], accept_all)
    if background or from_hook:
        return _background(ctx, out, from_hook)
    from ..sync.run import sync as run

    embedding = _Embedding(ctx, out)
    try:
        outcome = run(ctx, dry_run=dry_run, allow=allow or [], progress=embedding)
    finally:
        embedding.close()
    _report(out, outcome)
    return EXIT_ATTENTION if outcome.attention else 0


class _Embedding:
    """Progress of embedding what a sync brought in (after its lock is
    released), shown only for a pull of more than one batch: a bar at a
    terminal, a line every few seconds elsewhere."""

    def __init__(self, ctx: Context, out: Output) -> None:
        self.ctx, self.out = ctx, out
        self.scope: Any = None
        self.bar: Any = None

    def __call__(self, done: int, total: int | None) -> None:
        from ..sync.applying import BATCH

        if self.bar is None:
            if not total or total <= BATCH or done >= total:
                return
            from .progress import ProgressBar

            self.scope = ProgressBar.for_output(self.out, "Embedding incoming memories", self.ctx, unit="memories")
            self.bar = self.scope.__enter__()
        self.bar(done, total)

    def close(self) -> None:
        if self.scope is not None:
            self.scope.__exit__(None, None, None)


def _background(ctx: Context, out: Output, from_hook: bool) -> int:
    """Exit 0 with one line, whatever happens: offline is normal."""
    from ..sync.run import sync as run

    try:
        outcome = run(ctx, background=True, fetch=not from_hook, push=None if from_hook else True)
    except ThatchError as exc:
        if out.json_mode:
            out.json({"error": exc.to_json()}, compact=True)
        else:
            out.notice(f"sync: {exc.message}")
        return 0
    if out.json_mode:
        out.json(outcome.to_json())
    else:
        out.notice("sync: " + (outcome.notices[-1] if outcome.status == "offline" else _summary(outcome)))
    return 0


def _init(ctx: Context, out: Output, remote: str | None, yes: bool):
    from ..sync.setup import init
    from .editor import on_terminal

    def ask(question: str) -> bool:
        out.stderr.write(out_safe(question) + "\nShare them? [y/N] ")
        out.stderr.flush()
        answer = (ctx.stdin or __import__("sys").stdin).readline()
        return answer.strip().lower() in ("y", "yes")

    return init(ctx, remote, yes=yes, ask=ask if on_terminal(ctx) and not out.json_mode else None)


def out_safe(text: str) -> str:
    from ..support.textsafe import visible

    return visible(text, keep="")


def _setup(out: Output, outcome) -> int:
    if out.json_mode:
        out.json(outcome.to_json())
        return 0
    for notice in outcome.notices:
        out.notice(notice)
    words = {"enabled": f"Sharing {outcome.store} through {outcome.remote}; run 'thatch sync' to push and pull",
             "unchanged": f"Nothing to change: sync is {'on' if outcome.remote else 'off'} here",
             "declined": "Not shared; nothing was changed",
             "disabled": f"Stopped sharing {outcome.store}; git fetch no longer brings memories"}
    out.line(words.get(outcome.status, outcome.status))
    for change in outcome.changes:
        out.line(f"  {change}")
    return 0


def _summary(outcome) -> str:
    def counts(what: dict) -> str:
        return ", ".join(f"{n} {word}" for word, n in (("new", what["created"]), ("changed", what["updated"]),
                                                        ("forgotten", what["deleted"])) if n) or "nothing"

    head = {"dry run": "Would", "offline": "Offline"}.get(outcome.status, outcome.status.capitalize())
    return (f"{head}: {outcome.store} with {outcome.remote}: pulled {counts(outcome.pulled)};"
            f" pushed {counts(outcome.pushed)}")


def _report(out: Output, outcome) -> None:
    if out.json_mode:
        out.json(outcome.to_json())
        return
    for notice in outcome.notices:
        out.notice(notice)
    for conflict in outcome.conflicts:
        loser = conflict["remote" if conflict["winner"] == "local" else "local"]
        by = f" (by {loser['author']})" if loser["author"] else ""
        if loser["deleted"]:  # a forget that lost is not a version: nothing of it is kept
            out.notice(f"conflict: {conflict['label']!r} was forgotten on one side and changed later on the other;"
                       f" kept the later change, the forget{by} was undone")
            continue
        out.notice(f"conflict: {conflict['label']!r} changed on both sides; kept the newer"
                   f" ({conflict['winner']}) version, the other{by} is in its history: thatch history"
                   f" {_quoted(conflict['label'])}")
    for held in outcome.held:
        rules = ", ".join(f"{r['rule']}: {r['excerpt']}" for r in held["rules"])
        out.notice(f"held back: {held['label']!r} {held['reason']}" + (f" [{rules}]" if rules else ""))
    for skipped in outcome.skipped[:20]:
        out.notice(f"skipped {skipped['path']} from the remote: {skipped['reason']}")
    if outcome.unreviewed:
        many = outcome.unreviewed != 1
        out.notice(f"{outcome.unreviewed} {'memories' if many else 'memory'} from teammates"
                   f" {'await' if many else 'awaits'} review: thatch sync --review")
    out.line(_summary(outcome))


def _quoted(label: str) -> str:
    from ..support.textsafe import shell_word

    return shell_word(label)


def _status(ctx: Context, out: Output) -> int:
    from ..sync.setup import status

    data = status(ctx).to_json()
    if out.json_mode:
        out.json(data)
        return 0
    if not data["enabled"]:
        out.line(f"Not shared: {data['store']} stays on this machine (thatch sync init shares it)")
        return 0
    last = data["last_sync"]
    out.line(f"Sharing {data['store']} through {data['remote']} ({data['url']})")
    out.line("Last sync: " + (f"{last['at']} ({last['status']})" if last else "never"))
    push, pull = data["to_push"], data["to_pull"]
    out.line(f"Not yet pushed: {sum(push.values())}; fetched, not yet merged: {sum(pull.values())}")
    out.line(f"Awaiting review: {data['unreviewed']}; private: {data['private']}; held back: {len(data['held'])}")
    return 0


def _purge(ctx: Context, out: Output, label: str | None) -> int:
    if not label:
        raise InvalidInput("thatch sync purge needs the LABEL of the memory to take off the remote")
    from ..sync.purge import purge

    outcome = purge(ctx, label)
    if out.json_mode:
        out.json(outcome.to_json())
        return 0
    out.line(f"Purged {outcome.label!r} from {outcome.remote} (the memories ref was rewritten without history)"
             + ("; kept here as private" if outcome.kept_private else ""))
    for notice in outcome.to_json()["notices"]:
        out.notice(notice)
    return 0


def _review(ctx: Context, out: Output, accept: list[str], accept_all: bool) -> int:
    from ..sync.setup import review

    outcome = review(ctx, accept, accept_all)
    if out.json_mode:
        out.json(outcome.to_json())
        return 0
    if outcome.accepted:
        out.line(f"Accepted {outcome.accepted} memor{'y' if outcome.accepted == 1 else 'ies'}")
    if not outcome.incoming:
        out.notice(f"nothing from teammates awaits review in {outcome.store}")
        return 0
    from ..ops.recall import snippet

    if out.rich:
        from .render import Column

        table(out, [Column("label", "label", give=1, least=16), Column("claimed author", give=1, least=10),
                    Column("updated", "dim", whole=True), Column("snippet", give=2, least=0.4)],
              [(m.label, m.author or "", m.updated_at[:10], snippet(m, out.width)) for m in outcome.incoming],
              title=f"awaiting review in {outcome.store}")
    else:
        tsv(out, [(m.label, m.author or "", m.updated_at, snippet(m)) for m in outcome.incoming])
    out.notice("read one with thatch show LABEL; accept with thatch sync --review --accept LABEL (or --accept-all)")
    return 0


@command("private", examples=["thatch private 'My shell aliases'"], json=f"memory ({BRIEF}), changed, notices")
def private(ctx: Context, out: Output, *, label: Label, store: Store = None, as_json: Json = False) -> None:
    """Keep a memory on this machine: thatch sync never shares it."""
    _privacy(ctx, out, label, store, True)


@command("share", examples=["thatch share 'Release process'"], json=f"memory ({BRIEF}), changed, notices")
def share(ctx: Context, out: Output, *, label: Label, store: Store = None, as_json: Json = False) -> None:
    """Let thatch sync share a memory marked private again."""
    _privacy(ctx, out, label, store, False)


def _privacy(ctx: Context, out: Output, label: str, store: str | None, private: bool) -> None:
    from ..sync.setup import set_private

    outcome = set_private(ctx, label, private, store)
    if out.json_mode:
        out.json(outcome.to_json())
        return
    if outcome.notice:
        out.notice(outcome.notice)
    state = "private (never shared)" if private else "shared by thatch sync"
    out.line(f"{outcome.memory.label!r} in {outcome.memory.store} is {'now ' if outcome.changed else 'already '}"
             f"{state}")
