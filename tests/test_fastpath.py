"""The fast dispatcher accepts exactly what the Typer CLI accepts, with the
same values; anything it is unsure of goes to Typer."""

import os
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from thatch_cli import fastpath
from thatch_cli.cli import app


def typer_params(argv, monkeypatch):
    """The implementation and options Typer would run for argv."""
    import thatch_cli.cli as cli_module

    seen = {}

    def capture(impl, ctx, options):
        seen["call"] = (f"{impl.__module__}:{impl.__qualname__}", dict(options))
        return 0

    monkeypatch.setattr(cli_module, "run", capture)
    result = CliRunner().invoke(app, list(argv))
    assert result.exit_code == 0, result.output
    return seen["call"]


SPEC = fastpath.load_spec()

AGREE = [
    ["list"],
    ["list", "acme/widget", "--json"],
    ["list", "--store", "global", "-b", "feat/x", "--archived"],
    ["remember", "only content"],
    ["remember", "label", "content", "--confidence", "7", "--no-archived", "--overwrite"],
    ["remember", "label", "-", "--store=global", "--this-branch"],
    ["remember", "--", "--label-with-dashes", "content"],
    ["recall", "query words", "-n", "3", "--all-stores", "--include-archived"],
    ["recall", "q", "--limit=5", "--branch", "main", "-s", "x"],
    ["show", "Build Steps", "--json"],
    ["forget", "x", "-s", "global"],
    ["stores"],
    ["reindex", "--store", "s", "--json"],
    # Options with fixed choices (cli.one_of) reach the implementation as the plain str typed.
    ["recall", "q", "--mode", "lexical"],
    ["recall", "q", "-m", "SEMANTIC"],
    ["recall", "q", "--mode=fuzzy"],
    ["dedup", "mark", "a", "b", "--status", "supplement"],
    ["dedup", "mark", "a", "b", "--status=bogus", "-s", "global"],
]


@pytest.mark.parametrize("argv", AGREE, ids=[" ".join(a) for a in AGREE])
def test_fast_parse_matches_typer(argv, monkeypatch):
    impl, params = fastpath.parse(SPEC, argv)
    assert (impl, params) == typer_params(argv, monkeypatch)


@pytest.mark.parametrize(
    "argv",
    [[], ["--help"], ["list", "-h"], ["recall"], ["recall", "q", "--limit", "many"], ["list", "--bogus"],
     ["list", "a", "b"], ["nosuch"], ["recall", "q", "--json=1"], ["recall", "q", "-an", "3"], ["recall", "q", "--limit"]],
)
def test_unsure_command_lines_go_to_typer(argv):
    with pytest.raises(fastpath._Fallback):
        fastpath.parse(SPEC, argv)


@pytest.mark.parametrize("fast", ["1", "0"], ids=["fast path", "typer"])
@pytest.mark.parametrize("argv, message", [
    (["recall", "x", "--mode", "fuzzy"], "mode must be one of hybrid, semantic, lexical, got 'fuzzy'"),
    (["dedup", "mark", "a", "b", "--status", "bogus"], "unknown status 'bogus'; use one of duplicate,"),
], ids=["recall --mode", "dedup mark --status"])
def test_a_value_outside_the_choices_is_one_line_and_exit_2(argv, message, fast, tmp_path):
    """The library's check answers on both paths: Typer does not validate
    choices itself (its error would be a multi-line usage box)."""
    fastpath.parse(SPEC, argv)  # the fast path handles it, rather than handing it to Typer
    env = {**os.environ, "THATCH_MODEL": "fake:32", "THATCH_FASTPATH": fast, "COLUMNS": "200"}
    result = subprocess.run([sys.executable, "-m", "thatch_cli", *argv], env=env, cwd=tmp_path,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("thatch: error: ") and message in lines[0], result.stderr
