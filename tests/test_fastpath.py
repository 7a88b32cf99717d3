"""The fast dispatcher accepts exactly what the Typer CLI accepts, with the
same values; anything it is unsure of goes to Typer."""

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
