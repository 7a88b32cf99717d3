"""Files generated from the Typer definitions (tests fail when they are stale).

    python -m thatch_cli.gen          # regenerate everything

    cli_model    the Typer app read as plain data, refusing what the fast path cannot follow
    spec         thatch_cli/cli/spec.py, which the fast path parses against
    completions  completions/: the bash, zsh and fish scripts
    man          man/thatch.1
    tree         docs/architecture.md's tree, from the package docstrings
    secret_rules thatch_cli/support/credential_rules.py, the bundled credential rules as Python data
"""
