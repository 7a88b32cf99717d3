"""The operations every front door calls: the command line, the hot paths,
the MCP server and library users. Each takes a Context, checks its inputs
through support/validate.py, and returns a plain outcome with a `to_json()` shape.

    scope      which store(s) an operation works on, and finding a memory by label
    remember   save a memory (embed, warn about near-duplicates, write)
    anchors    tying memories to the code they describe, and its drift since
    recall     hybrid, semantic or lexical search; recall stamps telemetry
    memories   list, show, forget, stores
    reindex    embed what the current model cannot rank
    hygiene    the report: near-duplicates, stale memories, orphaned branches
    dedup      near-duplicate clusters and verdicts on pairs
    branches   move or archive a branch's memories
    transfer   JSONL export and import
    extraction the agents' per-session queue of tool calls to extract memories from
    nudge      which memories relate to a prompt (flush-tools' recall nudge)
    activity   the private record of what reached each agent session, and pausing injections
    pair_counts each store's last near-duplicate count, for the session-start reminder
    history    earlier versions of a memory, and restoring one
    rules      learned rules: predictions and behaviors recorded, graded, listed, deleted and fired
    rules_admin what a person sees and forgets of the learned rules (`thatch rules`)
    rules_match matching text against rules' vectors on the calibrated scale (standard library only)
    rules_seed  thatch's own default behaviors, added to global once (never beside the original's)
    rules_transfer learned rules as export and import lines
    backup     verified copies of the database, and restoring one
    config     reading and changing settings
    status     what a command run here would use: database, model, daemon, hooks, agent setups
    context    Context: environment, directory, clock, streams, database, embedder, engine
    engine     where vectors come from: the warm daemon, or the same work in this process
"""
