"""Import that cannot poison the store: every hostile line is reported with
its line number and skipped (exit 5), every good line is kept, and nothing
gets in that `remember` would refuse. Vectors that are not finite are
never ranked, however they got into the database."""

from __future__ import annotations

import base64
import json
import sqlite3
import struct
from pathlib import Path

import pytest

from thatch_cli.storage.maintenance import index_problems
from thatch_cli.support.errors import EXIT_ATTENTION

ENV = {"THATCH_STORE": "team/notes"}


def vec(*values: float, dim: int = 64) -> str:
    floats = list(values) + [0.1] * (dim - len(values))
    return base64.b64encode(struct.pack(f"<{dim}f", *floats)).decode()


def line(**record) -> bytes:
    return json.dumps(record, ensure_ascii=False).encode()


GOOD = line(label="Good", content="fine")

# (raw line, what the report says about it)
HOSTILE: list[tuple[bytes, str]] = [
    (b"{not json", "not valid JSON"),
    (b"[1, 2]", "not a JSON object"),
    (b"[" * 100_000 + b"]" * 100_000, "not valid JSON: nested too deeply"),
    (b'{"label": "caf\xe9", "content": "x"}', "not valid UTF-8 (byte 0xe9 at column 15)"),
    (b'{"label": "\\ud800", "content": "x"}', "'label' is not valid Unicode (a lone surrogate)"),
    (b'{"label": "ok", "content": "a \\udc80 b"}', "'content' is not valid Unicode (a lone surrogate)"),
    (b'{"label": "n", "content": "x", "confidence": ' + b"9" * 5000 + b"}", "not valid JSON"),
    (line(label="c11", content="x", confidence=11), "confidence must be between 1 and 10, got 11"),
    (b'{"label": "cinf", "content": "x", "confidence": 1e400}', "'confidence' must be an integer"),
    (line(label="big", content="x", recall_count=10**30), "'recall_count' is out of range (too large)"),
    (line(label="neg", content="x", recall_count=-1), "'recall_count' is out of range (-1)"),
    (line(label="t\x1b]0;pwned\x07", content="x"), "contains a control character"),
    (line(label="two\nlines", content="x"), "contains a control character"),
    (line(label="L" * 201, content="x"), "label is 201 characters; the limit is 200"),
    (line(label="huge", content="x" * (64 * 1024 + 1)), "the limit is 65536 bytes (64 KiB)"),
    (line(label="empty", content=""), "'content' is empty"),
    (line(content="no label"), "missing 'label'"),
    (line(label=7, content="x"), "'label' must be a string"),
    (line(label="Build Steps", slug="something-else", content="x"),
     "slug 'something-else' does not match its label 'Build Steps' (which gives 'build-steps')"),
    (line(label="s", content="x", store="evil\x1bstore"), "contains a control character"),
    (line(label="b", content="x", branch="feat/\x1b[31mred"), "contains a control character"),
    (line(label="nan", content="x", embedding=vec(float("nan"))), "'embedding' holds NaN or infinite values"),
    (line(label="inf", content="x", embedding=vec(float("inf"))), "'embedding' holds NaN or infinite values"),
    (line(label="narrow", content="x", model="fake:64", embedding=vec(dim=32)),
     "'embedding' has 32 dimensions; fake:64 has 64"),
    (line(label="b64", content="x", embedding="***"), "'embedding' is not valid base64"),
    (line(label="odd", content="x", embedding=base64.b64encode(b"abc").decode()), "not a float32 vector (3 bytes)"),
    (line(label="void", content="x", embedding=""), "not a float32 vector (0 bytes)"),
    (line(label="arch", content="x", archived=2), "'archived' must be 0, 1, true or false"),
    (line(label="when", content="x", created_at="yesterday"), "'created_at' is not a timestamp: 'yesterday'"),
    (line(label="mod", content="x", model="m\x1b"), "'model' contains a control character"),
    (line(label="kind", content="x", _record="script"), "unknown _record 'script'"),
    (line(_record="verdict", slug_a="a", status="duplicate", checked_at="2026-01-01T00:00:00Z"),
     "missing 'slug_b'"),
    (line(_record="verdict", slug_a="a", slug_b="b", status="whatever", checked_at="2026-01-01T00:00:00Z"),
     "unknown status 'whatever'"),
    (line(_record="version", memory_slug="good", version=0, event="updated", recorded_at="2026-01-01T00:00:00Z",
          label="Good", content="old"), "'version' is out of range (0)"),
    (b'{"label": "long", "content": "' + b"x" * 3_000_000 + b'"}', "a line of an export is at most 1 MiB"),
]


