"""Every benchmark script runs: a smoke run of each on tiny inputs with the
test embedder (THATCH_BENCH_MODEL=fake:DIM, or --model fake:DIM), so a
benchmark the docs quote cannot rot unnoticed. Figures are not checked:
only that each script finishes, exits 0 and prints its report."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"
# Imported by the scripts below, not run on their own.
HELPERS = {"corpus.py", "machine.py", "syncteam.py", "bigpull.py"}


def conversation(sample_id: str, topic: str, people: tuple[str, str]) -> dict:
    a, b = people
    turns = [
        {"speaker": a, "dia_id": "D1:1", "text": f"I started learning {topic} last week."},
        {"speaker": b, "dia_id": "D1:2", "text": f"Nice! What made you pick {topic}?"},
        {"speaker": a, "dia_id": "D1:3", "text": f"My sister does {topic} every weekend and loves it."},
        {"speaker": b, "dia_id": "D1:4", "text": "I adopted a cat named Pixel yesterday.",
         "blip_caption": "a photo of a grey cat"},
        {"speaker": a, "dia_id": "D1:5", "text": "We are moving to Lisbon in the spring."},
        {"speaker": b, "dia_id": "D1:6", "text": "My new job at the bakery starts on Monday."},
    ]
    qa = [
        {"question": f"What did {a} start learning?", "evidence": ["D1:1"], "category": 1},
        {"question": f"Who in {a}'s family does {topic}?", "evidence": ["D1:3"], "category": 2},
        {"question": f"What is the name of {b}'s cat?", "evidence": ["D1:4"], "category": 4},
        {"question": f"Where is {a} moving?", "evidence": ["D1:5"], "category": 1},
    ]
    return {"sample_id": sample_id, "conversation": {"speaker_a": a, "speaker_b": b, "session_1": turns}, "qa": qa}


@pytest.fixture(scope="module")
def locomo_dir(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("locomo")
    (folder / "1.json").write_text(json.dumps(conversation("1", "pottery", ("Ana", "Ben"))))
    (folder / "2.json").write_text(json.dumps(conversation("2", "climbing", ("Cleo", "Dev"))))
    return folder


@pytest.fixture(scope="module")
def bench_env(tmp_path_factory) -> dict[str, str]:
    cache = tmp_path_factory.mktemp("bench-cache")
    env = {k: v for k, v in os.environ.items() if not k.startswith("THATCH_")}
    home = cache / "home"
    home.mkdir()
    return {**env, "THATCH_BENCH_MODEL": "fake:384", "THATCH_BENCH_CACHE": str(cache), "HOME": str(home),
            "XDG_CACHE_HOME": str(home / ".cache"), "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_RUNTIME_DIR": str(cache / "run"), "HF_HUB_OFFLINE": "1", "THATCH_DAEMON": "0"}


def commands(locomo: Path, tmp: Path) -> dict[str, list[str]]:
    data = str(locomo)
    return {
        "agent_hooks.py": ["--runs", "1", "--size", "40"],
        "anchors.py": ["--files", "30", "--changed", "3", "--runs", "1"],
        "daemon_memory.py": ["--memories", "40", "--rounds", "1", "--unembedded", "10"],
        "calibration.py": ["--models", "fake:64", "--locomo", data, "--questions", "2"],
        "calibration_reference.py": ["--model", "fake:64", "--output", str(tmp / "reference.json")],
        "duplicate_threshold.py": ["--models", "fake:64"],
        "duplicates.py": ["--runs", "1", "--size", "60"],
        "hooks.py": ["--runs", "1"],
        "index_writes.py": ["--sizes", "60", "--runs", "1"],
        "light.py": ["--runs", "1", "--no-original"],
        "locomo.py": [data, "--model", "fake:64"],
        "mcp_calls.py": ["--runs", "1", "--sizes", "40"],
        "mcp_start.py": ["--runs", "1"],
        "models.py": ["minilm"],
        "nudge_latency.py": ["--runs", "1", "--size", "40", "--load", "0", "--cold-runs", "1"],
        "nudge_rule.py": ["--models", "fake:64", "--soft-words"],
        "perf.py": ["--quick", "--runs", "1", "--sizes", "40"],
        "recall_threshold.py": [data, "--model", "fake:64", "--questions", "2"],
        "relevance_floor.py": ["--model", "fake:64", "--locomo", data],
        "credentials.py": ["--show"],
        "stress.py": ["--writers", "2", "--memories", "4"],
        "sync.py": ["--memories", "20", "--runs", "1", "--no-ssh", "--only", "initial", "findable", "bigpull",
                    "--pull-sizes", "300", "--embed-sample", "10"],
        "upgrade.py": ["--size", "60", "--runs", "1"],
    }


def test_every_benchmark_script_has_a_smoke_run(tmp_path):
    scripts = {p.name for p in BENCH.glob("*.py")} - HELPERS
    assert scripts == set(commands(tmp_path, tmp_path))


# Scripts that measure the real model whatever THATCH_BENCH_MODEL says.
REAL_MODEL = {"daemon_memory.py"}


@pytest.mark.parametrize("script", [pytest.param(name, marks=pytest.mark.model) if name in REAL_MODEL else name
                                    for name in sorted(commands(Path("."), Path(".")))])
def test_the_benchmark_runs(script, locomo_dir, bench_env, tmp_path):
    argv = commands(locomo_dir, tmp_path)[script]
    result = subprocess.run([sys.executable, str(BENCH / script), *argv], env=bench_env, cwd=tmp_path,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, f"{script} exited {result.returncode}:\n{result.stdout[-2000:]}\n{result.stderr[-3000:]}"
    assert result.stdout.strip(), result.stderr[-2000:]
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
