"""Light commands against the original thatch: `python bench/light.py [--runs N]`.

Times `list`, `show` and `stores` of this thatch and of the original
(sysread/thatch, `bin/thatch` under Bun from the npm package bun@1.3.0) on
the same database, interleaved in one run (A B A B ...), and prints the
medians and their ratios as a Markdown table (saved to bench/results/).
Target: each ratio at most 1.0. `--against REV` also times the thatch of
commit REV in the same rounds, for a before/after table. `list` is measured twice: with the store
named, and detected from a git repository's origin (the original asks
`git remote get-url origin`, thatch reads its identity cache).

This thatch runs as users have it: installed (not editable) into a fresh
virtualenv, with compiled bytecode, through its `thatch` console script;
the virtualenv sees this interpreter's packages for what a light command
never imports. The original is cloned (`--original-repo`, default
https://github.com/sysread/thatch) into bench/.cache/original with its npm
dependencies (install scripts off: nothing here needs a GPU runtime), and
Bun goes to bench/.cache/bun. When any of that is not possible (no
network, no npm), the comparison falls back to `python -c pass` in the same
virtualenv, with a target of at most 2.5x.
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
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from machine import ROOT, install_thatch  # noqa: E402

CACHE = HERE / ".cache"
BUN_PACKAGE = "bun@1.3.0"  # the 1.4.x packages ship an empty Linux binary
STORE = "acme/widget"
MEMORIES = 30


def log(message: str) -> None:
    print(f"[light] {message}", file=sys.stderr, flush=True)


def original(repo: str) -> tuple[Path, Path] | None:
    """(checkout, bun executable) of the original thatch, set up under
    bench/.cache; None when it cannot be (no git remote, npm or network)."""
    checkout, bun_dir = CACHE / "original", CACHE / "bun"
    bun = bun_dir / "node_modules" / ".bin" / "bun"
    try:
        if not (checkout / "bin" / "thatch").is_file():
            shutil.rmtree(checkout, ignore_errors=True)
            log(f"cloning {repo}")
            subprocess.run(["git", "clone", "--quiet", "--depth", "1", repo, str(checkout)], check=True,
                           capture_output=True, timeout=300)
        if not (checkout / "node_modules").is_dir():
            log("npm install (the original's dependencies)")
            subprocess.run(["npm", "install", "--ignore-scripts", "--omit=dev", "--no-audit", "--no-fund"],
                           cwd=checkout, check=True, capture_output=True, timeout=900)
        if not bun.exists():
            log(f"npm install {BUN_PACKAGE}")
            bun_dir.mkdir(parents=True, exist_ok=True)
            subprocess.run(["npm", "install", "--prefix", str(bun_dir), "--no-audit", "--no-fund", BUN_PACKAGE],
                           check=True, capture_output=True, timeout=900)
        subprocess.run([str(bun), "--version"], check=True, capture_output=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as exc:
        detail = getattr(exc, "stderr", b"") or b""
        log(f"the original cannot be set up ({exc}{': ' + detail.decode(errors='replace')[-300:] if detail else ''})")
        return None
    return checkout, bun


def build_database(path: Path) -> None:
    """MEMORIES memories in STORE (the issue's shared 30-memory case), written
    by this thatch with a fake embedder: neither command reads the vectors."""
    sys.path.insert(0, str(ROOT))
    from thatch_cli.model.embeddings import FakeEmbedder
    from thatch_cli.ops.context import Context
    from thatch_cli.ops.remember import remember

    with Context.open(path, env={"HOME": str(path.parent), "THATCH_DAEMON": "0"}, cwd=path.parent,
                      embedder=FakeEmbedder(32)) as ctx:
        for n in range(1, MEMORIES + 1):
            remember(ctx, f"Deploy step {n}: build the wheel, tag release {n}.{n}, push the tag and watch CI"
                          f" until the publish job is green; then announce it in #releases.",
                     f"Release note {n}", store=STORE)


def timed(args: list[str], env: dict[str, str], cwd: Path) -> float:
    started = time.perf_counter()
    result = subprocess.run(args, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed ({result.returncode}): {result.stderr.decode()[-500:]}")
    return elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=40, help="runs per command (default 40)")
    parser.add_argument("--original-repo", default="https://github.com/sysread/thatch",
                        help="where to clone the original from (a URL or a local checkout)")
    parser.add_argument("--no-original", action="store_true", help="compare with `python -c pass` only")
    parser.add_argument("--against", metavar="REV",
                        help="also time the thatch of commit REV in the same rounds (before and after a change)")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="thatch-light-") as scratch:
        work = Path(scratch)
        log("installing thatch into a fresh virtualenv")
        bin_dir = install_thatch(work)
        home = work / "home"
        (home / ".config" / "thatch").mkdir(parents=True)
        db = home / ".config" / "thatch" / "thatch.db"
        build_database(db)
        repo = work / "widget"
        repo.mkdir()
        for git_args in (["init", "-q"], ["remote", "add", "origin", f"git@github.com:{STORE}.git"]):
            subprocess.run(["git", *git_args], cwd=repo, check=True)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "LANG": "C.UTF-8",
               "XDG_CONFIG_HOME": str(home / ".config"), "XDG_CACHE_HOME": str(home / ".cache"),
               "XDG_RUNTIME_DIR": str(work / "run"), "THATCH_DB": str(db), "THATCH_DB_PATH": str(db),
               "NO_COLOR": "1", "THATCH_DAEMON": "0"}
        (work / "run").mkdir()
        thatch = [str(bin_dir / "thatch")]
        found = None if args.no_original else original(args.original_repo)
        label = "Release note 7"
        cases: dict[str, tuple[list[str], Path]] = {
            "python -c pass": ([str(bin_dir / "python"), "-c", "pass"], work),
            "thatch list STORE": ([*thatch, "list", STORE], work),
            "thatch list (detected)": ([*thatch, "list"], repo),
            "thatch show LABEL STORE": ([*thatch, "show", label, STORE], work),
            "thatch stores": ([*thatch, "stores"], work),
        }
        if args.against:
            log(f"installing thatch {args.against} into a fresh virtualenv")
            before = [str(install_thatch(work, args.against) / "thatch")]
            for name in [n for n in cases if n.startswith("thatch ")]:
                command, cwd = cases[name]
                cases[f"{args.against}: {name}"] = ([*before, *command[1:]], cwd)
        pairs = {"thatch list STORE": "original list STORE", "thatch list (detected)": "original list (detected)",
                 "thatch show LABEL STORE": "original show LABEL STORE", "thatch stores": "original stores"}
        if found is not None:
            checkout, bun = found
            original_cmd = [str(bun), str(checkout / "bin" / "thatch")]
            cases.update({
                "original list STORE": ([*original_cmd, "list", STORE], work),
                "original list (detected)": ([*original_cmd, "list"], repo),
                "original show LABEL STORE": ([*original_cmd, "show", label, STORE], work),
                "original stores": ([*original_cmd, "stores"], work),
            })
        for command, cwd in cases.values():  # warm up: bytecode, page cache, the identity cache
            timed(command, env, cwd)
        times: dict[str, list[float]] = {name: [] for name in cases}
        log(f"{args.runs} interleaved rounds of {len(cases)} commands")
        for _ in range(args.runs):
            for name, (command, cwd) in cases.items():
                times[name].append(timed(command, env, cwd))

    median = {name: statistics.median(samples) for name, samples in times.items()}
    lines = [f"Light commands, {MEMORIES} memories, {args.runs} interleaved runs each"
             f" ({datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC, load {os.getloadavg()[0]:.1f}, {os.cpu_count()} cores)",
             "", "| command | median | min | max | ratio (same run) | target | met |", "|---|---:|---:|---:|---|---|---|"]
    for name, samples in times.items():
        ratio, target, met = "", "", ""
        if name in pairs and pairs[name] in median:
            value = median[name] / median[pairs[name]]
            ratio, target, met = f"{value:.2f}x {pairs[name]}", "<= 1.0x", "yes" if value <= 1.0 else "**no**"
        elif name in pairs:
            value = median[name] / median["python -c pass"]
            ratio, target, met = f"{value:.2f}x python -c pass", "<= 2.5x", "yes" if value <= 2.5 else "**no**"
        lines.append(f"| {name} | {median[name] * 1000:.1f} ms | {min(samples) * 1000:.1f} ms |"
                     f" {max(samples) * 1000:.1f} ms | {ratio} | {target} | {met} |")
    if args.against:
        lines += ["", f"| command | this checkout | {args.against} | ratio (same run) |", "|---|---:|---:|---:|"]
        for name in [n for n in times if n.startswith("thatch ")]:
            then = median[f"{args.against}: {name}"]
            lines.append(f"| {name} | {median[name] * 1000:.1f} ms | {then * 1000:.1f} ms |"
                         f" {median[name] / then:.2f}x |")
    if found is None:
        lines += ["", "The original could not be set up here: ratios are against `python -c pass`."]
    report = "\n".join(lines) + "\n"
    print(report)
    results = HERE / "results"
    results.mkdir(exist_ok=True)
    (results / f"light-{datetime.now(timezone.utc):%Y%m%dT%H%M%SZ}.md").write_text(report)
    return 0  # a missed target is a finding in the report, not a failure of the run


if __name__ == "__main__":
    sys.exit(main())