def test_every_hostile_line_is_reported_and_the_rest_is_kept(cli, isolated_env, tmp_path):
    assert len(HOSTILE) >= 30
    source = tmp_path / "hostile.jsonl"
    lines = [b"\xef\xbb\xbf" + GOOD, *(raw for raw, _ in HOSTILE), line(label="Also good", content="kept too",
                                                                         confidence=4)]
    source.write_bytes(b"\r\n".join(lines) + b"\r\n")
    result = cli("import", str(source), "--json", THATCH_MODEL="fake:64", **ENV)
    assert result.exit_code == EXIT_ATTENTION
    report = json.loads(result.stdout)
    assert report["created"] == 2 and report["error_count"] == len(HOSTILE)
    got = {e["line"]: e["message"] for e in report["errors"]}
    for number, (_, expected) in enumerate(HOSTILE, start=2):
        assert expected in got[number], (number, got[number])
    conn = sqlite3.connect(isolated_env["THATCH_DB"])
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert index_problems(conn) == {"wrong": 0, "orphans": 0}
    assert sorted(conn.execute("SELECT store, slug, confidence FROM entries")) == [
        ("team/notes", "also-good", 4), ("team/notes", "good", None)]
    conn.close()
    plain = cli("import", str(source), THATCH_MODEL="fake:64", **ENV)
    assert plain.exit_code == EXIT_ATTENTION and "line 4: not valid JSON: nested too deeply" in plain.stderr
    assert "\x1b" not in plain.stderr


def test_import_from_stdin_decodes_each_line_on_its_own(isolated_env, tmp_path):
    import os
    import subprocess
    import sys

    data = b"\xef\xbb\xbf" + GOOD + b"\n" + b'{"label": "caf\xe9", "content": "x"}\n' + line(label="B", content="y")
    result = subprocess.run([sys.executable, "-m", "thatch_cli", "import", "-", "--json"], input=data,
                            capture_output=True, env={**os.environ, "THATCH_MODEL": "fake:64", **ENV})
    report = json.loads(result.stdout)
    assert result.returncode == EXIT_ATTENTION and report["created"] == 2
    assert report["errors"] == [{"line": 2, "message": "not valid UTF-8 (byte 0xe9 at column 15)"}]


# -- non-finite vectors already in the database ----------------------------------------------------


@pytest.fixture
def poisoned(cli, isolated_env):
    for label, body in [("release", "publish the package with twine"), ("editor", "prefer vim keybindings"),
                        ("tests", "run pytest before pushing")]:
        assert cli("remember", label, body, THATCH_MODEL="fake:64", **ENV).exit_code == 0
    conn = sqlite3.connect(isolated_env["THATCH_DB"])
    nan = struct.pack("<64f", *([float("nan")] * 64))
    conn.execute("UPDATE entries SET embedding = ? WHERE slug = 'editor'", (nan,))
    conn.commit()
    conn.close()
    return Path(isolated_env["THATCH_DB"])


