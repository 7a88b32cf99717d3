"""man/thatch.1: complete (every command and option), renders cleanly, and
documents every exit code support/errors.py defines."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from thatch_cli.gen import cli_model, man
from thatch_cli.support import errors

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "man" / "thatch.1"
SECTIONS = ["NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "COMMANDS", "ENVIRONMENT", "FILES", "EXIT STATUS"]
ENVIRONMENT = ["THATCH_DB", "THATCH_DB_PATH", "THATCH_MODEL", "THATCH_STORE", "THATCH_QUIET", "THATCH_HOOKS",
               "THATCH_DAEMON", "THATCH_DAEMON_IDLE", "THATCH_WARM", "THATCH_RECALL_FLOOR", "THATCH_RECALL_LIMIT",
               "THATCH_DUPLICATE_THRESHOLD", "NO_COLOR", "XDG_CONFIG_HOME", "XDG_CACHE_HOME",
               "XDG_DATA_HOME", "XDG_RUNTIME_DIR"]


def rendered() -> str:
    """The page as a reader sees it (groff, else man), or skip."""
    if shutil.which("groff"):
        cmd = ["groff", "-man", "-Tutf8", "-P-c", "-rLL=200n", str(PAGE)]
    elif shutil.which("man"):
        cmd = ["man", "-l", str(PAGE)]
    else:
        pytest.skip("neither groff nor man is installed (apt-get install groff-base man-db)")
    result = subprocess.run(cmd, capture_output=True, text=True, env={"MANWIDTH": "200", "PATH": "/usr/bin:/bin",
                                                                      "LANG": "C.UTF-8"})
    assert result.returncode == 0, result.stderr
    # Strip overstrike bold/underline, and the hyphen groff may render as U+2010.
    return re.sub(r".\x08", "", result.stdout).replace("\u2010", "-").replace("\u2212", "-")


def test_page_has_every_section_command_and_option():
    text = rendered()
    for section in SECTIONS:
        assert re.search(rf"^{section}$", text, re.M), section
    for path, spec in cli_model.commands().items():
        if spec["hidden"] or path.startswith("_"):
            continue
        assert re.search(rf"^\s+thatch {re.escape(path)}\b", text, re.M), path
        for param in spec["params"]:
            if param["kind"] == "option" and not param["hidden"]:
                for name in param["opts"] + param["secondary_opts"]:
                    assert name in text, f"{path} {name}"
    for group in cli_model.groups():
        assert re.search(rf"^\s+thatch {group} COMMAND$", text, re.M), group
    for name in ENVIRONMENT:
        assert re.search(rf"^\s+{name}$", text, re.M), name
    assert "Default: 90." in text  # hygiene --stale-days


def test_every_exit_code_is_documented():
    codes = {getattr(errors, n) for n in dir(errors) if n.startswith("EXIT_")}
    assert codes == set(range(9))
    assert set(man.EXIT_STATUS) == {n for n in dir(errors) if n.startswith("EXIT_")}
    text = rendered()
    section = text.split("EXIT STATUS", 1)[1]
    for code in codes:
        assert re.search(rf"^\s+{code}\s+\S", section, re.M), code
    assert "Attention needed" in section


def test_groff_finds_nothing_to_warn_about():
    if not shutil.which("groff"):
        pytest.skip("groff not installed (apt-get install groff-base)")
    result = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-z", str(PAGE)], capture_output=True, text=True)
    assert result.returncode == 0 and result.stderr == ""


def test_roff_escaping():
    assert man.text(".starts with a dot") == "\\&.starts with a dot"
    assert man.text("back\\slash") == "back\\eslash"
    assert man.opt("--no-archived") == "\\fB\\-\\-no\\-archived\\fR"
    assert man.metavar_roff("[LABEL] CONTENT") == "[\\fILABEL\\fR] \\fICONTENT\\fR"
    verbatim = man.paragraphs("Intro line.\n\n  bash  eval x\n  .zsh  eval y")
    assert verbatim[0] == "Intro line."
    assert verbatim[1].splitlines() == [".RS 4", ".nf", "bash  eval x", "\\&.zsh  eval y", ".fi", ".RE"]


def test_man_renders_the_page():
    if not shutil.which("man"):
        pytest.skip("man not installed (apt-get install man-db)")
    result = subprocess.run(["man", "-l", str(PAGE)], capture_output=True, text=True,
                            env={"MANWIDTH": "100", "PATH": "/usr/bin:/bin", "MANPAGER": "cat", "PAGER": "cat"})
    assert result.returncode == 0 and result.stderr == ""
    assert "THATCH(1)" in result.stdout and "EXIT STATUS" in result.stdout
