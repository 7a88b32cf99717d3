"""`thatch help` and `thatch --help`: the commands in sections, in one order."""

from __future__ import annotations

import re
import subprocess

from thatch_cli.cli.app import SECTIONS

PANEL = re.compile(r"^╭─ (.+?) ─")
ROW = re.compile(r"^│ ([a-z][a-z-]*) ")


def _help(*args: str) -> str:
    result = subprocess.run(["thatch", *args], capture_output=True, text=True, timeout=60,
                            env={"PATH": __import__("os").environ["PATH"], "COLUMNS": "80", "TERM": "dumb"})
    assert result.returncode == 0, result.stderr
    return result.stdout


def _panels(text: str) -> list[tuple[str, list[str]]]:
    panels: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        if match := PANEL.match(line):
            panels.append((match.group(1), []))
        elif (match := ROW.match(line)) and panels:
            panels[-1][1].append(match.group(1))
    return panels


def test_help_groups_commands_in_sections_in_one_order():
    plain, typed = _help("help"), _help("--help")
    assert plain == typed  # `thatch help` once listed `help` first, `--help` listed it last
    panels = _panels(plain)
    assert panels[0][0] == "Options"
    assert [(name, tuple(commands)) for name, commands in panels[1:]] == list(SECTIONS)


def test_every_command_has_a_section():
    import typer

    from thatch_cli.cli.app import app

    visible = {name for name, command in typer.main.get_command(app).commands.items() if not command.hidden}
    assert visible == {name for _, names in SECTIONS for name in names}
