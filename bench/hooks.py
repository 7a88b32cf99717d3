"""Cost of thatch's shell and git hooks. Run: python bench/hooks.py [--runs N]

Builds a throwaway repository and database in a temp dir, then measures
(medians over --runs repetitions, every ratio taken within the same run):

1. the per-prompt cost the bash/zsh/fish hook adds when nothing changed: one
   shell process times N calls of the hook function and N calls of an empty
   function, back to back; the difference per call is the added cost
   (budget 5 ms). A wrapper counts thatch starts to prove none happened;
2. `thatch _hook prompt`, whole process, when the state changed (it prints
   the summary) and when it did not (budget 50 ms);
3. `thatch _githook post-checkout` and `_githook branch-deleted`, whole
   process (budget 50 ms);
4. the completion queries `thatch _complete labels|stores` (budget 50 ms);
5. `python -c pass`, for scale;
6. what the git hooks add to one `git switch` (`--switch-only`: this alone),
   interleaved: no hooks, thatch's hooks when nothing changed (the cached
   line), right after a database write (thatch runs), and in a shell
   running the shell hook (budget 50 ms per switch);
7. the shell hook's warm-up (daemon.warm.maybe_warm, in this process):
   a call that starts the daemon returns before its model loads (budget
   500 ms), and a call while it is up is a file check (budget 2 ms).

Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from thatch_cli.integrations import shell as shellinit
from thatch_cli.memory.records import Memory  # noqa: E402
from thatch_cli.storage.memories import MemoryDB  # noqa: E402

THATCH = shutil.which("thatch") or str(Path(sys.executable).with_name("thatch"))
CALLS = 2000  # hook calls per shell run
BUSY = "import os\nwhile True:\n    os.getpid()\n"

# Each prints "<hook seconds> <baseline seconds>" for CALLS calls.
LOOPS = {
    "bash": """
source {script}
_thatch_base() {{ local ret=$?; return $ret; }}
cd {repo}; _thatch_hook
t0=$EPOCHREALTIME; for ((i = 0; i < {n}; i++)); do _thatch_hook; done; t1=$EPOCHREALTIME
for ((i = 0; i < {n}; i++)); do _thatch_base; done; t2=$EPOCHREALTIME
echo "$(( ${{t1/./}} - ${{t0/./}} )) $(( ${{t2/./}} - ${{t1/./}} ))"
""",
    "zsh": """
zmodload zsh/datetime
source {script}
_thatch_base() {{ local ret=$?; return $ret; }}
cd {repo}; _thatch_hook
t0=$EPOCHREALTIME; for ((i = 0; i < {n}; i++)); do _thatch_hook; done; t1=$EPOCHREALTIME
for ((i = 0; i < {n}; i++)); do _thatch_base; done; t2=$EPOCHREALTIME
printf '%d %d\\n' $(( (t1 - t0) * 1000000 )) $(( (t2 - t1) * 1000000 ))
""",
    "fish": """
