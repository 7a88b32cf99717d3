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
from thatch_cli.support.files import atomic_writer, replace_atomically


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


# -- modes whatever the umask, and thatch's private directories -------------------------------------


def test_under_umask_000_nothing_thatch_creates_is_writable_by_others(isolated_env, git_repo, tmp_path):
    """Directories thatch creates are 0700 (0755 where the shell, git or an
    agent host reads them) and its files never writable by others, however
    permissive the umask: under umask 000 the state directory, the
    completion directory and its parents and the project's .claude/ used to
    be 0777, config.toml 0644."""
    import subprocess
    import sys

    from helpers import hook_payload

    home = Path(isolated_env["HOME"])
    project = git_repo("widget", remote="git@github.com:acme/widget.git")
    env = {**os.environ, "THATCH_MODEL": "fake:64", "XDG_RUNTIME_DIR": str(tmp_path / "missing" / "run"),
           "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    env.pop("THATCH_DB")  # the default location, which thatch creates

    def thatch(*args: str, payload: str | None = None) -> None:
        result = subprocess.run([sys.executable, "-m", "thatch_cli", *args], env=env, cwd=project, input=payload,
                                capture_output=True, text=True, timeout=60, preexec_fn=lambda: os.umask(0))
        assert result.returncode == 0, result.stderr

    thatch("remember", "a", "first note")
    thatch("config", "set", "recall.limit", "5")
    thatch("completion", "install", "bash")
    thatch("setup", "claude")
    thatch("hooks", "install")
    thatch("buffer-tool", payload=hook_payload("cursor_post_tool_use", project=project))
    thatch("daemon", "status")
    assert (home / ".local/state/thatch/queue").is_dir() and (home / ".config/thatch/thatch.db").is_file()
    loose = {}
    for root in (home, project / ".claude", project / ".git" / "hooks", tmp_path / "missing"):
        for path in [root, *root.rglob("*")]:
            mode = stat.S_IMODE(path.lstat().st_mode)
            if not path.is_symlink() and mode & 0o022:
                loose[str(path)] = oct(mode)
    assert loose == {}
    assert stat.S_IMODE((home / ".config/thatch/config.toml").stat().st_mode) == 0o600
    for private in (home / ".config/thatch", home / ".local/state/thatch", home / ".local/state/thatch/queue"):
        assert stat.S_IMODE(private.stat().st_mode) == 0o700, private
    completions = home / ".local/share/bash-completion/completions"
    for shared in (completions, project / ".claude"):
        assert stat.S_IMODE(shared.stat().st_mode) == 0o755, shared


def test_links_in_thatchs_private_directories_are_never_followed(tmp_path, victim, isolated_env):
    """The queue's lock, the daemon's lock, spawn lock, `replaced` mark and
    log: a symlink found at any of these names is replaced by a file of
    thatch's own, and nothing reaches its target."""
    import subprocess
    import sys

    from thatch_cli.ops.extraction import Queue, interaction

    from helpers import daemon_pids, stop_all

    queue = Queue(os.environ, "session-1")
    queue.dir.mkdir(parents=True, mode=0o700)
    plant(queue.lock_path, victim)
    queue.append([interaction("Bash", {"command": "make"}, "ok")])
    env = {**os.environ, "THATCH_DAEMON": "1", "THATCH_MODEL": "fake:64", "THATCH_STORE": "acme/widget"}
    rundir = Path(runtime.runtime_dir(env))
    rundir.mkdir(parents=True, mode=0o700)
    names = (runtime.LOCK, runtime.SPAWN_LOCK, runtime.LOG)
    for name in names:
        plant(rundir / name, victim)
    try:
        for args in (["remember", "a", "through the daemon"], ["daemon", "stop"]):
            result = subprocess.run([sys.executable, "-m", "thatch_cli", *args], env=env, capture_output=True,
                                    text=True, timeout=60)
            assert result.returncode == 0 and "daemon unavailable" not in result.stderr, result.stderr
    finally:
        stop_all(env)
    assert not daemon_pids(env)
    assert victim.read_text() == "precious\n"
    for path in (queue.lock_path, *(rundir / name for name in names)):
        assert not path.is_symlink() and path.is_file(), path
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
