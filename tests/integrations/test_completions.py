"""Shell completion: the generated scripts in real bash, zsh and fish, the
`thatch _complete` hot path behind them, and `thatch completion install`."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from thatch_cli.cli.fastpath import load_spec
from thatch_cli.gen import completions as gen
from thatch_cli.integrations import completion as completion_install
from thatch_cli.integrations.completion_scripts import render_all, tree
from thatch_cli.memory.records import Memory
from thatch_cli.storage.memories import MemoryDB

from helpers import git, require, run_probed

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = {shell: ROOT / "completions" / name for shell, name in gen.FILES.items()}
STORE = "acme/widget"
LABELS = ["deploy steps", "deploy notes", "TODO: fix deploy", "Ünïcode label"]


def add(db: MemoryDB, store: str, label: str, branch: str | None = None) -> None:
    slug = re.sub(r"\W+", "-", label.lower()).strip("-")
    db.save(Memory(store=store, slug=slug, label=label, content=f"# {label}\n\nx", branch=branch,
                   created_at="2026-01-01T00:00:00.000Z", updated_at="2026-01-01T00:00:00.000Z"),
            overwrite=False, archived=None)


@pytest.fixture
def world(isolated_env, git_repo, tmp_path):
    """A repository of store acme/widget, a database with labels in three
    stores, and a PATH whose `thatch` runs this working tree and logs each call."""
    repo = git_repo("widget", remote="git@github.com:acme/widget.git")
    db = MemoryDB.open(Path(isolated_env["THATCH_DB"]))
    for label in LABELS:
        add(db, STORE, label)
    add(db, STORE, "feature wip", branch="feat/x")
    add(db, "global", "global tip")
    add(db, "team/notes", "team thing")
    db.close()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "calls.log"
    shim = bin_dir / "thatch"
    shim.write_text(f'#!/bin/sh\necho "$*" >> "{log}"\nexec "{sys.executable}" -m thatch_cli "$@"\n')
    shim.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "TERM": "xterm",
           "PYTHONPATH": str(ROOT)}
    env.pop("THATCH_STORE", None)
    return {"repo": repo, "env": env, "log": log}


# -- the hot path ------------------------------------------------------------------------


def complete(world, *args, cwd=None):
    result = subprocess.run([sys.executable, "-m", "thatch_cli", "_complete", *args], cwd=cwd or world["repo"],
                            env=world["env"], capture_output=True, text=True, timeout=30)
    return result.returncode, result.stdout.splitlines(), result.stderr


def test_complete_values(world, tmp_path):
    code, lines, _ = complete(world, "labels")
    assert code == 0
    assert lines == sorted(LABELS + ["feature wip", "global tip"])  # detected store plus global
    assert complete(world, "labels", "--store", "team/notes")[1] == ["team thing"]
    assert complete(world, "labels", "--store=global")[1] == ["global tip"]
    assert complete(world, "stores")[1] == ["acme/widget", "global", "team/notes"]
    git(world["repo"], "branch", "other")
    assert complete(world, "branches")[1] == ["feat/x", "main", "other"]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert complete(world, "branches", "--store", STORE, cwd=elsewhere)[1] == ["feat/x"]
    code, lines, err = complete(world, "nonsense")
    assert code == 2 and lines == [] and "usage" in err


def test_complete_never_creates_the_database(world, tmp_path):
    world["env"]["THATCH_DB"] = str(tmp_path / "absent" / "thatch.db")
    assert complete(world, "labels") == (0, [], "")
    assert complete(world, "stores")[1] == ["global"]
    assert not (tmp_path / "absent").exists()


HEAVY = ("typer", "click", "rich", "dulwich", "numpy", "torch", "sentence_transformers", "typing")


@pytest.mark.parametrize("kind", ["labels", "stores", "branches"])
def test_complete_imports_nothing_heavy(world, kind, tmp_path):
    complete(world, "labels")  # warms the store-identity cache, as any earlier thatch run does
    result, modules = run_probed(["_complete", kind], env=world["env"], cwd=world["repo"], tmp_path=tmp_path,
                                 timeout=30)
    assert result.returncode == 0 and result.stdout
    assert modules, result.stderr  # the probe reported
    assert sorted(modules & set(HEAVY)) == []


# -- bash ----------------------------------------------------------------------------------


BASH_DRIVER = r'''
source "$1"; shift
while IFS= read -r case; do
    eval "COMP_WORDS=($case)"
    COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
    COMPREPLY=()
    _thatch
    printf '%s\n' "${COMPREPLY[@]}"
    echo '--END--'
done
'''


def bash_complete(world, cases: list[str]) -> list[list[str]]:
    """Each case is a bash word list as typed (quoted for eval); returns COMPREPLY per case."""
    result = subprocess.run(["bash", "--norc", "--noprofile", "-c", BASH_DRIVER, "bash", str(SCRIPTS["bash"])],
                            input="\n".join(cases) + "\n", cwd=world["repo"], env=world["env"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    replies = result.stdout.split("--END--\n")[:-1]
    assert len(replies) == len(cases), result.stdout
    return [sorted(r.splitlines()) if r.strip() else [] for r in replies]


def test_bash_completes_commands_and_options_without_a_process(world):
    cases = {
        "thatch ''": sorted(["archive", "completion", "dedup", "forget", "hygiene", "list", "recall", "reindex",
                             "remember", "rescope", "show", "stores"]),
        "thatch hy": ["hygiene"],
        "thatch dedup ''": ["keep", "list", "mark"],
        "thatch completion ''": ["install", "show"],
        "thatch hygiene --st": ["--stale-days", "--store"],
        "thatch rescope --": ["--from", "--global", "--help", "--json", "--store", "--to", "--unscoped"],
        "thatch dedup keep -": ["--global", "--help", "--json", "--store", "-g", "-h", "-s"],
        "thatch completion install ''": ["bash", "fish", "zsh"],
        "thatch completion show z": ["zsh"],
        "thatch init ''": ["bash", "fish", "zsh"],
        # Fixed choices (cli.one_of), for an option's value in every spelling.
        "thatch recall --mode ''": ["hybrid", "lexical", "semantic"],
        "thatch recall 'some\\ query' -m ''": ["hybrid", "lexical", "semantic"],
        "thatch recall q --mode = s": ["semantic"],
        "thatch recall --mode lexical ''": [],  # the query
        "thatch dedup mark a b --status s": ["supplement"],
        "thatch dedup mark a b --status ''": ["contradiction", "duplicate", "supplement", "unrelated"],
        "thatch dedup mark --status x": [],
        "thatch hygiene --stale-days ''": [],
        "thatch recall ''": [],
        "thatch -": ["--help", "--version", "-V", "-h", "-v"],
    }
    got = bash_complete(world, list(cases))
    for (case, want), reply in zip(cases.items(), got):
        if case == "thatch ''":
            assert set(want) <= set(reply), reply  # other areas add commands too
            assert not any(r.startswith("_") for r in reply)
        else:
            assert reply == want, case
    assert not world["log"].exists()  # static lists: thatch never ran


def test_bash_completes_labels_stores_and_branches(world):
    cases = {
        "thatch show dep": ["deploy\\ notes", "deploy\\ steps"],
        "thatch show 'deploy\\ s'": ["deploy\\ steps"],  # backslash-escaped as typed
        "thatch show \"'deploy s\"": ["deploy steps"],  # inside an open quote: bare
        "thatch forget TODO : ''": ["\\ fix\\ deploy"],  # readline replaces after the ':'
        "thatch show Ü": ["Ünïcode\\ label"],
        "thatch dedup keep 'deploy\\ steps' dep": ["deploy\\ notes", "deploy\\ steps"],
        "thatch show --store team/notes ''": ["team\\ thing"],
        "thatch show -s global g": ["global\\ tip"],
        "thatch show 'deploy\\ steps' ''": ["acme/widget", "global", "team/notes"],  # show LABEL [STORE]
        "thatch show 'deploy\\ steps' global ''": [],  # and nothing more
        "thatch list ''": ["acme/widget", "global", "team/notes"],
        "thatch remember --store gl": ["global"],
        "thatch rescope --from ''": ["feat/x", "main"],
        "thatch rescope --from = f": ["feat/x"],
        "thatch archive -b ''": ["feat/x", "main"],
        # Arguments whose names do not say what they take declare it (cli/declare.py complete=).
        "thatch rename dep": ["deploy\\ notes", "deploy\\ steps"],
        "thatch stores --drop ''": ["acme/widget", "global", "team/notes"],
        "thatch search deploy ''": ["acme/widget", "global", "team/notes"],
        "thatch config get recall.": ["recall.floor", "recall.limit"],
        "thatch config set daemon.i": ["daemon.idle"],
        "thatch config unset mo": ["model"],
        "thatch setup ''": ["claude", "codex", "cursor"],
        "thatch help rem": ["remember"],
    }
    if "import" in tree(gen.definitions()).children:
        cases["thatch import ./RE"] = ["./README"]  # files where a command reads one
    got = bash_complete(world, list(cases))
    assert dict(zip(cases, got)) == cases


def test_bash_reply_round_trips_through_the_shell(world):
    """What bash inserts for a label with spaces reads back as that label."""
    [[reply]] = bash_complete(world, ["thatch show 'deploy\\ s'"])
    out = subprocess.run(["bash", "-c", f"printf '%s' {reply}"], capture_output=True, text=True).stdout
    assert out == "deploy steps"


# -- zsh -----------------------------------------------------------------------------------


def test_zsh_script_parses():
    if not shutil.which("zsh"):
        pytest.skip("zsh not installed (apt-get install zsh)")
    result = subprocess.run(["zsh", "-n", str(SCRIPTS["zsh"])], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert SCRIPTS["zsh"].read_text().startswith("#compdef thatch\n")


_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][A-Z0-9]|\x1b[=>]|[\x07\x08\r]")


class Terminal:
    """An interactive shell on a pseudo-terminal, typed into like a person would."""

    def __init__(self, argv: list[str], env: dict, cwd: Path) -> None:
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # child
            os.chdir(cwd)
            os.execvpe(argv[0], argv, env)
        self.buffer = ""

    def read_until(self, pattern: str, timeout: float = 10.0) -> str:
        deadline = time.time() + timeout
        while time.time() < deadline:
            clean = _ANSI.sub("", self.buffer)
            if re.search(pattern, clean):
                self.buffer = ""
                return clean
            ready, _, _ = select.select([self.fd], [], [], 0.05)
            if ready:
                try:
                    self.buffer += os.read(self.fd, 65536).decode("utf-8", "replace")
                except OSError:
                    break
        raise AssertionError(f"no {pattern!r} in {_ANSI.sub('', self.buffer)!r}")

    def type(self, text: str) -> None:
        os.write(self.fd, text.encode())

    def close(self) -> None:
        os.kill(self.pid, 9)
        os.waitpid(self.pid, 0)
        os.close(self.fd)


def zsh_terminal(world, tmp_path) -> Terminal:
    """An interactive zsh with the generated completion loaded, at its prompt."""
    fpath = tmp_path / "zfunc"
    fpath.mkdir()
    shutil.copy(SCRIPTS["zsh"], fpath / "_thatch")
    term = Terminal(["zsh", "-f", "-i"], world["env"], world["repo"])
    term.type(f"fpath=({fpath} $fpath); autoload -U compinit; compinit -u -D; PS1='READY> '\n")
    term.read_until(r"READY> $")
    return term


def test_zsh_completes_in_a_real_shell(world, tmp_path):
    if not shutil.which("zsh"):
        pytest.skip("zsh not installed (apt-get install zsh)")
    term = zsh_terminal(world, tmp_path)
    try:
        cases = [
            ("thatch hyg", r"thatch hygiene $"),
            ("thatch dedup k", r"thatch dedup keep $"),
            ("thatch rescope --fr", r"thatch rescope --from=?$"),
            ("thatch show deploy\\ s", r"thatch show deploy\\ steps $"),
            ("thatch forget TOD", r"thatch forget TODO:\\ fix\\ deploy $"),
            ("thatch show -s team/notes t", r"thatch show -s team/notes team\\ thing $"),
            ("thatch completion install z", r"thatch completion install zsh $"),
            ("thatch rescope --from fe", r"thatch rescope --from feat/x $"),
            ("thatch recall --mode sem", r"thatch recall --mode semantic $"),
            ("thatch dedup mark a b --status s", r"thatch dedup mark a b --status supplement $"),
            ("thatch init f", r"thatch init fish $"),
            ("thatch rename deploy\\ s", r"thatch rename deploy\\ steps $"),
            ("thatch stores --drop tea", r"thatch stores --drop team/notes $"),
            ("thatch config get recall.fl", r"thatch config get recall.floor $"),
            ("thatch setup cl", r"thatch setup claude $"),
        ]
        complete_each(term, cases)
        # Ambiguous: zsh lists the candidates (with descriptions) below the line.
        term.type("thatch s\t")
        listing = term.read_until(r"stores")
        assert "show" in listing and "Print one memory" in listing
        # Fixed choices: exactly those, listed below the line before zsh redraws it.
        for number, typed in enumerate(["thatch recall --mode ", "thatch recall q -m "]):
            term.type(f"\x15echo SYNC-choices-{number}\n")
            term.read_until(rf"\nSYNC-choices-{number}\n.*READY> $")
            term.type(typed + "\t")
            between = rf"(?s){re.escape(typed)}\n(.+?){re.escape(typed.rstrip())}"
            listing = re.search(between, term.read_until(between)).group(1)
            assert sorted(listing.split()) == ["hybrid", "lexical", "semantic"], listing
    finally:
        term.close()


# -- fish ----------------------------------------------------------------------------------


def fish_complete(world, lines: list[str]) -> list[dict[str, str]]:
    program = f"source {SCRIPTS['fish']}; for c in $argv; complete -C $c; echo --END--; end"
    result = subprocess.run(["fish", "--no-config", "-c", program, "--", *lines], cwd=world["repo"],
                            env=world["env"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    blocks = result.stdout.split("--END--\n")[:-1]
    assert len(blocks) == len(lines)
    return [dict((line.split("\t") + [""])[:2] for line in block.splitlines()) for block in blocks]


def test_fish_completes_everything(world):
    if not shutil.which("fish"):
        pytest.skip("fish not installed (apt-get install fish)")
    fish_lines = [
        "thatch ", "thatch hy", "thatch dedup ", "thatch hygiene --st", "thatch show dep",
        "thatch show 'deploy s", "thatch dedup keep deploy\\ steps dep", "thatch show --store team/notes ",
        "thatch rescope --from ", "thatch list ", "thatch completion install ", "thatch recall ",
        "thatch show TODO", "thatch recall --mode ", "thatch recall q -m ", "thatch dedup mark a b --status s",
        "thatch dedup mark a b --status ", "thatch init ", "thatch completion show ",
        "thatch rename dep", "thatch stores --drop ", "thatch config get recall.", "thatch setup ",
    ]
    got = dict(zip(fish_lines, fish_complete(world, fish_lines)))
    assert {"hygiene", "dedup", "completion", "rescope", "archive"} <= set(got["thatch "])
    assert got["thatch "]["hygiene"].startswith("Report near-duplicates")
    assert list(got["thatch hy"]) == ["hygiene"]
    assert set(got["thatch dedup "]) == {"keep", "list", "mark"}
    assert set(got["thatch hygiene --st"]) == {"--stale-days", "--store"}
    assert set(got["thatch show dep"]) == {"deploy notes", "deploy steps"}
    assert set(got["thatch show 'deploy s"]) == {"deploy steps"}
    assert set(got["thatch dedup keep deploy\\ steps dep"]) == {"deploy notes", "deploy steps"}
    assert set(got["thatch show --store team/notes "]) == {"team thing"}
    assert set(got["thatch rescope --from "]) == {"feat/x", "main"}
    assert set(got["thatch list "]) == {"acme/widget", "global", "team/notes"}
    assert set(got["thatch completion install "]) == {"bash", "zsh", "fish"}
    assert got["thatch recall "] == {}
    assert set(got["thatch show TODO"]) == {"TODO: fix deploy"}
    assert set(got["thatch recall --mode "]) == {"hybrid", "semantic", "lexical"}
    assert set(got["thatch recall q -m "]) == {"hybrid", "semantic", "lexical"}
    assert set(got["thatch dedup mark a b --status s"]) == {"supplement"}
    assert set(got["thatch dedup mark a b --status "]) == {"duplicate", "supplement", "contradiction", "unrelated"}
    assert set(got["thatch init "]) == set(got["thatch completion show "]) == {"bash", "zsh", "fish"}
    assert set(got["thatch rename dep"]) == {"deploy notes", "deploy steps"}
    assert set(got["thatch stores --drop "]) == {"acme/widget", "global", "team/notes"}
    assert set(got["thatch config get recall."]) == {"recall.floor", "recall.limit"}
    assert set(got["thatch setup "]) == {"claude", "codex", "cursor"}


# -- completion install / show ---------------------------------------------------------------


def run_json(cli, *args, **kwargs):
    result = cli(*args, "--json", **kwargs)
    assert "Traceback" not in result.output, result.output
    return result.exit_code, json.loads(result.stdout)


@pytest.mark.parametrize("shell, relative", [
    ("bash", ".local/share/bash-completion/completions/thatch"),
    ("zsh", ".zfunc/_thatch"),
    ("fish", ".config/fish/completions/thatch.fish"),
])
def test_install_writes_the_generated_script_idempotently(cli, isolated_env, shell, relative):
    target = Path(isolated_env["HOME"]) / relative
    code, data = run_json(cli, "completion", "install", shell)
    assert code == 0 and set(data) == {"shell", "path", "status", "notes"}
    assert (data["shell"], data["path"], data["status"]) == (shell, str(target), "installed")
    generated = render_all(gen.definitions())[shell]
    assert target.read_text() == generated == SCRIPTS[shell].read_text()
    assert run_json(cli, "completion", "install", shell)[1]["status"] == "unchanged"
    assert "already up to date" in cli("completion", "install", shell).stdout
    target.write_text("# an older thatch's script\n")
    assert run_json(cli, "completion", "install", shell)[1]["status"] == "updated"
    assert target.read_text() == generated


def test_install_tells_zsh_users_about_fpath_only_when_needed(cli, isolated_env):
    notes = run_json(cli, "completion", "install", "zsh")[1]["notes"]
    assert any("fpath=(~/.zfunc $fpath)" in n for n in notes)
    (Path(isolated_env["HOME"]) / ".zshrc").write_text("fpath=(~/.zfunc $fpath)\nautoload -U compinit; compinit\n")
    notes = run_json(cli, "completion", "install", "zsh")[1]["notes"]
    assert not any("fpath=" in n for n in notes)


def _line_to_add(notes: list[str], marker: str) -> str:
    """The shell line a note of `completion install` tells the user to add (after its last ': ')."""
    [note] = [n for n in notes if marker in n]
    return note.rsplit(": ", 1)[1]


def _completes_in_a_new_shell(argv, env, cwd) -> None:
    term = Terminal(argv, env, cwd)
    try:
        term.type("PS1='READY> '; PROMPT=$PS1\n")
        term.read_until(r"READY> $", timeout=20)
        term.type("thatch hyg\t")
        term.read_until(r"thatch hygiene $", timeout=20)
    finally:
        term.close()


def test_the_bash_hint_is_true_on_a_plain_bashrc(cli, isolated_env, tmp_path):
    """Without bash-completion in any startup file, install says what to add to ~/.bashrc,
    and with that line alone a new interactive bash completes thatch."""
    home = Path(isolated_env["HOME"])
    (home / ".bashrc").write_text("# a plain bashrc\nalias ll='ls -l'\n")
    notes = run_json(cli, "completion", "install", "bash")[1]["notes"]
    if any("bash-completion loads it" in n for n in notes):
        pytest.skip("this machine's bash loads bash-completion for every user")
    line = _line_to_add(notes, "Nothing loads bash-completion here")
    assert line == f"source {home}/.local/share/bash-completion/completions/thatch"
    with open(home / ".bashrc", "a") as fh:
        fh.write(line + "\n")
    assert run_json(cli, "completion", "install", "bash")[1]["notes"] == [f"{home / '.bashrc'} sources it: new shells have it."]
    _completes_in_a_new_shell(["bash", "-i"], {**os.environ, **isolated_env, "TERM": "dumb"}, tmp_path)


DEBIAN_BASHRC = """\
# the completion block of Debian's and Ubuntu's stock ~/.bashrc
if ! shopt -oq posix; then
  if [ -f /usr/share/bash-completion/bash_completion ]; then
    . /usr/share/bash-completion/bash_completion
  elif [ -f /etc/bash_completion ]; then
    . /etc/bash_completion
  fi
