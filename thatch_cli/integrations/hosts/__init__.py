"""Wiring coding-agent hosts to thatch (`thatch setup`): each host's files,
edited so that nothing else in them changes.

    jsonedit  minimal edits of JSON files (insert or remove one member)
    blocks    a marked block inside someone else's file
    managed   what thatch owns in each kind of file, as planned edits
    codex     Codex's config.toml (tables rendered with tomlkit)
    tomlsections  a TOML file as the sections a person sees, edited one section at a time
    targets   where each host keeps its configuration, and what thatch writes there
    versions  which version of a host is installed, and what that version accepts
    environment  the settings a host's MCP server needs to see the terminal's database and daemon
    tracked   which of setup's files git tracks that hold a path of this machine
    setup     hosts and scopes, plan / install / uninstall / status
"""

HOSTS = ("claude", "cursor", "codex")
