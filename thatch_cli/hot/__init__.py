"""Entry points for machine-facing hot paths (shell hook, git hooks,
completion). Budget: 50 ms a run, so nothing under here may import typer,
rich, dulwich or numpy, directly or through what it imports."""