fi
"""


def test_a_stock_bashrc_without_the_bash_completion_package_gets_the_line_to_add(cli, isolated_env, tmp_path):
    """Debian's ~/.bashrc names the loader but loads it only if the package is
    installed: without it, install must not claim that new shells complete."""
    if any(Path(loader).is_file() for loader in completion_install.LOADERS):
        pytest.skip("bash-completion is installed here: its loader exists")
    home = Path(isolated_env["HOME"])
    (home / ".bashrc").write_text(DEBIAN_BASHRC)
    notes = run_json(cli, "completion", "install", "bash")[1]["notes"]
    assert not any("bash-completion loads it" in n for n in notes), notes
    line = _line_to_add(notes, "Nothing loads bash-completion here")
    with open(home / ".bashrc", "a") as fh:
        fh.write(line + "\n")
    _completes_in_a_new_shell(["bash", "-i"], {**os.environ, **isolated_env, "TERM": "dumb"}, tmp_path)


def test_the_zsh_hints_are_true_on_a_plain_zshrc(cli, isolated_env, tmp_path):
    """An empty ~/.zshrc: install says to add the fpath line and to start compinit after it;
    with those two lines a new interactive zsh completes thatch."""
    if not shutil.which("zsh"):
        pytest.skip("zsh not installed (apt-get install zsh)")
    home = Path(isolated_env["HOME"])
    (home / ".zshrc").write_text("")
    notes = run_json(cli, "completion", "install", "zsh")[1]["notes"]
    lines = [_line_to_add(notes, "before compinit runs"), _line_to_add(notes, "completion system")]
    assert lines == ["fpath=(~/.zfunc $fpath)", "autoload -Uz compinit && compinit"]
    (home / ".zshrc").write_text("\n".join(lines) + "\n")
    assert not any("compinit" in n and "add" in n for n in run_json(cli, "completion", "install", "zsh")[1]["notes"])
    env = {**os.environ, **isolated_env, "ZDOTDIR": str(home), "TERM": "dumb"}
    _completes_in_a_new_shell(["zsh", "-i"], env, tmp_path)


def test_install_detects_the_shell_or_says_so(cli, monkeypatch):
    import shellingham

    def fail(*_a, **_k):
        raise shellingham.ShellDetectionFailure()

    monkeypatch.setattr(shellingham, "detect_shell", fail)
    assert run_json(cli, "completion", "install", SHELL="/usr/bin/fish")[1]["shell"] == "fish"
    result = cli("completion", "install", SHELL="/bin/tcsh")
    assert result.exit_code == 2 and "unsupported shell" in result.stderr
    monkeypatch.setattr(shellingham, "detect_shell", lambda *a, **k: ("zsh", "/bin/zsh"))
    assert run_json(cli, "completion", "install", SHELL="/bin/tcsh")[1]["shell"] == "zsh"
    result = cli("completion", "install", "nushell")
    assert result.exit_code == 2 and "unsupported shell" in result.stderr


def test_show_prints_the_script(cli):
    for shell in ("bash", "zsh", "fish"):
        result = cli("completion", "show", shell)
        assert result.exit_code == 0 and result.stdout == completion_install.script(shell, load_spec())
    assert run_json(cli, "completion", "show", "fish")[1] == {"shell": "fish",
                                                                 "script": SCRIPTS["fish"].read_text()}
    assert cli("completion", "show", "csh").exit_code == 2


# -- labels that start with '-' ------------------------------------------------------------


@pytest.fixture
def dashed(world, isolated_env):
    """The world plus a label that reads like an option."""
    db = MemoryDB.open(Path(isolated_env["THATCH_DB"]))
    add(db, STORE, "-v is verbose")
    db.close()
    return world


def test_bash_puts_a_dash_label_after_double_dash(dashed):
    got = bash_complete(dashed, ["thatch show -v", "thatch show -- -v", "thatch forget ''", "thatch show -",
                                 "thatch show --st"])
    assert got[0] == ["-- -v\\ is\\ verbose"]
    assert got[1] == ["-v\\ is\\ verbose"]  # already after --
    assert "-- -v\\ is\\ verbose" in got[2] and "deploy\\ steps" in got[2]
    assert got[3] == ["--global", "--help", "--json", "--store", "-g", "-h", "-s"]  # a lone '-' completes options
    assert got[4] == ["--store"]
    # What bash inserts reads back as two words: the separator, then the label.
    out = subprocess.run(["bash", "-c", f"words=({got[0][0]}); printf '<%s>' \"${{words[@]}}\""],
                         capture_output=True, text=True).stdout
    assert out == "<--><-v is verbose>"


def test_zsh_puts_a_dash_label_after_double_dash(dashed, tmp_path):
    require("zsh")
    term = zsh_terminal(dashed, tmp_path)
    try:
        complete_each(term, [("thatch show -- -v", r"thatch show -- -v\\ is\\ verbose $"),
                             ("thatch forget TOD", r"thatch forget TODO:\\ fix\\ deploy $")])
        term.type("thatch history \t")
        listing = term.read_until(r"verbose")
        assert "deploy\\ steps" in listing
        term.type("\x15echo SYNC-x\n")
        term.read_until(r"\nSYNC-x\n.*READY> $")
        term.type("setopt menu_complete\n")
        term.read_until(r"READY> $")
        # Menu completion inserts the first candidate: the dash label, behind '-- '.
        term.type("thatch history \t")
        term.read_until(r"thatch history -- -v\\ is\\ verbose$")
    finally:
        term.close()


def test_fish_offers_double_dash_before_a_dash_label(dashed):
    require("fish")
    got = fish_complete(dashed, ["thatch show ", "thatch show -- ", "thatch show -- -v"])
    assert "-v is verbose" not in got[0] and got[0]["--"] == "then labels that start with '-'"
    assert "deploy steps" in got[0]
    assert "-v is verbose" in got[1] and "--" not in got[1]
    assert list(got[2]) == ["-v is verbose"]


def complete_each(term, cases: list[tuple[str, str]]) -> None:
    """Type each line and Tab, wait until the screen shows `expected`, then
    kill the line (^U) and wait for a marker so the next case starts clean."""
    for number, (typed, expected) in enumerate(cases):
        term.type(typed + "\t")
        term.read_until(expected)
        term.type(f"\x15echo SYNC-{number}\n")
        term.read_until(rf"\nSYNC-{number}\n.*READY> $")
