"""The original thatch's eight learned-rule tools (prediction_query,
prediction_update, prediction_list, prediction_delete, behavior_codify,
behavior_feedback, behavior_list, behavior_delete): its names, argument
names and meaning, each a call into ops/rules.py. The structured content
carries the same keys as `thatch rules --json`; the text shows each item
with its confidence and evidence count, stored text escaped."""

from __future__ import annotations

from typing import Any

from ..ops.context import Context
from ..storage.rules import BEHAVIORS, PREDICTIONS, Kind
from ..support import validate
from ..support.agent_text import line
from ..support.errors import InvalidInput
from ..support.rules_text import NOTES, item_line
from .results import Reply
from .tool import NAME_CHECKS, Session, Tool, string

RULE_STORE = string("Store to use. Defaults to this project's store (detected from the git remote); \"global\""
                    " for what holds across projects.")


def _text(name: str):
    def check(value: Any) -> Any:
        if isinstance(value, str) and not value.strip():
            raise InvalidInput(f"{name} is empty")
        return validate.content(value) if isinstance(value, str) else value  # the same 64 KiB limit as a memory

    return check


def render_items(data: dict[str, Any]) -> str:
    items = data["items"]
    if not items:
        return f"No {data['kind']}s match{' in ' + line(data['store']) if data.get('store') else ''}."
    lines = [NOTES[data["kind"]]]
    for item in items:
        lines.append(item_line(item) if "matcher" in item else _listed(item))
    return "\n".join(lines)


def _listed(item: dict[str, Any]) -> str:
    evidence = item["evidence_count"]
    out = [f"- [{item['confidence']:.2f} confidence, {evidence} signal{'s' if evidence != 1 else ''}]"
           f" {line(item['statement'])} (id {item['id'][:8]})"]
    if item.get("rationale"):
        out.append(f"  rationale: {line(item['rationale'])}")
    for matcher in item.get("matchers", []):
        out.append(f"  when: {line(matcher['description'])} (weight {matcher['weight']:g})")
    for change in item.get("provenance", []):
        out.append(f"  {str(change['created_at'])[:10]} {line(change['signal'])}: {line(change['detail'] or '')}")
    return "\n".join(out)


def render_change(data: dict[str, Any]) -> str:
    item = data["item"]
    counts = f"({item['confirm_count']:g} confirmed, {item['disconfirm_count']:g} against)"
    return (f"[{item['action']}] {item['kind']} {line(item['statement'])!r} in {line(item['store'])}:"
            f" confidence {item['confidence']:.2f} {counts}")


def _query(ctx: Context, args: dict, state: Session) -> Reply:
    from ..ops.rules import query

    return Reply({"kind": "prediction", "items": query(ctx, args["context"], args.get("store"))}, render_items,
                 ("items",), "pass a store to narrow it")


def _update(ctx: Context, args: dict, state: Session) -> Reply:
    from ..ops.rules import record

    item = record(ctx, PREDICTIONS, args["matcher"], args["prediction"], args["signal"], args["rationale"],
                  args.get("store"))
    return Reply({"item": item}, render_change)


def _lister(kind: Kind):
    def run(ctx: Context, args: dict, state: Session) -> Reply:
        from ..ops.rules import listing, store_of

        store = store_of(ctx, args.get("store"))
        return Reply({"kind": kind.name, "store": store, "items": listing(ctx, kind, [store])}, render_items,
                     ("items",), "pass another store, or use `thatch rules` in a shell")

    return run


def _deleter(kind: Kind):
    def run(ctx: Context, args: dict, state: Session) -> Reply:
        from ..ops.rules import delete

        return Reply({"item": delete(ctx, kind, args["statement"], args.get("store"))}, render_change)

    return run


def _codify(ctx: Context, args: dict, state: Session) -> Reply:
    from ..ops.rules import record

    item = record(ctx, BEHAVIORS, args["situation"], args["behavior"], "create", args["rationale"],
                  args.get("store"))
    if item["action"] == "created":
        item["action"] = "codified"
    return Reply({"item": item}, render_change)


def _feedback(ctx: Context, args: dict, state: Session) -> Reply:
    from ..ops.rules import feedback

    return Reply({"item": feedback(ctx, args["behavior"], bool(args["relevant"]), args["context"],
                                   args.get("store"))}, render_change)


