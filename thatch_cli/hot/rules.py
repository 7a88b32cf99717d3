"""The learned rules a prompt fires (`flush-tools` adds them after its
nudge; `thatch flush-predictions` prints the predictions alone): the
"User decision model" and "Situational behaviors" blocks.

The prompt is embedded by the warm daemon only (never a model in this
process), once, and compared with the matchers of the project store and
global on the calibrated scale (ops/rules_match.py): at or above
THATCH_PREDICTION_THRESHOLD / THATCH_BEHAVIOR_THRESHOLD (default 0.5 on
that scale, for every model). Nothing is asked of the daemon when those
stores hold no rule; a cold daemon (or any failure) fires nothing. Each
block is at most MAX_CHARS characters, its stored text escaped
(support/rules_text.py).
"""

from __future__ import annotations

import sys

from ..location.scope import project_dir
from ..support import fitting, paths, rules_text
from .agentio import PROMPT_KEYS, host_option, read_payload, respond, shaper, text_field

TYPE_CHECKING = False  # typing.TYPE_CHECKING would import typing: ~2 ms on every hot path (tests/hot checks)
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Mapping

MAX_CHARS = 1_500
MIN_PROMPT_CHARS = 10
ENV_THRESHOLDS = {"prediction": "THATCH_PREDICTION_THRESHOLD", "behavior": "THATCH_BEHAVIOR_THRESHOLD"}


def threshold(env: Mapping[str, str], kind: str) -> float:
    """The kind's cut-off on the calibrated scale; the default for anything not in (0, 1]."""
    from ..ops.rules_match import MATCH_THRESHOLD

    try:
        value = float(env.get(ENV_THRESHOLDS[kind]) or MATCH_THRESHOLD)
    except ValueError:
        return MATCH_THRESHOLD
    return value if 0 < value <= 1 else MATCH_THRESHOLD


def fired(env: Mapping[str, str], cwd: Path, prompt: str, kinds: tuple[str, ...] = ("prediction", "behavior"),
          ) -> dict[str, list]:
    """kind -> the scored items (best first) the prompt fires, through the warm daemon."""
    if len(prompt.strip()) < MIN_PROMPT_CHARS:
        return {}
    db_path = paths.db_path(env)
    if not db_path.is_file():
        return {}
    from ..daemon.runtime import disabled

    if disabled(env):
        return {}
    from ..ops.context import Context
    from ..storage import rules as table
    from ..storage.memories import MemoryDB

    with Context(env=env, cwd=cwd, use_daemon=True, wait_for_model=False,
                 _db=MemoryDB.open_existing(db_path)) as ctx:
        conn = ctx.db().conn
        if not table.any_matchers(conn, [kind for kind in table.KINDS if kind.name in kinds]):
            return {}
        from ..ops import rules
        from ..support.errors import ModelUnavailable

        stores = rules.default_stores(ctx, None)
        wanted = [rules.kind_named(k) for k in kinds if table.matchers(conn, rules.kind_named(k), stores)]
        if not wanted:
            return {}
        try:
            embedded = ctx.engine().embed_query(prompt)
            space = rules.space_of(ctx, embedded.model, embedded.dim)
            return {kind.name: rules.scored(conn, kind, space, embedded.blobs[0], stores, threshold(env, kind.name))
                    for kind in wanted}
        except ModelUnavailable:
            return {}


def text(found: dict[str, list]) -> str:
    """The blocks, predictions first, each within MAX_CHARS."""
    blocks = []
    for kind in ("prediction", "behavior"):
        block = rules_text.block(kind, found.get(kind) or [])
        if block:
            blocks.append(fitting.prefix(block, MAX_CHARS))
    return "\n\n".join(blocks)


def after(env: Mapping[str, str], payload: dict, nudge: str, items: list | None = None, cwd: str | None = None,
          ) -> str:
    """`nudge` followed by the blocks this payload's prompt fires (flush-tools);
    each rule given is added to `items` as (statement, store, score)."""
    prompt = text_field(payload, PROMPT_KEYS)
    if not prompt:
        return nudge
    try:
        found = fired(env, project_dir(env, payload, cwd), prompt)
        if items is not None:
            items += [(rule["statement"], rule["store"], rule["score"]) for rules in found.values() for rule in rules]
        blocks = text(found)
    except Exception:
        if env.get("THATCH_DEBUG"):
            raise
        blocks = ""  # the memory nudge stands on its own
    return f"{nudge}\n\n{blocks}" if blocks else nudge


def predictions_text(env: Mapping[str, str], payload: dict) -> str:
    prompt = text_field(payload, PROMPT_KEYS)
    if not prompt:
        return ""
    return text(fired(env, project_dir(env, payload), prompt, ("prediction",)))


def main(argv: list[str]) -> int:
    """`thatch flush-predictions [--json | --host H]`: the prediction block alone, or nothing."""
    shape = shaper(host_option(argv), "UserPromptSubmit")
    return respond("", lambda env: predictions_text(env, read_payload(sys.stdin)), shape)
