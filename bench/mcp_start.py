"""How soon `thatch mcp` is ready for a host: `python bench/mcp_start.py [--runs N]`.

Spawns `thatch mcp` (this checkout's, in a fresh HOME, no daemon) N times
and times, from the spawn, the answers to `initialize` and then `tools/list`,
the two requests a host sends before it offers the server's tools to its
model. Two ways each run, interleaved:

- handshake: as a host opens, answered by mcp/handshake.py while the SDK imports;
- SDK: the same after a notification the handshake leaves to the SDK (what
  every answer waited for before the handshake existed: importing the SDK).

`python -c pass` in the same run says how busy the machine is. Target: both
answered in 300 ms median or less on a quiet machine.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}}
OPENING = [INITIALIZE, {"jsonrpc": "2.0", "method": "notifications/initialized"},
           {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}]
TO_THE_SDK = {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}
TARGET_MS = 300.0


def one(env: dict[str, str], messages: list[dict]) -> tuple[float, float]:
    """Milliseconds from spawning `thatch mcp` to the answer to initialize, and to tools/list's."""
    started = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "thatch_cli", "mcp"], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=env["HOME"])
    answered = []
    for message in messages:
        process.stdin.write(json.dumps(message).encode() + b"\n")
        process.stdin.flush()
        if "id" in message:
            reply = json.loads(process.stdout.readline())
            assert "result" in reply, reply
            answered.append((time.perf_counter() - started) * 1000)
    process.stdin.close()
    process.wait(timeout=60)
    return answered[0], answered[1]


def python_pass() -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return (time.perf_counter() - started) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        # Installed code runs from byte-compiled files: compile this checkout's
        # once and let nothing say otherwise (the way bench/perf.py measures).
        compileall.compile_dir(str(ROOT / "thatch_cli"), quiet=1)
        env = {**{k: v for k, v in os.environ.items() if not k.startswith("THATCH_") and k != "PYTHONDONTWRITEBYTECODE"},
               "HOME": tmp,
               "XDG_CACHE_HOME": f"{tmp}/cache", "XDG_CONFIG_HOME": f"{tmp}/config", "XDG_RUNTIME_DIR": tmp,
               "THATCH_DB": f"{tmp}/thatch.db", "THATCH_DAEMON": "0",
               "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
        timings: dict[str, list[tuple[float, float]]] = {"handshake": [], "SDK": []}
        baseline = []
        for _ in range(args.runs):
            timings["handshake"].append(one(env, OPENING))
            timings["SDK"].append(one(env, [TO_THE_SDK, *OPENING]))
            baseline.append(python_pass())
    rows = []
    for way, found in timings.items():
        init, listed = [a for a, _ in found], [b for _, b in found]
        rows.append({"way": way, "initialize_ms": statistics.median(init), "tools_list_ms": statistics.median(listed),
                     "tools_list_max_ms": max(listed)})
    report = {"runs": args.runs, "python_pass_ms": statistics.median(baseline), "rows": rows,
              "target_ms": TARGET_MS}
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"{args.runs} runs each; python -c pass {report['python_pass_ms']:.0f} ms median\n")
    print("| answered by | initialize, median | tools/list, median | tools/list, slowest | target (300 ms) |")
    print("|---|---:|---:|---:|---|")
    for row in rows:
        met = "met" if max(row["initialize_ms"], row["tools_list_ms"]) <= TARGET_MS else "missed"
        print(f"| {row['way']} | {row['initialize_ms']:.0f} ms | {row['tools_list_ms']:.0f} ms"
              f" | {row['tools_list_max_ms']:.0f} ms | {met} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