source {script}
function _thatch_base; set -l ret $status; return $ret; end
cd {repo}; __thatch_hook
set -l range (seq {n})
set -l t0 (date +%s%6N)
for i in $range; __thatch_hook; end
set -l t1 (date +%s%6N)
for i in $range; _thatch_base; end
set -l t2 (date +%s%6N)
echo (math $t1 - $t0) (math $t2 - $t1)
""",
}


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def time_process(argv: list[str], runs: int, **kwargs) -> list[float]:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False, **kwargs)
        samples.append(time.perf_counter() - start)
    return samples


def git(cwd: Path, *args: str, env: dict) -> None:
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


def setup(tmp: Path) -> tuple[Path, dict]:
    # Bytecode as users have it: pip compiles installed packages, and an
    # editable checkout compiles on first import unless told not to.
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GIT_", "THATCH_")) and k != "PYTHONDONTWRITEBYTECODE"}
    env.update(
        HOME=str(tmp), XDG_CACHE_HOME=str(tmp / "cache"), XDG_RUNTIME_DIR=str(tmp / "run"),
        THATCH_DB=str(tmp / "thatch.db"), THATCH_DAEMON="0",
        GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1",
        GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@example.com", GIT_COMMITTER_NAME="b",
        GIT_COMMITTER_EMAIL="b@example.com",
    )
    (tmp / "run").mkdir(mode=0o700)
    repo = tmp / "widget"
    (repo / "src" / "deep" / "er").mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main", env=env)
    git(repo, "commit", "-q", "--allow-empty", "-m", "init", env=env)
    git(repo, "remote", "add", "origin", "git@github.com:acme/widget.git", env=env)
    for i in range(20):
        git(repo, "branch", f"feat/b{i}", env=env)
    db = MemoryDB.open(Path(env["THATCH_DB"]))
    for i in range(200):
        branch = f"feat/b{i % 25}" if i % 2 else None  # some on branches that do not exist
        db.save(Memory(store="acme/widget", slug=f"m{i}", label=f"Memory {i}", content=f"text {i}",
                       branch=branch, created_at="2026-01-01T00:00:00.000Z", updated_at="2026-01-01T00:00:00.000Z"),
                overwrite=False, archived=None)
    db.close()
    # Warm the identity cache, as any real prompt after the first would have.
    subprocess.run([THATCH, "_hook", "prompt"], cwd=repo, env=env, check=True, capture_output=True)
    return repo, env


def shell_cost(shell: str, repo: Path, env: dict, tmp: Path, runs: int) -> tuple[list[float], int] | None:
    if not shutil.which(shell):
        return None
    log = tmp / f"{shell}.starts"
    wrapper = tmp / f"thatch-{shell}"
    wrapper.write_text(f"#!/bin/sh\necho x >> {shellinit.sh_quote(str(log))}\n"
                       f"exec {shellinit.sh_quote(THATCH)} \"$@\"\n")
    wrapper.chmod(0o755)
    script = tmp / f"init.{shell}"
    script.write_text(shellinit.render(shell, str(wrapper)))
    code = LOOPS[shell].format(script=shellinit.quote(shell, str(script)),
                               repo=shellinit.quote(shell, str(repo / "src" / "deep" / "er")), n=CALLS)
    argv = {"bash": ["bash", "--norc", "--noprofile", "-c"], "zsh": ["zsh", "-f", "-c"],
            "fish": ["fish", "--no-config", "-i", "-c"]}[shell]
    per_call = []
    for _ in range(runs):
        out = subprocess.run([*argv, code], env=env, capture_output=True, text=True, check=True).stdout.split()
        hook_us, base_us = float(out[0]), float(out[1])
        per_call.append((hook_us - base_us) / CALLS / 1e6)
    starts = len(log.read_text().splitlines()) if log.exists() else 0
    return per_call, starts - runs  # one start per run is the priming call


def warm_cost(env: dict, runs: int) -> list[tuple[str, str, str, str]]:
    """maybe_warm's cost: spawning the daemon (it must not wait for the
    model), then checking on the daemon it started, with a fake model."""
    from thatch_cli.daemon import runtime
    from thatch_cli.daemon.warm import maybe_warm

    warm_env = {**env, "THATCH_DAEMON": "1", "THATCH_MODEL": "fake:32"}
    rundir = runtime.runtime_dir(warm_env)
    spawns, checks = [], []
    try:
        for _ in range(max(1, min(runs, 5))):
            subprocess.run([THATCH, "daemon", "stop"], env=warm_env, capture_output=True, check=False)
            start = time.perf_counter()
            maybe_warm(warm_env)
            spawns.append(time.perf_counter() - start)
            deadline = time.monotonic() + 30
            while runtime.read_pidfile(rundir) is None and time.monotonic() < deadline:
                time.sleep(0.02)
        for _ in range(runs * 10):
            start = time.perf_counter()
            maybe_warm(warm_env)
            checks.append(time.perf_counter() - start)
    finally:
        subprocess.run([THATCH, "daemon", "stop"], env=warm_env, capture_output=True, check=False)
    return [("shell hook warm-up, starting the daemon (maybe_warm)", f"{median_ms(spawns):.1f} ms", "≤ 500 ms",
             f"{len(spawns)} starts; returns before the model loads"),
            ("shell hook warm-up, daemon up (maybe_warm)", f"{median_ms(checks) * 1000:.0f} µs", "≤ 2 ms",
             f"{len(checks)} calls")]


def switch_cost(repo: Path, env: dict, runs: int, others: dict[str, str] | None = None,
                this: str = THATCH) -> list[tuple[str, str, str, str]]:
    """What thatch's git hooks add to one `git switch` (to a branch with
    memories): each run times one switch there and one back with no hooks
    (an empty core.hooksPath), with the hooks (`thatch hooks install`) when
    nothing changed since thatch last ran (the script says the cached line),
    right after a write to the database (thatch runs), and in a shell running
    thatch's shell hook (THATCH_SHELL_HOOK exported), interleaved so each
    difference compares switches made under the same load. `others` (name ->
    thatch executable) get a clone of the repository each, their own hooks
    installed by themselves, and the same cases in the same rounds."""
    empty = repo.parent / "no-hooks"
    empty.mkdir(exist_ok=True)
    db = env["THATCH_DB"]
    long_ago = (1_700_000_000, 1_700_000_000)  # older than any cache written here
    repos = {"": (repo, this)}
    if others:  # every variant in a clone of its own, made the same way
        repos = {}
        for name, executable in {"": this, **others}.items():
            clone = repo.parent / f"widget-{len(repos)}"
            git(repo.parent, "clone", "-q", str(repo), clone.name, env=env)
            git(clone, "remote", "set-url", "origin", "git@github.com:acme/widget.git", env=env)
            git(clone, "branch", "feat/b1", "origin/feat/b1", env=env)
            subprocess.run([executable, "_hook", "prompt"], cwd=clone, env=env, check=True, capture_output=True)
            repos[name] = (clone, executable)
        repo = repos[""][0]

    def still() -> None:
        for path in (db, db + "-wal", *(str(r / ".git" / "config") for r, _ in repos.values())):
            if os.path.exists(path):
                os.utime(path, long_ago)

    def written() -> None:
        os.utime(db, None)  # as a save would: the cache is stale, thatch counts again

    cases: dict[str, tuple[Path, list[str], dict, Callable[[], None]]] = {"none": (repo, ["-c", f"core.hooksPath={empty}"], env, still)}
    for name, (where, _) in repos.items():
        cases[f"hooks{name}"] = (where, [], env, still)
        cases[f"changed{name}"] = (where, [], env, written)
    cases["shell"] = (repo, [], {**env, "THATCH_SHELL_HOOK": "bash"}, still)
    for where, executable in repos.values():
        subprocess.run([executable, "hooks", "install", "--repo", str(where)], env=env, check=True,
                       capture_output=True)
        still()
        for branch in ("feat/b1", "main"):  # thatch runs once and writes the cache
            git(where, "switch", "-q", branch, env=env)
    samples: dict[str, list[float]] = {case: [] for case in cases}
    for _ in range(runs):
        for case, (where, options, case_env, before) in cases.items():
            for branch in ("feat/b1", "main"):
                before()
                samples[case] += time_process(["git", *options, "switch", "-q", branch], 1, cwd=where, env=case_env)
    for where, executable in repos.values():
        subprocess.run([executable, "hooks", "uninstall", "--repo", str(where)], env=env, capture_output=True)
    bare = median_ms(samples["none"])
    rows = [("`git switch`, no hooks (per switch)", f"{bare:.1f} ms", "", f"{len(samples['none'])} switches")]
    labels = [("hooks", "thatch hooks, nothing changed"), ("changed", "thatch hooks, database just written")]
    labels = [(case + name, label + (f", {name}" if name else "")) for name in repos for case, label in labels]
    for case, label in [*labels, ("shell", "thatch hooks, shell hook running")]:
        added = statistics.median(h - b for h, b in zip(samples[case], samples["none"])) * 1000
        rows.append((f"`git switch`, {label} (per switch)", f"{median_ms(samples[case]):.1f} ms", "+≤ 50 ms",
                     f"+{added:.1f} ms (median of paired differences)"))
    return rows


def main() -> int:
    import compileall

    compileall.compile_dir(str(ROOT / "thatch_cli"), quiet=1)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21, help="repetitions per measurement (default 21)")
    parser.add_argument("--switch-only", action="store_true", help="only what the git hooks add to `git switch`")
    parser.add_argument("--against", metavar="REV",
                        help="with --switch-only: also the hooks of commit REV, both it and this checkout"
                             " installed (not editable) into fresh virtualenvs, as users have them")
    parser.add_argument("--load", type=int, default=0, metavar="N",
                        help="with --switch-only: N busy processes while measuring (default 0)")
    args = parser.parse_args()
    runs = max(args.runs, 1)
    rows: list[tuple[str, str, str, str]] = []
    with tempfile.TemporaryDirectory(prefix="thatch-bench-") as name:
        tmp = Path(name)
        repo, env = setup(tmp)
        if args.switch_only:
            this, others = THATCH, {}
            if args.against:
                from machine import install_thatch

                this = str(install_thatch(tmp) / "thatch")
                others = {args.against: str(install_thatch(tmp, args.against) / "thatch")}
            busy = [subprocess.Popen([sys.executable, "-c", BUSY]) for _ in range(max(args.load, 0))]
            try:
                rows += switch_cost(repo, env, runs, others, this)
            finally:
                for process in busy:
                    process.kill()
            return report(runs, rows, args.load)
        for shell in ("bash", "zsh", "fish"):
            result = shell_cost(shell, repo, env, tmp, runs)
            if result is None:
                rows.append((f"{shell} hook, nothing changed (per prompt)", "not installed", "≤ 5 ms", ""))
                continue
            samples, extra_starts = result
            ms = median_ms(samples)
            rows.append((f"{shell} hook, nothing changed (per prompt)", f"{ms * 1000:.0f} µs", "≤ 5 ms",
                         f"{extra_starts} thatch starts in {runs}×{CALLS} prompts"))

        # Interleaved, so every ratio compares runs made under the same load.
        git(repo, "switch", "-q", "feat/b1", env=env)
        state = subprocess.run([THATCH, "_hook", "prompt"], cwd=repo, env=env, capture_output=True,
                               text=True).stdout.splitlines()[0]
        cases = {
            "`thatch _hook prompt`, state changed (prints)": [THATCH, "_hook", "prompt"],
            "`thatch _hook prompt`, state unchanged": [THATCH, "_hook", "prompt", "--prev", state],
            "`thatch _githook post-checkout`": [THATCH, "_githook", "post-checkout", "0", "0", "1"],
            "`thatch _githook branch-deleted` (branch still there)": [THATCH, "_githook", "branch-deleted",
                                                                     "--", "feat/b1"],
            "`thatch _complete labels`": [THATCH, "_complete", "labels"],
            "`thatch _complete stores`": [THATCH, "_complete", "stores"],
        }
        python: list[float] = []
        samples: dict[str, list[float]] = {label: [] for label in cases}
        for _ in range(runs):
            python += time_process([sys.executable, "-c", "pass"], 1, env=env)
            for label, argv in cases.items():
                samples[label] += time_process(argv, 1, cwd=repo, env=env)
        git(repo, "switch", "-q", "main", env=env)
        for label, values in samples.items():
            ratio = statistics.median(v / p for v, p in zip(values, python))
            rows.append((label, f"{median_ms(values):.1f} ms", "≤ 50 ms", f"{ratio:.1f}× python -c pass"))
        rows.append(("`python -c pass`", f"{median_ms(python):.1f} ms", "", "scale"))

        rows += switch_cost(repo, env, runs)
        rows += warm_cost(env, runs)

    return report(runs, rows)


def report(runs: int, rows: list[tuple[str, str, str, str]], busy: int = 0) -> int:
    print(f"thatch hook costs: median of {runs} runs, {os.cpu_count()} CPUs, Python {sys.version.split()[0]},"
          f" load average {os.getloadavg()[0]:.1f}" + (f", {busy} busy processes" if busy else "") + "\n")
    print("| measurement | median | budget | note |")
    print("|---|---:|---:|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
