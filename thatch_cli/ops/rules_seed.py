"""thatch's own default behaviors: practices for situations every coding
session meets (wrapping up, finishing before a merge, an unfamiliar
codebase, picking work up again, a dead end, debugging, planning),
codified in `global` the first time an agent uses a learned-rule tool.

They are the tool's: each rationale carries `thatch-default:KEY`, agents
grade them (behavior_feedback) and a person can forget them (`thatch rules
forget`); a forgotten one is not added again (thatch_cli_meta records which
set was seeded). When the file already holds the original thatch's
defaults (`seed-key:` in their rationale), ours are not added, and ours
that no one has graded yet are removed, so an agent never sees two sets.
The original's rows are never changed.
"""

from __future__ import annotations

from ..storage import rules as table
from ..storage.rules import BEHAVIORS
from .context import Context

STAMP = "thatch-default:"
ORIGINAL_STAMP = "seed-key:"
META_KEY = "default_behaviors"
VERSION = "1"
GLOBAL = "global"

# key -> (situations, behavior, rationale): our own words for the situations the original covers. A
# situation is one short phrasing (a matcher each, all linked to the behavior): a long description
# matches a short prompt weakly, whatever the model.
DEFAULTS: dict[str, tuple[tuple[str, ...], str, str]] = {
    "wrap-up": (
        ("wrapping up the session for today", "I am done for now, signing off", "any loose ends before we stop?",
         "ending the session, calling it a day"),
        "Before saying goodbye, list what would be lost with the session: uncommitted or untracked files (git"
        " status), work half done, and what the next session needs to know; offer to save that as a memory."
        " Report, do not change anything unasked.",
        "Loose ends noticed only after a session closes cost the most to recover."),
    "before-merge": (
        ("merging the branch and closing the ticket", "ready to merge this pull request",
         "committing and pushing the finished work", "tagging and shipping a release"),
        "Before it is finalised, check that nothing stays behind: uncommitted or untracked files, memories"
        " scoped to the branch that should outlive it (thatch rescope or archive), follow-up work that should"
        " become a ticket. Tell the user what you find.",
        "Context tied to a branch disappears from view once the branch is merged."),
    "unfamiliar-code": (
        ("starting work in an unfamiliar codebase", "I am new to this repository, where do I start?",
         "getting up to speed on how this project works", "first ticket in a part of the code I do not know"),
        "Survey before changing: how the area is tested, the names it uses for its concepts (and older names"
        " still around), migrations left half done, and the patterns the code already follows. Recall what"
        " memories say about the area first.",
        "Changes proposed before the conventions are known tend to fight them."),
    "resume-work": (
        ("continuing the work from yesterday", "picking this branch back up after a break",
         "where did we leave off last time?", "resuming the pull request review"),
        "Before new changes, catch up: git status for leftovers, how far the main branch moved since this"
        " branch forked (git fetch, then git log from the merge base), and new review comments or commits on"
        " an open pull request. Recall the branch's memories.",
        "A day is long enough for the base or the review to move under the work."),
    "dead-end": (
        ("that was a dead end", "this turned out to be a red herring", "the fix did not work, my theory was wrong",
         "this is not what I expected at all"),
        "Save a memory about it before moving on: what looked likely, why it was wrong, and what the real"
        " cause turned out to be (or is still suspected to be), so the next session does not retrace it.",
        "Dead ends are expensive to rediscover and cheap to write down."),
    "debugging": (
        ("debugging a failure whose cause is unknown", "this used to work and now it is broken",
         "why is this test failing?", "something is wrong and I do not know why"),
        "Before proposing a fix, read the history of the code involved: git log and git blame for the"
        " affected lines, the commits that last changed the behaviour, code a removal or rename left"
        " orphaned. Fix the cause the history shows, not only the symptom.",
        "Many bugs are the remains of an earlier change that was only partly carried through."),
    "planning": (
        ("planning how to approach a change", "redesigning or refactoring this feature",
         "how should we change the way this works?", "proposing a new design for this module"),
        "Before proposing, learn why the code is the way it is: the commits and discussions that set the"
        " current design, constraints it answers that may still hold, migrations in progress. Say which of"
        " them the proposal keeps or removes.",
        "A design that looks wrong is often a deliberate answer to a constraint that is not visible in the"
        " code."),
}


def seed(ctx: Context) -> list[str]:
    """Add the defaults once per VERSION (unless the original's are there); returns the keys added."""
    db = ctx.db()
    conn = db.conn
    seeded = table.meta(conn, META_KEY) == VERSION
    if table.stamped(conn, BEHAVIORS, GLOBAL, ORIGINAL_STAMP):
        # The original's set is here (it may have seeded after us): ours give way unless someone graded them.
        ungraded = [row["id"] for row in table.stamped(conn, BEHAVIORS, GLOBAL, STAMP)
                    if row["confirm_count"] + row["disconfirm_count"] == 0]
        if ungraded or not seeded:
            with db.transaction() as conn:
                for item_id in ungraded:
                    table.delete_item(conn, BEHAVIORS, item_id)
                table.delete_unlinked_matchers(conn, BEHAVIORS, GLOBAL,
                                               [text for situations, _, _ in DEFAULTS.values() for text in situations])
                table.set_meta(conn, META_KEY, VERSION)
        return []
    if seeded:
        return []
    present = {row["rationale"].split(STAMP, 1)[1].split()[0] for row in table.stamped(conn, BEHAVIORS, GLOBAL, STAMP)}
    missing = [key for key in DEFAULTS if key not in present]
    texts = [text for key in missing for text in (*DEFAULTS[key][0], DEFAULTS[key][1])]
    if not missing:
        with db.transaction() as conn:
            table.set_meta(conn, META_KEY, VERSION)
        return []
    embedded = ctx.engine().embed_passages(texts)
    with db.transaction() as conn:
        table.ensure_tables(conn)
        blobs = iter(embedded.blobs)
        for key in missing:
            situations, behavior, rationale = DEFAULTS[key]
            matcher_ids = [table.create_matcher(conn, BEHAVIORS, GLOBAL, text, next(blobs), embedded.model)
                           for text in situations]
            stamped = f"{rationale} {STAMP}{key}"
            item_id = table.create_item(conn, BEHAVIORS, GLOBAL, behavior, stamped, next(blobs), embedded.model)
            for matcher_id in matcher_ids:
                table.create_edge(conn, BEHAVIORS, matcher_id, item_id)
            table.add_provenance(conn, BEHAVIORS, item_id, "codify", stamped)
        table.set_meta(conn, META_KEY, VERSION)
    return missing