def test_a_nan_vector_never_flattens_the_ranking(cli, poisoned):
    data = json.loads(cli("recall", "publish the package", "--mode", "semantic", "--floor", "0", "--json",
                          THATCH_MODEL="fake:64", **ENV).stdout)
    scores = {r["slug"]: r["score"] for r in data["results"]}
    assert set(scores) == {"release", "tests"}  # the NaN row is not ranked
    assert scores["release"] > scores["tests"]
    hybrid = json.loads(cli("recall", "publish the package", "--floor", "0", "--json", THATCH_MODEL="fake:64",
                            **ENV).stdout)
    assert hybrid["results"][0]["slug"] == "release" and hybrid["results"][0]["score"] > hybrid["results"][1]["score"]
    assert all(r["score"] == r["score"] for r in hybrid["results"])  # no NaN anywhere


def test_duplicates_skip_a_nan_vector(cli, poisoned):
    data = json.loads(cli("duplicates", "--json", THATCH_MODEL="fake:64", **ENV).stdout)
    assert data["compared"] == 2 and data["clusters"] == []


# -- inputs without an end, and long runs -----------------------------------------------------------


def _bounded(args: list[str], stdin, timeout: float = 60):
    """Run thatch on an endless input; (exit code, stdout, stderr, its peak
    memory in MiB: VmHWM, polled while it runs; rusage would count the test
    process it was forked from). Killed past `timeout`."""
    import os
    import subprocess
    import sys
    import time

    process = subprocess.Popen([sys.executable, "-m", "thatch_cli", *args], stdin=stdin, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, env={**os.environ, "THATCH_MODEL": "fake:64", **ENV})
    peak, deadline = 0, time.monotonic() + timeout
    while process.poll() is None:
        try:
            with open(f"/proc/{process.pid}/status") as fh:
                peak = max([peak] + [int(line.split()[1]) for line in fh if line.startswith("VmHWM:")])
        except (OSError, ValueError):
            pass
        if time.monotonic() > deadline:
            process.kill()
        time.sleep(0.005)
    out, err = process.communicate()
    return process.returncode, out.decode(), err.decode(), peak / 1024


@pytest.mark.parametrize("how", ["file", "stdin"])
def test_an_endless_line_stops_the_import_with_memory_bounded(isolated_env, how):
    """`thatch import /dev/zero` used to read one endless line into memory."""
    with open("/dev/zero", "rb") as zeros:
        args = ["import", "/dev/zero" if how == "file" else "-", "--json"]
        code, out, err, peak = _bounded(args, zeros if how == "stdin" else None)
    assert code == EXIT_ATTENTION, err
    report = json.loads(out)
    assert report["errors"] == [{"line": 1, "message": "the line goes on past 64 MiB without an end; the rest of"
                                                       " the input was not read"}]
    assert peak < 400, peak


def test_remember_from_an_endless_stdin_stops_at_the_limit(isolated_env):
    """`thatch remember L -` used to read all of stdin before its 64 KiB check."""
    with open("/dev/zero", "rb") as zeros:
        code, _, err, peak = _bounded(["remember", "L", "-"], zeros, timeout=30)
    assert code == 2
    assert err == ("thatch: error: standard input holds more than 65,536 bytes, the limit; nothing was saved"
                   " (reading stopped there)\n")
    assert peak < 400, peak


def test_a_long_import_of_bad_lines_reports_progress(cli, tmp_path, monkeypatch):
    """Without a terminal, a long import says how far it got every few
    seconds (here: every call), bad lines or not."""
    from thatch_cli.cli import progress

    monkeypatch.setattr(progress, "TICK_S", 0.0)
    source = tmp_path / "noise.jsonl"
    source.write_bytes(b"{not json}\n" * 10_000)
    result = cli("import", str(source), "--json", THATCH_MODEL="fake:64", **ENV)
    assert result.exit_code == EXIT_ATTENTION and json.loads(result.stdout)["error_count"] == 10_000
    ticks = [text for text in result.stderr.splitlines() if text.startswith("thatch: importing:")]
    assert ticks[:2] == ["thatch: importing: 0 of 10,000 lines (0%) so far",
                         "thatch: importing: 4,096 of 10,000 lines (40%) so far"]
