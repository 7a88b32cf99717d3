"""Standard-library-only helpers every layer uses (tests/test_layout.py keeps them so).

    errors      errors a user can cause, each with its exit code
    paths       where thatch keeps its files
    clock       timestamps in the original thatch's format
    files       safe temporary files, atomic replacement, lock files, package data
    textsafe    the one rule for showing stored text: control characters escaped
    slugs       labels to slugs, byte-compatible with the original thatch
    suggest     did-you-mean for commands, stores and labels
    validate    the one set of input checks
    settings    the settings registry: every setting once, resolved from variable, file, default
    agent_text  how memories read to a model: marked as stored data, with where they came from
    fitting     the one rule for fitting output into a character budget
    rules_text  how learned rules read to a model: the prompt blocks, marked as data, text escaped
    secrets     the credential check before a memory is shared (sync, remember, import): gitleaks-style rules
    credential_rules the bundled rules as data, generated from the TOML files (python -m thatch_cli.gen)
"""
