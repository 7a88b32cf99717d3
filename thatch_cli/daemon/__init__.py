"""The warm embedding daemon: one background process per user keeps the model
loaded and each store's vectors cached. It answers embed and search
requests over a Unix socket in a private runtime directory.

    runtime   paths, ownership checks, locks, identity and spawning (stdlib only)
    reach     how a hook reaches the daemon: runtime directory, socket, the hooks' pointer (os, stat)
    protocol  frames and the typed, versioned message shapes (stdlib only)
    client    talking to the daemon, starting or replacing it (no numpy)
    warm      maybe_warm(), for the shell hook
    server    the daemon process: socket, lifecycle, dispatch
    handlers  what each operation does (a hook: what the entry point handed the server)
    model     the embedding model, loaded in the background
    cache     each store's vector matrix, kept current
    memory    handing freed memory back to the system after big batches
    log       the daemon's log lines

What commands call is ops/engine.py, above it: the daemon, or the same
work in-process.
"""
