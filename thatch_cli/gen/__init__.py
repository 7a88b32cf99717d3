"""Files generated from the Typer definitions (tests fail when they are stale).

    python -m thatch_cli.gen          # regenerate everything
"""
