"""The hook entry points stay light: checked in real processes, through the
real `thatch` entry module, with a warm identity cache."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from thatch_cli.memory.records import Memory
from thatch_cli.storage.memories import MemoryDB

from helpers import run_probed, top_level

# typing too: the hot paths name typing's types only for type checkers (TYPE_CHECKING = False).
FORBIDDEN = ("typer", "click", "rich", "dulwich", "numpy", "torch", "sentence_transformers", "shellingham", "typing")

def probe(args: list[str], cwd: Path, tmp_path: Path) -> tuple[set[str], subprocess.CompletedProcess]:
    """The top-level packages `thatch ARGS` imported, and the finished process."""
    result, modules = run_probed(args, env=dict(os.environ), cwd=cwd, tmp_path=tmp_path)
    assert "Traceback" not in result.stderr, result.stderr
    assert modules, result.stderr  # the probe reported
    return top_level(modules), result


@pytest.fixture
def repo(tmp_path) -> Path:
    path = tmp_path / "widget"
    path.mkdir()
    for args in (["init", "-q", "-b", "main"], ["commit", "-q", "--allow-empty", "-m", "init"],
                 ["remote", "add", "origin", "https://example.com/acme/widget.git"], ["switch", "-q", "-c", "feat/x"]):
        subprocess.run(["git", *args], cwd=path, check=True, capture_output=True)
    db = MemoryDB.open(Path(os.environ["THATCH_DB"]))
    for i, branch in enumerate(["feat/x", "feat/x", None, "gone"]):
        db.save(Memory(store="acme/widget", slug=f"m{i}", label=f"Note {i}", content="x", branch=branch,
                       created_at="2026-01-01T00:00:00.000Z", updated_at="2026-01-01T00:00:00.000Z"),
                overwrite=False, archived=None)
    db.close()
    return path


def test_probe_sees_dulwich_on_a_cold_identity_cache(repo, tmp_path):
    """The check can fail: the first visit to a repository reads its config with dulwich."""
    modules, result = probe(["_hook", "prompt"], repo, tmp_path)
    assert result.returncode == 0
    assert "dulwich" in modules


@pytest.mark.parametrize("args, expect", [
    (["_hook", "prompt"], "thatch: acme/widget · 4 memories · 2 on feat/x · 1 orphaned (thatch hygiene)"),
    (["_hook", "prompt", "--prev", "elsewhere\tmain"], "2 on feat/x"),
    (["_githook", "post-checkout", "0" * 40, "1" * 40, "1"], "thatch: 2 memories on feat/x in acme/widget (thatch list --this-branch)"),
    (["_githook", "branch-deleted", "--git-pid", "1", "--", "gone"], "1 memory was scoped to deleted branch gone"),
])
def test_hooks_import_nothing_heavy(repo, tmp_path, args, expect):
    subprocess.run([sys.executable, "-m", "thatch_cli", "_hook", "prompt"], cwd=repo, check=True,
                   capture_output=True)  # warms the identity cache
    modules, result = probe(args, repo, tmp_path)
    assert result.returncode == 0, result.stderr
    assert expect in result.stdout  # the probe really ran the hook's whole path
    assert sorted(modules & set(FORBIDDEN)) == []


# What site and an editable install import hide what the hook itself pulls in:
# this probe runs without site (python -S), the checkout first on sys.path.
_BARE_PROBE = """
import json, sys
sys.path.insert(0, sys.argv[1])
before = set(sys.modules)
out, sys.argv = sys.argv[2], ["thatch", *sys.argv[3:]]
from thatch_cli.__main__ import main
try:
    main()
finally:
    with open(out, "w") as fh:
        json.dump(sorted(set(sys.modules) - before), fh)
"""


@pytest.mark.parametrize("args, expect", [
    (["_githook", "post-checkout", "0" * 40, "1" * 40, "1"], "2 memories on feat/x"),
    (["_complete", "labels"], "Note 0"),
    (["_hook", "prompt", "--prev", "acme/widget\tmain"], "2 memories on feat/x"),
])
def test_branch_switch_and_tab_hooks_skip_pathlib_and_re(repo, tmp_path, args, expect):
    """pathlib (with re, fnmatch, urllib.parse and ipaddress) costs a hook
    process several milliseconds; the git hook runs after every branch switch
    that finds its cache stale, completion on every Tab press."""
    import json

    root = str(Path(__file__).resolve().parents[2])
    subprocess.run([sys.executable, "-m", "thatch_cli", "_hook", "prompt"], cwd=repo, check=True,
                   capture_output=True)  # warms the identity cache
    out = tmp_path / "bare-modules.json"
    result = subprocess.run([sys.executable, "-S", "-c", _BARE_PROBE, root, str(out), *args], cwd=repo,
                            capture_output=True, text=True, timeout=60)
    assert expect in result.stdout, result.stderr
    imported = set(json.loads(out.read_text()))
    assert sorted(imported & {"pathlib", "re", "urllib.parse", "ipaddress", "fnmatch"}) == []
