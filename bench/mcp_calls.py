"""MCP server benchmark: `python bench/mcp_calls.py [--runs N] [--sizes 1000,10000]`.

Measures, with real processes and the JSON-RPC messages a host sends
(newline-delimited over the server's stdin/stdout):

  * spawn -> `tools/list` answered: from starting `thatch mcp` to the reply
    to `tools/list` (after `initialize`), next to `python -c pass` and
    `thatch list` in the same run;
  * warm `memory_recall` (one open server, daemon up, store cached): the
    round trip of one `tools/call`, next to a warm `thatch recall` process
    on the same database, interleaved, at each store size.

Data: bench/corpus.py (the databases bench/perf.py uses; model
all-MiniLM-L6-v2). Prints a Markdown table of medians and saves it to
bench/results/.
"""

from __future__ import annotations

import argparse
import json
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
sys.path.insert(0, str(HERE.parent))

import corpus  # noqa: E402
from machine import describe  # noqa: E402
from perf import THATCH, Bench, log, save_report, table  # noqa: E402

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


class Server:
    """A `thatch mcp` process spoken to over its pipes."""

    def __init__(self, env: dict, cwd: Path) -> None:
        self.started = time.perf_counter()
        self.process = subprocess.Popen([*THATCH, "mcp"], env=env, cwd=cwd, stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1)
        self.next_id = 100

    def send(self, message: dict) -> None:
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()

    def request(self, method: str, params: dict | None = None) -> dict:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, **({"params": params} if params else {})})
        while True:
            reply = json.loads(self.process.stdout.readline())
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise SystemExit(f"{method}: {reply['error']}")
                return reply["result"]

    def handshake(self) -> None:
        self.send(INITIALIZE)
        json.loads(self.process.stdout.readline())
        self.send(INITIALIZED)

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait(timeout=30)


def spawn_to_tools_list(env: dict, cwd: Path) -> float:
    server = Server(env, cwd)
    try:
        server.handshake()
        tools = server.request("tools/list")["tools"]
        elapsed = time.perf_counter() - server.started
        assert len(tools) >= 9, tools
        return elapsed
    finally:
        server.close()


def timed_recall(server: Server, query: str) -> float:
    started = time.perf_counter()
    result = server.request("tools/call", {"name": "memory_recall", "arguments": {"query": query}})
    elapsed = time.perf_counter() - started
    data = result["structuredContent"]
    if result.get("isError") or data["mode"] != "hybrid" or not data["results"]:
        raise SystemExit(f"memory_recall did not answer warm: {data}")
    return elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20, help="runs per measurement (default 20)")
    parser.add_argument("--sizes", default="1000,10000", help="comma-separated store sizes")
    parser.add_argument("--keep", action="store_true", help="keep the scratch directory")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    vectors, _ = corpus.unique_vectors(log=log)
    dbs = {size: corpus.database(size, vectors, corpus.model_path(), log=log) for size in sizes}
    corpus.CACHE.mkdir(parents=True, exist_ok=True)
    workdir = Path(tempfile.mkdtemp(prefix="thatch-mcp-", dir=corpus.CACHE))
    bench = Bench(max(args.runs, corpus.min_runs()), workdir)
    env = bench.env
    started_at = datetime.now(timezone.utc)
    servers: list[Server] = []
    try:
        light_env = {**env, "THATCH_DB": str(dbs[sizes[0]])}
        times = bench.series({
            "pass": lambda: bench.run([sys.executable, "-c", "pass"])[0],
            "list": lambda: bench.run([*THATCH, "list"], light_env)[0],
            "spawn": lambda: spawn_to_tools_list(light_env, workdir),
        })
        bench.add('`python -c pass`', times["pass"])
        bench.add(f"`thatch list`, {sizes[0]:,} memories", times["list"])
        bench.add("`thatch mcp` spawn -> `tools/list` answered", times["spawn"],
                  ratio=("thatch list", statistics.median(times["spawn"]) / statistics.median(times["list"])),
                  note="initialize + tools/list; no model involved")

        log("starting the daemon (loads the model once)")
        bench.run([*THATCH, "daemon", "start"])
        queries = iter(corpus.QUERIES * 1000)
        for size in sizes:
            size_env = {**env, "THATCH_DB": str(dbs[size])}
            warmed = bench.run([*THATCH, "recall", "--json", "--floor", "0", "warm the cache"], size_env)[1]
            corpus.check_semantic(warmed, size)
            server = Server(size_env, workdir)
            servers.append(server)
            server.handshake()
            timed_recall(server, "warm the server")
            times = bench.series({
                "cli": lambda: bench.run([*THATCH, "recall", next(queries)], size_env)[0],
                "mcp": lambda: timed_recall(server, next(queries)),
            })
            bench.add(f"warm `thatch recall`, {size:,} memories", times["cli"], note="a whole process")
            bench.add(f"warm `memory_recall`, {size:,} memories", times["mcp"],
                      ratio=("thatch recall", statistics.median(times["mcp"]) / statistics.median(times["cli"])),
                      note="one tools/call round trip on an open server")
        save_report(render(bench, started_at), "mcp", started_at)
        return 0
    finally:
        for server in servers:
            server.close()
        subprocess.run([*THATCH, "daemon", "stop"], env=env, capture_output=True, timeout=30)
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)


def render(bench: Bench, started_at: datetime) -> str:
    return "\n".join([
        f"Measured {started_at.strftime('%Y-%m-%d %H:%M UTC')} on {describe(torch=True)}.",
        "",
        f"Wall-clock medians of {bench.runs} runs after 2 warm-up runs, series interleaved; model all-MiniLM-L6-v2.",
        "",
        table(bench),
    ])


if __name__ == "__main__":
    sys.exit(main())
