"""The warm embedding daemon: one background process per user keeps the model
loaded and each store's vector matrix cached, and answers embed and search
requests over a Unix socket in a private runtime directory.

Modules:
    runtime  paths, ownership checks, locks, identity and spawning (stdlib only)
    protocol length-prefixed JSON + binary frames (stdlib only)
    client   talking to the daemon, starting or replacing it (no numpy)
    engine   what commands call: the daemon, or the same work in-process
    server   the daemon itself (imports numpy and the model)
    warm     maybe_warm(), for the shell prompt hook
"""
