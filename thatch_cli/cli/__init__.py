"""The command line. Typer is its one definition (app.py builds it from
what the command modules declare); the fast path (fastpath.py) runs
well-formed command lines against the spec exported from it, without
importing Typer.

    declare    Option/Argument/command: declaring commands without importing Typer
    app        the Typer app, and running argv through it with one-line errors
    fastpath   parsing argv against spec.py (generated)
    run        one command's error policy, shared by both paths
    output     JSON, rich tables or plain text; every line made safe to show
    render     shared output helpers (tables, escaping, plurals)
    progress   a progress bar on a terminal
    waiting    a status line while a command waits for the model or the daemon
    editor     writing a memory in $VISUAL / $EDITOR

Command modules (declaration, body and output of each command):

    memories   remember, list, show, forget, pin, unpin, stores, reindex
    tags       tag, untag
    rules      rules list, show, forget: the learned preferences and behaviors, in the open
    edit       edit, rename
    anchors    anchor, unanchor
    recall     recall
    search     search (the original thatch's spelling of recall)
    tidy       hygiene, duplicates
    dedup      dedup keep, mark, list
    branches   rescope, archive, unarchive
    transfer   export, import
    safety     backup, restore, history, restore-memory
    config     config get, set, unset, list, path
    shell      init, completion install, show
    githooks   hooks install, uninstall, status
    daemon     daemon start, stop, status
    sync       sync, sync init, status, off, purge; private, share
    agents     mcp, setup
    activity   activity, pause, resume: what reached the agents, and stopping it
    help       help
"""