def _with_defaults(tool: Tool) -> Tool:
    """The tool, adding thatch's default behaviors first (once per database, ops/rules_seed.py)."""
    run = tool.run

    def seeded(ctx: Context, args: dict, state: Session) -> Reply:
        from ..ops.rules_seed import seed

        seed(ctx)
        return run(ctx, args, state)

    tool.run = seeded
    return tool


TEXT_CHECKS = {name: _text(name) for name in ("context", "matcher", "prediction", "rationale", "statement", "situation",
                                        "behavior")}
CHECKS = {**NAME_CHECKS, **TEXT_CHECKS}


def _s(description: str) -> dict:
    return string(description, minLength=1)


RULE_TOOLS: list[Tool] = [_with_defaults(tool) for tool in [
    Tool("prediction_query",
         "Ask the user decision model what this user tends to want in a situation: the learned preferences whose"
         " situation matches, each with its confidence and evidence count. For a judgment call (scope, approach,"
         " style) that the prompt's own User decision model note did not cover.",
         {"context": _s("The situation or decision at hand, in a sentence."),
          "store": string("Store to search (default: this project's store and global together).")},
         _query, required=("context",), checks=CHECKS),
    Tool("prediction_update",
         "Teach the user decision model: when the user corrects you, answers a question or shows a preference,"
         " record it (create) or grade an existing prediction (confirm, disconfirm, or soft for a partial"
         " disagreement). Near-identical situations and predictions are reused, not duplicated.",
         {"matcher": _s("The situation: what was being decided."),
          "prediction": _s("What the user wants or tends to do in that situation."),
          "signal": {"type": "string", "enum": ["confirm", "disconfirm", "soft", "create"],
                     "description": "create (a new observation), confirm (the user agreed), disconfirm (the"
                                    " user pushed back), soft (the user partly disagreed)."},
          "rationale": _s("What the user said or did that shows it."),
          "store": RULE_STORE},
         _update, required=("matcher", "prediction", "signal", "rationale"), read_only=False, checks=CHECKS),
    Tool("prediction_list",
         "List the learned preferences of a store with their situations, confidence, evidence count and recent"
         " changes.",
         {"store": RULE_STORE}, _lister(PREDICTIONS), checks=CHECKS),
    Tool("prediction_delete",
         "Delete a learned preference (with its links and history), found by meaning: pass its statement as"
         " prediction_list shows it.",
         {"statement": _s("The prediction's statement."), "store": RULE_STORE},
         _deleter(PREDICTIONS), required=("statement",), read_only=False, checks=CHECKS),
    Tool("behavior_codify",
         "Record a practice of your own for a kind of situation (not a user preference: use prediction_update"
         " for those), such as reading a whole module before changing it. It will be shown when a prompt"
         " matches the situation.",
         {"situation": _s("The kind of situation in which the practice applies."),
          "behavior": _s("What to do in that situation."),
          "rationale": _s("Why this practice is worth keeping: what happened."),
          "store": RULE_STORE},
         _codify, required=("situation", "behavior", "rationale"), read_only=False, checks=CHECKS),
    Tool("behavior_feedback",
         "Grade a behavior a Situational behaviors note showed: relevant true if it applied here, false if it"
         " did not. Found by meaning: pass its statement.",
         {"behavior": _s("The behavior's statement."),
          "relevant": {"type": "boolean", "description": "true: it applied to this situation; false: it did not."},
          "context": _s("The situation, in a sentence, kept in the behavior's history."),
          "store": RULE_STORE},
         _feedback, required=("behavior", "relevant", "context"), read_only=False, checks=CHECKS),
    Tool("behavior_list",
         "List the codified behaviors of a store with their situations, confidence, evidence count and recent"
         " changes (\"global\" holds the defaults).",
         {"store": RULE_STORE}, _lister(BEHAVIORS), checks=CHECKS),
    Tool("behavior_delete",
         "Delete a codified behavior (with its links and history), found by meaning: pass its statement as"
         " behavior_list shows it.",
         {"statement": _s("The behavior's statement."), "store": RULE_STORE},
         _deleter(BEHAVIORS), required=("statement",), read_only=False, checks=CHECKS),
]]
