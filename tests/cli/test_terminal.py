"""Output on a real terminal (a pseudo-terminal of 80 and 160 columns): one row
per record that fits the window, snippets as wide as there is room for,
timestamps whole, cuts on words with "…", no trailing spaces, and colour for
labels, stores, scores and branches that NO_COLOR, TERM=dumb and pipes take away."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from thatch_cli.cli.render import width_of

from helpers import thatch_pty

ESC = re.compile(r"\x1b\[[0-9;]*m")
BRANCH = "feat/very-long-branch-name-for-the-release-work"
LONG = ("Tag the commit on main, build the wheel and the sdist with python -m build, check them with twine check,"
        " upload them with twine upload, then announce the release in the team channel with the changelog link")


@pytest.fixture
def env(isolated_env):
    env = {**os.environ, "THATCH_MODEL": "fake:32", "THATCH_STORE": "acme/widget", "TERM": "xterm-256color"}
    env.pop("NO_COLOR", None)
    env.pop("COLUMNS", None)
    for n in range(1, 6):
        args = ["remember", f"Release process for the widget service, part {n}", f"{LONG} ({n})."]
        if n % 2:
            args += ["--branch", BRANCH]
        subprocess.run([sys.executable, "-m", "thatch_cli", *args], env=env, check=True, capture_output=True)
    subprocess.run([sys.executable, "-m", "thatch_cli", "remember", "Release process for the widget service, part 1",
                    LONG.replace("main", "the release branch"), "--overwrite"], env=env, check=True,
                   capture_output=True)
    return env


def screen(args, env, cols, **extra):
    code, text = thatch_pty(args, env={**env, **extra}, cols=cols)
    assert code == 0, text
    return [line for line in text.split("\n") if line and not line.startswith("thatch:")]


def plain(line: str) -> str:
    return ESC.sub("", line)


def fits(lines, cols):
    for line in lines:
        text = plain(line)
        assert width_of(text) <= cols, (cols, text)
        assert text == text.rstrip(), f"trailing spaces: {text!r}"


@pytest.mark.parametrize("cols", [80, 160])
def test_list_is_one_row_per_memory_within_the_window(env, cols):
    lines = screen(["list"], env, cols)
    assert plain(lines[0]) == "acme/widget · 5 memories"
    rows = [plain(line) for line in lines[2:]]
    assert len(rows) == 5 and all(row.startswith("Release process") for row in rows)
    fits(lines, cols)
    # The snippet takes the room there is: nearly the whole width, cut on a word with "…".
    assert all(row.endswith("…") for row in rows)
    assert max(width_of(row) for row in rows) >= cols - 12
    assert all(not row[:-1].endswith(" ") for row in rows)


def test_a_wider_window_shows_more_of_each_memory(env):
    narrow, wide = screen(["list"], env, 80), screen(["list"], env, 160)
    assert len(plain(wide[2])) > len(plain(narrow[2])) + 60


@pytest.mark.parametrize("cols", [80, 160])
def test_recall_is_one_row_per_result(env, cols):
    lines = screen(["recall", "release process widget", "--branch", BRANCH], env, cols)
    rows = [plain(line) for line in lines[1:]]
    assert plain(lines[0]).split() == ["score", "store", "label", "branch", "snippet"]
    assert len(rows) == 5 and all(re.match(r" 0\.\d\d  acme/widg", row) for row in rows)
    fits(lines, cols)


@pytest.mark.parametrize("cols", [80, 160])
def test_history_keeps_timestamps_whole_and_cuts_on_words(env, cols):
    lines = screen(["history", "Release process for the widget service, part 1"], env, cols)
    rows = [plain(line) for line in lines if re.match(r"\s*\d+  ", plain(line))]
    assert rows, lines
    fits(lines, cols)
    for row in rows:
        assert re.search(r"  \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z  ", row), row
        assert row.endswith("…")
        cut_word = row[:-1].split()[-1]
        assert cut_word in LONG.replace(",", " ").split() + LONG.split(), row  # a whole word before the "…"


@pytest.mark.parametrize("cols", [80, 160])
def test_show_has_no_trailing_spaces(env, cols):
    lines = screen(["show", "Release process for the widget service, part 1"], env, cols)
    body = next(i for i, line in enumerate(lines) if plain(line).startswith("Tag the commit"))
    fits(lines[:body], cols)  # label and facts fit (facts wrap between items, never inside a timestamp)
    assert re.search(r"updated \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", plain("\n".join(lines[:body])))
    assert all(plain(line) == plain(line).rstrip() for line in lines)
    assert plain(lines[body]) == LONG.replace("main", "the release branch")


def test_colour_marks_labels_stores_scores_and_branches(env):
    listing = "\n".join(screen(["list"], env, 160))
    assert "\x1b[1mRelease process" in listing  # labels bold
    assert "\x1b[35mfeat/very-long" in listing  # branches magenta
    stores = "\n".join(screen(["stores"], env, 80))
    assert "\x1b[36macme/widget" in stores  # stores cyan
    recall = "\n".join(screen(["recall", "release process widget", "--branch", BRANCH], env, 80))
    assert re.search(r"\x1b\[32m0\.\d\d", recall)  # scores green


@pytest.mark.parametrize("extra", [{"NO_COLOR": "1"}, {"TERM": "dumb"}])
def test_no_color_and_dumb_terminals_get_no_escapes(env, extra):
    for args in (["list"], ["stores"], ["recall", "release process widget"], ["show", "release-process-for-the-widget-service-part-2"]):
        text = "\n".join(screen(args, env, 80, **extra))
        assert "\x1b[" not in text, (args, extra)
    if "TERM" in extra:  # a dumb terminal gets the tab-separated lines pipes get
        assert "\t" in "\n".join(screen(["list"], env, 80, **extra))


def test_pipes_get_no_escapes(env):
    for args in (["list"], ["stores"], ["recall", "release process widget"]):
        result = subprocess.run([sys.executable, "-m", "thatch_cli", *args], env=env, capture_output=True, text=True)
        assert result.returncode == 0 and "\x1b" not in result.stdout and "\t" in result.stdout
