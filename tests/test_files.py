"""Every file thatch writes goes through files.atomic_writer: a temporary
file beside the target with an unpredictable name, created O_EXCL |
O_NOFOLLOW, renamed into place when complete. A symlink planted at a name
someone could predict (the target itself, or the `<target>.tmp-<pid>` that
export used to write through) never sends the bytes to its victim."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from thatch_cli.daemon import runtime
from thatch_cli.files import atomic_writer, replace_atomically


@pytest.fixture
def victim(tmp_path) -> Path:
    path = tmp_path / "victim"
    path.write_text("precious\n")
    return path


def plant(link: Path, victim: Path) -> None:
    link.symlink_to(victim)


def test_export_never_writes_through_a_planted_symlink(cli, tmp_path, victim):
    shared = tmp_path / "shared"
    shared.mkdir()
    target = shared / "memories.jsonl"
    plant(Path(f"{target}.tmp-{os.getpid()}"), victim)  # the name export used to use
    assert cli("remember", "a", "b", THATCH_STORE="s").exit_code == 0
    assert cli("export", "--output", str(target), THATCH_STORE="s").exit_code == 0
    assert victim.read_text() == "precious\n"
    assert '"slug":"a"' in target.read_text() and stat.S_IMODE(target.stat().st_mode) == 0o600
    plant(shared / "again.jsonl", victim)  # a symlink at the target is replaced, not followed
    assert cli("export", "--output", str(shared / "again.jsonl"), THATCH_STORE="s").exit_code == 0
    assert victim.read_text() == "precious\n" and not (shared / "again.jsonl").is_symlink()
    assert sorted(p.name for p in shared.iterdir()) == ["again.jsonl", "memories.jsonl",
                                                        f"memories.jsonl.tmp-{os.getpid()}"]


def test_a_failed_write_leaves_the_target_and_no_temporary_file(tmp_path):
    target = tmp_path / "file"
    target.write_text("old")
    with pytest.raises(RuntimeError):
        with atomic_writer(target, 0o644) as fh:
            fh.write("half")
            raise RuntimeError("disk full")
    assert target.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["file"]


def test_installs_and_daemon_files_replace_symlinks_instead_of_following_them(cli, tmp_path, victim, git_repo,
                                                                              isolated_env):
    home = Path(isolated_env["HOME"])
    completion = home / ".local/share/bash-completion/completions/thatch"
    completion.parent.mkdir(parents=True)
    plant(completion, victim)
    assert cli("completion", "install", "bash").exit_code == 0
    assert victim.read_text() == "precious\n" and not completion.is_symlink()
    repo = git_repo("widget")
    hook = repo / ".git" / "hooks" / "post-checkout"
    hook.parent.mkdir(exist_ok=True)
    plant(hook, victim)  # a "hook" that is a symlink: kept as the legacy hook, never written through
    assert cli("hooks", "install", cwd=repo).exit_code == 0
    assert victim.read_text() == "precious\n" and not hook.is_symlink()
    assert (hook.parent / "post-checkout.thatch-legacy").is_symlink()
    rundir = tmp_path / "run"
    rundir.mkdir(mode=0o700)
    plant(rundir / f"{runtime.PIDFILE}.{os.getpid()}", victim)  # the daemon's old temporary name
    runtime.write_pidfile(str(rundir), "fake:64")
    assert victim.read_text() == "precious\n" and runtime.read_pidfile(str(rundir))["model"] == "fake:64"
    replace_atomically(tmp_path / "plain", "text", 0o600)
    assert (tmp_path / "plain").read_text() == "text"
