"""`thatch init`: the rendered scripts checked by each shell's parser and by
shellcheck, and the hook running in real interactive bash, zsh and fish
sessions on a pseudo-terminal. The shell sessions embed a wrapper in place
of thatch that logs every start, so the tests can count the processes the
hook starts.
"""

from __future__ import annotations

import os
import pty
import re
import select
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from thatch_cli.integrations import shell as shellinit
from thatch_cli.memory.records import Memory
from thatch_cli.storage.memories import MemoryDB
from thatch_cli.support.errors import InvalidInput

from helpers import ODD_EXE, THATCH

# -- rendering ------------------------------------------------------------------------------


@pytest.mark.parametrize("deactivate", [False, True], ids=["init", "deactivate"])
def test_the_bash_scripts_pass_shellcheck(deactivate):
    """shellcheck knows bash (not zsh or fish, which their own parsers check below)."""
    text = shellinit.render("bash", ODD_EXE, deactivate=deactivate)
    assert shellinit.PLACEHOLDER not in text
    assert deactivate or shellinit.quote("bash", ODD_EXE) in text
    result = subprocess.run(["shellcheck", "--shell=bash", "-"], input=text, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout


@pytest.mark.parametrize("shell", shellinit.SHELLS)
def test_rendered_scripts_parse(shell):
    if not shutil.which(shell):
        pytest.skip(f"{shell} not installed")
    check = {"bash": ["bash", "-n"], "zsh": ["zsh", "-n"], "fish": ["fish", "--no-config", "-n"]}[shell]
    for deactivate in (False, True):
        result = subprocess.run([*check, "/dev/stdin"], input=shellinit.render(shell, ODD_EXE, deactivate=deactivate),
                                capture_output=True, text=True)
        assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_quoting_round_trips_through_the_shell(shell, tmp_path):
    if not shutil.which(shell):
        pytest.skip(f"{shell} not installed")
    value = "a b'c\"d$e`f\\g*h\ni"
    script = f"printf '%s' {shellinit.quote(shell, value)}"
    argv = [shell, "--no-config", "-c", script] if shell == "fish" else [shell, "-c", script]
    assert subprocess.run(argv, capture_output=True, text=True).stdout == value


def test_unknown_shell_is_one_line_error():
    with pytest.raises(InvalidInput, match="unsupported shell"):
        shellinit.render("tcsh", ODD_EXE)


def test_detect_shell_falls_back_to_SHELL(monkeypatch):
    import shellingham

    def fail():
        raise shellingham.ShellDetectionFailure()

    monkeypatch.setattr(shellingham, "detect_shell", fail)
    assert shellinit.detect_shell({"SHELL": "/usr/local/bin/fish"}) == "fish"
    with pytest.raises(InvalidInput, match=r"\$SHELL: tcsh"):
        shellinit.detect_shell({"SHELL": "/bin/tcsh"})


def test_resolve_executable_prefers_the_running_program(tmp_path):
    exe = tmp_path / "bin" / "thatch"
    exe.parent.mkdir()
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    assert shellinit.resolve_executable(str(exe), {"PATH": ""}) == str(exe)
    # `python -m thatch_cli`: argv[0] is a source file, so PATH decides.
    assert shellinit.resolve_executable("/src/thatch_cli/__main__.py", {"PATH": str(exe.parent)}) == str(exe)


def test_help_shows_each_shells_rc_line(cli, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    result = cli("init", "--help")
    assert result.exit_code == 0
    for rc_file, line, _ in shellinit.SETUP.values():
        assert re.search(re.escape(rc_file) + r"\)?\s+" + re.escape(line), result.output), line


def test_cli_prints_script_with_absolute_path(tmp_path):
    result = subprocess.run([THATCH, "init", "zsh"], capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == shellinit.render("zsh", THATCH)
    off = subprocess.run([THATCH, "init", "--deactivate", "fish"], capture_output=True, text=True)
    assert off.stdout == shellinit.render("fish", THATCH, deactivate=True)
    bad = subprocess.run([THATCH, "init", "tcsh"], capture_output=True, text=True)
    assert bad.returncode == 2
    assert bad.stderr.count("\n") == 1 and "unsupported shell" in bad.stderr


def test_cli_detects_the_calling_shell(tmp_path):
    if not shutil.which("zsh"):
        pytest.skip("zsh not installed")
    # `; :` keeps zsh from exec-ing thatch in its own place.
    result = subprocess.run(["zsh", "-fc", f"'{THATCH}' init; :"], capture_output=True, text=True,
                            env={**os.environ, "SHELL": "/bin/bash"})
    assert result.returncode == 0, result.stderr
    assert result.stdout == shellinit.render("zsh", THATCH)


# -- real shells ----------------------------------------------------------------------------


class PtyShell:
    """An interactive shell on a pseudo-terminal. `run` types a command, then
    a marker command that prints the status the shell holds at that point —
    after the shell hook ran — and returns (everything printed, status)."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path, status_var: str) -> None:
        self.status_var = status_var
        self.buf = b""
        self.count = 0
        pid, fd = pty.fork()
        if pid == 0:  # pragma: no cover - child
            try:
                os.chdir(cwd)
                os.execvpe(argv[0], argv, env)
            finally:
                os._exit(127)
        self.pid, self.fd = pid, fd

    def _read(self, timeout: float) -> None:
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if ready:
            try:
                self.buf += os.read(self.fd, 65536)
            except OSError:
                pass

    def _until(self, token: bytes, deadline: float, what: str) -> bytes:
        while token not in self.buf:
            if time.monotonic() > deadline:
                raise AssertionError(f"shell stuck after {what!r}; output so far: {self.buf[-1500:]!r}")
            self._read(0.1)
        before, _, self.buf = self.buf.partition(token)
        return before

    def run(self, line: str, timeout: float = 20) -> tuple[str, int]:
        self.count += 1
        deadline = time.monotonic() + timeout
        os.write(self.fd, (line + "\n").encode())
        # The typed echo shows the format string, not "__mark<n>_": only real output matches.
        os.write(self.fd, f"printf '__%s_%s__\\n' mark{self.count} {self.status_var}\n".encode())
        output = self._until(f"__mark{self.count}_".encode(), deadline, line)
        status = self._until(b"__", deadline, line)
        return output.decode("utf-8", "replace"), int(status)

    def close(self) -> None:
        try:
            os.write(self.fd, b"exit\n")
        except OSError:
            pass
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            if os.waitpid(self.pid, os.WNOHANG)[0]:
                break
            self._read(0.05)
        else:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        os.close(self.fd)


SHELL_SYNTAX = {
    "bash": dict(argv=["bash", "--norc", "--noprofile", "-i"], status="$?", source='eval "$(cat {path})"',
                 setenv="export {name}={value}", unsetenv="unset {name}", hooks='echo "hooks=[$PROMPT_COMMAND]"'),
    "zsh": dict(argv=["zsh", "-f", "-i"], status="$?", source='eval "$(cat {path})"',
                setenv="export {name}={value}", unsetenv="unset {name}", hooks='echo "hooks=[$precmd_functions]"'),
    "fish": dict(argv=["fish", "--no-config", "-i"], status="$status", source="source {path}",
                 setenv="set -gx {name} {value}", unsetenv="set -e {name}",
                 hooks='echo "hooks=["(functions --handlers-type generic | string join " ")"]"'),
}


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture
def world(tmp_path):
    """A repository (acme/widget) with a linked worktree and a subdirectory,
    a plain directory, memories for both, and a logging stand-in for thatch."""
    repo = tmp_path / "widget"
    (repo / "sub").mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "commit", "-q", "--allow-empty", "-m", "init")
    git(repo, "remote", "add", "origin", "git@github.com:acme/widget.git")
    git(repo, "branch", "feat/login")
    git(repo, "worktree", "add", "-q", "-b", "wt-branch", str(tmp_path / "wt"))
    plain = tmp_path / "plain"
    plain.mkdir()
    quiet = tmp_path / "nothing-here"
    quiet.mkdir()

    db = MemoryDB.open(Path(os.environ["THATCH_DB"]))
    for i in range(14):
        branch = "feat/login" if i < 3 else "gone" if i < 5 else None
        db.save(Memory(store="acme/widget", slug=f"m{i}", label=f"Memory {i}", content="x", branch=branch,
                       created_at="2026-01-01T00:00:00.000Z", updated_at="2026-01-01T00:00:00.000Z"),
                overwrite=False, archived=None)
    db.save(Memory(store="plain", slug="p", label="Plain note", content="y",
                   created_at="2026-01-01T00:00:00.000Z", updated_at="2026-01-01T00:00:00.000Z"),
            overwrite=False, archived=None)
    db.close()

    log = tmp_path / "starts.log"
    wrapper = tmp_path / "bin dir's" / "thatch"
    wrapper.parent.mkdir()
    wrapper.write_text(f"#!/bin/sh\nprintf '%s\\n' \"$*\" >> {shellinit.sh_quote(str(log))}\n"
                       f"exec {shellinit.sh_quote(THATCH)} \"$@\"\n")
    wrapper.chmod(0o755)
    log.write_text("")
    return dict(tmp=tmp_path, repo=repo, wt=tmp_path / "wt", plain=plain, quiet=quiet, log=log, exe=str(wrapper))


def last_value(output: str, name: str) -> str:
    # The typed command echoes too; the real output is the last match.
    return re.findall(name + r"=\[([^\]]*)\]", output)[-1]


def _starts(world) -> int:
    return len(world["log"].read_text().splitlines())


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_hook_in_a_real_shell(shell, world):
    if not shutil.which(shell):
        pytest.skip(f"{shell} not installed")
    syntax = SHELL_SYNTAX[shell]
    script = world["tmp"] / f"init.{shell}"
    script.write_text(shellinit.render(shell, world["exe"]))
    off = world["tmp"] / f"off.{shell}"
    off.write_text(shellinit.render(shell, world["exe"], deactivate=True))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("THATCH_QUIET", "PROMPT_COMMAND"))}
    env.update(TERM="dumb", HISTFILE=os.devnull)
    sh = PtyShell(syntax["argv"], env, world["quiet"], syntax["status"])
    q = shellinit.quote

    def step(line: str, starts: int, *, shows: str | None = None, status: int = 0) -> str:
        before = _starts(world)
        out, st = sh.run(line)
        assert _starts(world) - before == starts, f"{line!r} started {_starts(world) - before} processes:\n{out}"
        assert st == status, f"{line!r}: status {st}\n{out}"
        summary = [ln.strip() for ln in out.splitlines() if ln.strip().startswith("thatch: ")]
        if shows is None:
            assert summary == [], f"{line!r} printed {summary}"
        else:
            assert len(summary) == 1 and shows in summary[0], f"{line!r}: wanted {shows!r}, got {summary}\n{out}"
        return out

    def hooks() -> str:
        return last_value(sh.run(syntax["hooks"])[0], "hooks")

    try:
        if shell == "bash":  # a command of the user's after ours must still see the real $?
            sh.run("PROMPT_COMMAND='_seen=\"${_seen-} $?\"'")
        # Sourcing runs nothing; the next prompt looks once (a store with no memories: silent).
        step(syntax["source"].format(path=q(shell, str(script))), 1)
        step(syntax["source"].format(path=q(shell, str(script))), 0)
        assert hooks().count("_thatch_hook") == 1  # evaluated twice, installed once
        step(f"cd {q(shell, str(world['repo']))}", 1, shows="thatch: acme/widget · 14 memories · 2 orphaned")
        step("true", 0)
        step("cd sub", 0)  # same repository, same HEAD: nothing starts
        step("false", 0, status=1)
        step("git switch -q feat/login", 1, shows="3 memories on feat/login in acme/widget (thatch list --this-branch)")
        step("git switch -q feat/login", 0)
        step(f"cd {q(shell, str(world['plain']))}; false", 1, shows="thatch: plain · 1 memory", status=1)
        step(f"cd {q(shell, str(world['quiet']))}", 1)
        step(f"cd {q(shell, str(world['wt']))}", 1, shows="thatch: acme/widget · 14 memories")
        # Same store, another worktree on another branch: that branch's line.
        step(f"cd {q(shell, str(world['repo'] / 'sub'))}", 1, shows="3 memories on feat/login")
        # Detaching (a rebase, a bisect) and coming back: looked at, not announced.
        step("git switch -q --detach", 1)
        step("git switch -q feat/login", 1)
        step("git switch -q main", 1)  # a branch without memories: nothing to say
        # With thatch's git hooks installed too (they run the real thatch, not the logging
        # stand-in), a switch still prints one line: the prompt's.
        step(f"{q(shell, world['exe'])} hooks install >/dev/null", 1)
        step("git switch -q feat/login", 1, shows="3 memories on feat/login")
        step("git switch -q main", 1)
        step(syntax["setenv"].format(name="THATCH_QUIET", value="1"), 0)
        step(f"cd {q(shell, str(world['plain']))}", 0)
        step(f"cd {q(shell, str(world['repo']))}", 0)
        step(syntax["unsetenv"].format(name="THATCH_QUIET"), 0)
        if shell == "bash":
            seen = last_value(sh.run('echo "seen=[$_seen]"')[0], "seen").split()
            assert seen.count("1") == 2, seen  # both prompts after `false` passed 1 on
        step(syntax["source"].format(path=q(shell, str(off))), 0)
        assert "_thatch_hook" not in hooks()
        step(f"cd {q(shell, str(world['plain']))}", 0)
        step(f"cd {q(shell, str(world['repo']))}", 0)
    finally:
        sh.close()


# Branch names git accepts that a careless hook would run as code or as a format.
CRAFTED_BRANCHES = [
    "$(touch${IFS}pwned-a)", "`touch${IFS}pwned-b`", "x;touch${IFS}pwned-c", "x'$(touch${IFS}pwned-d)'",
    'x"$(touch${IFS}pwned-e)"', "x|touch${IFS}pwned-f", "x&&touch${IFS}pwned-g", "x>pwned-h", "%n%s%x",
    "(touch${IFS}pwned-i)", "x$IFS$(id)", "{touch,pwned-j}", "!!x",
]


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_crafted_branch_names_are_shown_never_run(shell, world):
    """Switching to each crafted branch, the shell hook prints its name as
    text: no command in it runs, nothing is written, the shell keeps going."""
    if not shutil.which(shell):
        pytest.skip(f"{shell} not installed")
    repo = world["repo"]
    db = MemoryDB.open(Path(os.environ["THATCH_DB"]))
    for i, branch in enumerate(CRAFTED_BRANCHES):
        git(repo, "branch", branch)
        db.save(Memory(store="acme/widget", slug=f"crafted-{i}", label=f"Crafted {i}", content="z", branch=branch,
                       created_at="2026-01-01T00:00:00.000Z", updated_at="2026-01-01T00:00:00.000Z"),
                overwrite=False, archived=None)
    db.close()
    syntax = SHELL_SYNTAX[shell]
    script = world["tmp"] / f"init.{shell}"
    script.write_text(shellinit.render(shell, world["exe"]))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("THATCH_QUIET", "PROMPT_COMMAND"))}
    env.update(TERM="dumb", HISTFILE=os.devnull)
    sh = PtyShell(syntax["argv"], env, repo, syntax["status"])
    q = shellinit.quote
    try:
        sh.run(syntax["source"].format(path=q(shell, str(script))))
        for branch in CRAFTED_BRANCHES:
            out, status = sh.run(f"git switch -q {q(shell, branch)}")
            assert status == 0, out
            shown = [ln.strip() for ln in out.splitlines() if ln.strip().startswith("thatch: ")]
            assert shown == [f"thatch: 1 memory on {branch} in acme/widget (thatch list --this-branch)"], out
    finally:
        sh.close()
    assert sorted(p.name for p in world["tmp"].rglob("pwned*")) == []
    assert sorted(p.name for p in Path(env.get("HOME", "/nonexistent")).glob("pwned*")) == []


def test_prompt_process_protocol(world):
    """The state line comes back first; the summary only when it changed."""
    env = {**os.environ}
    run = lambda prev, cwd: subprocess.run(  # noqa: E731
        [THATCH, "_hook", "prompt", "--prev", prev], cwd=cwd, env=env, capture_output=True, text=True)
    first = run("", world["repo"])
    assert first.returncode == 0 and first.stderr == ""
    state, line = first.stdout.splitlines()
    assert state == "acme/widget\tmain"
    assert line == "thatch: acme/widget · 14 memories · 2 orphaned (thatch hygiene)"
    assert run(state, world["repo"] / "sub").stdout == state + "\n"
    # Memories of an empty store stay silent; THATCH_STORE picks the store.
    assert run("", world["quiet"]).stdout.splitlines() == ["nothing-here\t"]
    env["THATCH_STORE"] = "plain"
    assert run("", world["repo"]).stdout.splitlines()[1] == "thatch: plain · 1 memory"
    # No database at all: nothing to say, and none gets created.
    env.pop("THATCH_STORE")
    env["THATCH_DB"] = str(world["tmp"] / "absent.db")
    assert run("", world["repo"]).stdout.splitlines() == ["acme/widget\tmain"]
    assert not (world["tmp"] / "absent.db").exists()
    # A broken database: still just the state, no traceback.
    (world["tmp"] / "broken.db").write_text("not a database")
    env["THATCH_DB"] = str(world["tmp"] / "broken.db")
    broken = run("", world["repo"])
    assert broken.returncode == 0 and broken.stderr == ""
    assert broken.stdout.splitlines() == ["acme/widget\tmain"]


def test_summary_line_rules():
    from thatch_cli.hot.prompt import summary_line

    assert summary_line("acme/widget", "main", {None: 0}, 0) is None
    assert summary_line("acme/widget", "feat/x", {None: 1}, 0) == "thatch: acme/widget · 1 memory"
    assert summary_line("a/b", "feat/x", {None: 2, "feat/x": 3, "old": 1}, 1) == \
        "thatch: a/b · 6 memories · 3 on feat/x · 1 orphaned (thatch hygiene)"
    # A store name from a remote URL cannot smuggle escape sequences to the terminal.
    assert "\x1b" not in summary_line("evil\x1b]0;pwned\x07/x", None, {None: 1}, 0)
