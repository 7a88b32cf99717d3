"""Wiring coding-agent hosts to thatch (`thatch setup`): each host's files,
edited so that nothing else in them changes.

    jsonedit  minimal edits of JSON files (insert or remove one member)
    blocks    a marked block inside someone else's file
    managed   what thatch owns in each kind of file, as planned edits
    codex     Codex's config.toml (tables rendered with tomlkit)
    setup     hosts and scopes, plan / install / uninstall / status
"""

HOSTS = ("claude", "cursor", "codex")
