"""`thatch rules list | show | forget`: what the agent has learned
(ops/rules_admin.py), in the open: the user decision model's predictions
and the agent's behaviors, each with its situations, confidence, evidence
count, store and last change; one with its whole history; forgetting one."""

from __future__ import annotations

from typing import Annotated, Optional

from ..ops.context import Context
from ..storage.rules import KIND_NAMES
from .declare import Argument, Json, Option, command, group
from .output import Output

RULES = group("rules", "What the agent has learned: the user's preferences and its own behaviors (prediction_*,"
                       " behavior_* tools), with their confidence; see one, forget one.")
RULE_KEYS = ("kind, id, store, statement, rationale, confidence, confirm_count, disconfirm_count, evidence_count,"
             " updated_at, matchers (id, description, weight)")
Ref = Annotated[str, Argument(metavar="RULE", show_default=False,
                              help="The rule's id (a unique prefix of 4+ characters) or its exact statement.")]


def _counts(rule: dict) -> str:
    evidence = rule["evidence_count"]
    return f"{rule['confidence']:.2f} · {evidence} signal{'s' if evidence != 1 else ''}"


@command("list", group=RULES, examples=["thatch rules list", "thatch rules list --kind behavior --store global",
                                        "thatch rules list --json | jq '.rules[].statement'"],
         json=f"rules ({RULE_KEYS})")
def rules_list(
    ctx: Context, out: Output, *,
    kind: Annotated[Optional[str], Option("--kind", metavar="KIND", choices=KIND_NAMES,
                                          help="Only predictions (the user's preferences) or behaviors.")] = None,
    store: Annotated[Optional[str], Option("--store", "-s", metavar="STORE",
                                           help="Only the rules of this store (default: every store).")] = None,
    as_json: Json = False,
) -> None:
    """List every learned rule: kind, store, confidence and evidence, statement and the situations that fire it.

    Predictions first, each kind most confident first. Piped, one rule per line, tab-separated: kind, id, store, confidence, evidence_count, updated_at, statement."""
    from ..ops.rules_admin import every
    from ..support.textsafe import one_line

    found = every(ctx, store, kind)
    if out.json_mode:
        out.json({"rules": found})
        return
    if not found:
        out.notice("no learned rules" + (f" in {store}" if store else ""))
        return
    if not out.rich:
        from .render import tsv

        tsv(out, [[r["kind"], r["id"], r["store"], f"{r['confidence']:.3f}", r["evidence_count"],
                   r["updated_at"], r["statement"]] for r in found])
        return
    from .render import paint

    for rule in found:
        head = f"{rule['kind']} {rule['id'][:8]} · {rule['store']} · {_counts(rule)} · {str(rule['updated_at'])[:10]}"
        out.line(paint(out, one_line(head), "dim"))
        out.line(f"  {one_line(rule['statement'])}")
        for matcher in rule["matchers"]:
            out.line(f"  when: {one_line(matcher['description'])}")


@command("show", group=RULES, examples=["thatch rules show 3f2a9c1e", "thatch rules show 3f2a --json"],
         json=f"rule ({RULE_KEYS}, created_at, provenance (signal, detail, created_at), newest first)")
def rules_show(ctx: Context, out: Output, *, rule: Ref, as_json: Json = False) -> None:
    """Print one learned rule with its situations and every change that shaped its confidence."""
    from ..ops.rules_admin import show
    from ..support.textsafe import one_line

    found = show(ctx, rule)
    if out.json_mode:
        out.json({"rule": found})
        return
    out.line(f"{found['kind']} {found['id']} in {one_line(found['store'])}")
    out.line(f"  statement   {one_line(found['statement'])}")
    if found.get("rationale"):
        out.line(f"  rationale   {one_line(found['rationale'])}")
    out.line(f"  confidence  {_counts(found)} ({found['confirm_count']:g} confirmed,"
             f" {found['disconfirm_count']:g} against)")
    for matcher in found["matchers"]:
        out.line(f"  when        {one_line(matcher['description'])} (weight {matcher['weight']:g})")
    for change in found["provenance"]:
        out.line(f"  {str(change['created_at'])[:19]}  {one_line(change['signal'])}: {one_line(change['detail'] or '')}")


@command("forget", group=RULES, examples=["thatch rules forget 3f2a9c1e"], json=f"forgotten ({RULE_KEYS})")
def rules_forget(ctx: Context, out: Output, *, rule: Ref, as_json: Json = False) -> None:
    """Delete one learned rule with its links and history, so it no longer steers the agent."""
    from ..ops.rules_admin import forget
    from ..support.textsafe import one_line

    found = forget(ctx, rule)
    if out.json_mode:
        out.json({"forgotten": found})
        return
    out.line(f"Forgot {found['kind']} {found['id'][:8]} in {one_line(found['store'])}: {one_line(found['statement'])}")
