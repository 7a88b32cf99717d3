"""The warm daemon, in real processes: start/stop/status, self-healing
(stale files, races, model changes), permissions, fallback, idle exit, and
the shell hook's maybe_warm. Every test gets its own XDG_RUNTIME_DIR and
the `daemon_env` fixture kills whatever daemon a test left running."""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from thatch_cli import __version__
from thatch_cli.daemon import protocol, runtime
from thatch_cli.memory.filter import Filter

from helpers import daemon_pids, run_probed, stop_all, wait_until

FAKE = "fake:64"


def _rundir(env: dict) -> str:
    return runtime.runtime_dir(env)


def thatch(env: dict, *args: str, input: str | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    result = subprocess.run([sys.executable, "-m", "thatch_cli", *args], env=env, input=input,
                            capture_output=True, text=True, timeout=timeout, cwd=env["HOME"])
    assert "Traceback" not in result.stderr, result.stderr
    return result


def thatch_json(env: dict, *args: str, **kwargs) -> tuple[int, dict, str]:
    result = thatch(env, *args, "--json", **kwargs)
    return result.returncode, json.loads(result.stdout), result.stderr


@pytest.fixture
def daemon_env(isolated_env):
    env = {**os.environ, "THATCH_DAEMON": "1", "THATCH_MODEL": FAKE, "THATCH_STORE": "acme/widget"}
    env.pop("THATCH_DAEMON_IDLE", None)
    yield env
    stop_all(env)
    assert not daemon_pids(env)


def seed(env: dict) -> None:
    local = {**env, "THATCH_DAEMON": "0"}
    for label, body in [("release", "publish the package with twine upload"),
                        ("editor", "prefer vim keybindings in the editor"),
                        ("wal", "we use sqlite in wal mode for concurrent readers")]:
        assert thatch(local, "remember", label, body).returncode == 0
    assert thatch(local, "remember", "global note", "publish docs to the wiki", "--store", "global").returncode == 0


def status(env: dict) -> dict:
    code, data, _ = thatch_json(env, "daemon", "status")
    assert code == 0
    return data


# -- start / status / stop ------------------------------------------------------------


def test_start_status_stop(daemon_env):
    assert status(daemon_env) == {"running": False, "socket": os.path.join(_rundir(daemon_env), "daemon.sock")}
    code, started, _ = thatch_json(daemon_env, "daemon", "start")
    assert code == 0 and started["action"] == "started" and started["running"] is True
    assert started["model"] == FAKE and started["version"] == __version__ and started["ready"] is True
    assert started["rss_bytes"] > 1_000_000 and started["uptime_seconds"] >= 0 and started["requests"] >= 1
    assert daemon_pids(daemon_env) == [started["pid"]]

    again = thatch_json(daemon_env, "daemon", "start")[1]
    assert again["action"] == "already-running" and again["pid"] == started["pid"]
    now = status(daemon_env)
    assert now["pid"] == started["pid"] and now["requests"] > started["requests"]
    human = thatch(daemon_env, "daemon", "status").stdout
    assert f"pid {started['pid']}" in human and FAKE in human and "resident" in human

    code, stopped, _ = thatch_json(daemon_env, "daemon", "stop")
    assert code == 0 and stopped == {"stopped": True, "pid": started["pid"]}
    assert not runtime.lock_held(_rundir(daemon_env))
    assert not os.path.exists(os.path.join(_rundir(daemon_env), "daemon.sock"))
    assert not os.path.exists(os.path.join(_rundir(daemon_env), "daemon.pid"))
    assert wait_until(lambda: not daemon_pids(daemon_env), timeout=3)
    assert thatch_json(daemon_env, "daemon", "stop")[1] == {"stopped": False, "pid": None}


def test_a_runtime_dir_too_deep_for_a_socket_address_still_serves(daemon_env, tmp_path):
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    deep.mkdir(parents=True, mode=0o700)
    env = {**daemon_env, "XDG_RUNTIME_DIR": str(deep)}
    assert len(os.path.join(_rundir(env), "daemon.sock")) > 108
    seed(env)
    code, started, _ = thatch_json(env, "daemon", "start")
    assert code == 0 and started["running"] is True
    result = thatch(env, "recall", "publish")
    assert result.returncode == 0 and "release" in result.stdout
    assert status(env)["requests"] > started["requests"]
    thatch(env, "daemon", "stop")


def test_disabled_daemon_is_never_started(daemon_env):
    env = {**daemon_env, "THATCH_DAEMON": "0"}
    seed(env)
    result = thatch(env, "recall", "publish")
    assert result.returncode == 0 and "release" in result.stdout and result.stderr == ""
    assert daemon_pids(env) == []
    assert thatch(env, "daemon", "start").returncode == 2


def test_permissions_are_private(daemon_env):
    thatch(daemon_env, "daemon", "start")
    rundir = _rundir(daemon_env)
    assert stat.S_IMODE(os.stat(rundir).st_mode) == 0o700
    sock = os.path.join(rundir, "daemon.sock")
    assert stat.S_ISSOCK(os.lstat(sock).st_mode) and stat.S_IMODE(os.lstat(sock).st_mode) == 0o600
    for name in ("daemon.lock", "daemon.pid", "spawn.lock", "daemon.log"):
        assert stat.S_IMODE(os.stat(os.path.join(rundir, name)).st_mode) == 0o600, name


def test_loose_runtime_dir_is_tightened(daemon_env):
    rundir = _rundir(daemon_env)
    os.makedirs(rundir, mode=0o755)
    os.chmod(rundir, 0o755)
    assert thatch(daemon_env, "daemon", "start").returncode == 0
    assert stat.S_IMODE(os.stat(rundir).st_mode) == 0o700


# -- recall and remember through the daemon ------------------------------------------------


def test_recall_starts_daemon_and_matches_in_process(daemon_env):
    seed(daemon_env)
    assert daemon_pids(daemon_env) == []
    for query in ("publish", "sqlite readers", "vim"):
        code, warm, err = thatch_json(daemon_env, "recall", query, "--all-stores")
        code_local, local, _ = thatch_json({**daemon_env, "THATCH_DAEMON": "0"}, "recall", query, "--all-stores")
        assert code == code_local == 0 and err == ""
        assert [(r["store"], r["slug"], r["score"]) for r in warm["results"]] == \
               [(r["store"], r["slug"], r["score"]) for r in local["results"]]
        assert warm["notices"] == local["notices"]
    assert len(daemon_pids(daemon_env)) == 1
    assert status(daemon_env)["requests"] >= 3


def test_remember_through_daemon_warns_about_near_duplicates(daemon_env):
    thatch(daemon_env, "remember", "sqlite wal", "We use SQLite in WAL mode for concurrent readers")
    code, data, err = thatch_json(daemon_env, "remember", "wal note",
                                  "We use SQLite in WAL mode for concurrent readers too")
    assert code == 0 and data["has_vector"] is True and err == ""
    assert [d["slug"] for d in data["similar"]] == ["sqlite-wal"] and data["similar"][0]["score"] >= 0.85
    assert data["memory"]["model"] == FAKE
    # The cache notices the new rows (store version changed): both are found.
    found = thatch_json(daemon_env, "recall", "sqlite wal readers")[1]
    assert {r["slug"] for r in found["results"]} == {"sqlite-wal", "wal-note"}
    assert len(daemon_pids(daemon_env)) == 1


def test_reindex_and_import_embed_through_daemon(daemon_env, tmp_path):
    env_other = {**daemon_env, "THATCH_DAEMON": "0", "THATCH_MODEL": "fake:32"}
    seed(env_other)
    code, data, _ = thatch_json(daemon_env, "reindex")
    assert code == 0 and data["model"] == FAKE and data["embedded"] == 4
    assert status(daemon_env)["requests"] >= 2
    lines = "".join(json.dumps({"label": f"n{i}", "content": f"note number {i}"}) + "\n" for i in range(5))
    code, summary, _ = thatch_json(daemon_env, "import", "-", input=lines)
    assert code == 0 and summary["created"] == 5 and summary["embedded"] == 5 and summary["model"] == FAKE


# -- self-healing ---------------------------------------------------------------------------


def test_stale_socket_and_pid_from_a_crash_are_replaced(daemon_env):
    seed(daemon_env)
    first = thatch_json(daemon_env, "daemon", "start")[1]["pid"]
    os.kill(first, signal.SIGKILL)
    assert wait_until(lambda: not runtime.pid_alive(first))
    rundir = _rundir(daemon_env)
    assert os.path.exists(os.path.join(rundir, "daemon.sock")) and runtime.read_pidfile(rundir)["pid"] == first
    code, data, err = thatch_json(daemon_env, "recall", "publish")
    assert code == 0 and data["mode"] == "hybrid" and data["results"] and err == ""
    second = status(daemon_env)["pid"]
    assert second != first and daemon_pids(daemon_env) == [second]
    assert runtime.read_pidfile(rundir)["pid"] == second


def test_stale_socket_file_nobody_listens_on(daemon_env):
    rundir = runtime.ensure_dir(daemon_env)
    path = os.path.join(rundir, "daemon.sock")
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(path)
    dead.close()  # the file stays, connections are refused
    assert thatch(daemon_env, "daemon", "start").returncode == 0
    assert status(daemon_env)["running"] is True


def test_racing_starters_end_with_one_daemon(daemon_env):
    seed(daemon_env)
    procs = [subprocess.Popen([sys.executable, "-m", "thatch_cli", *args, "--json"], env=daemon_env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=daemon_env["HOME"])
             for args in (["daemon", "start"], ["recall", "publish"], ["daemon", "start"], ["recall", "vim"],
                          ["recall", "wal"], ["daemon", "start"])]
    outputs = [p.communicate(timeout=60) for p in procs]
    assert all(p.returncode == 0 for p in procs), outputs
    assert all("daemon unavailable" not in err for _, err in outputs), outputs
    started = {json.loads(out)["pid"] for out, _ in outputs if '"action"' in out}
    assert len(started) == 1
    assert wait_until(lambda: daemon_pids(daemon_env) == list(started), timeout=5), daemon_pids(daemon_env)


def test_a_one_off_model_never_replaces_the_shared_daemon(daemon_env):
    """`THATCH_MODEL=... thatch recall` in one shell uses that model's own
    daemon; the one every other shell uses keeps serving (issue 19)."""
    seed(daemon_env)
    shared = thatch_json(daemon_env, "daemon", "start")[1]["pid"]
    other = {**daemon_env, "THATCH_MODEL": "fake:32"}
    code, data, err = thatch_json(other, "recall", "publish")
    assert code == 0 and err == ""
    assert "no vector from fake:32" in " ".join(data["notices"])  # ranked by the one-off model
    one_off = status(other)
    assert one_off["model"] == "fake:32" and one_off["pid"] != shared
    assert status(daemon_env)["pid"] == shared and runtime.pid_alive(shared)
    code, data, err = thatch_json(daemon_env, "recall", "publish the package")
    assert code == 0 and data["results"][0]["slug"] == "release" and err == ""
    assert status(daemon_env)["pid"] == shared  # served warm, not restarted
    assert sorted(daemon_pids(daemon_env)) == sorted([shared, one_off["pid"]])


OLD_DAEMON = """
import thatch_cli
import thatch_cli.daemon.runtime as runtime
import thatch_cli.daemon.handlers as handlers
import thatch_cli.daemon.server as server
thatch_cli.__version__ = runtime.__version__ = server.__version__ = handlers.__version__ = "0.0.1-old"
raise SystemExit(server.main())
"""


def test_a_daemon_of_another_thatch_version_is_replaced(daemon_env):
    seed(daemon_env)
    old = subprocess.Popen([sys.executable, "-c", OLD_DAEMON], env=daemon_env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        rundir = _rundir(daemon_env)
        assert wait_until(lambda: (runtime.read_pidfile(rundir) or {}).get("version") == "0.0.1-old")
        code, data, err = thatch_json(daemon_env, "recall", "publish")
        assert code == 0 and data["mode"] == "hybrid" and data["results"] and err == ""
        assert old.wait(timeout=10) == 0  # asked to stop, and it did
        now = status(daemon_env)
        assert now["version"] == __version__ and now["pid"] != old.pid
    finally:
        if old.poll() is None:
            old.kill()
            old.wait()


def test_requests_for_another_version_are_refused(daemon_env):
    thatch(daemon_env, "daemon", "start")
    path = os.path.join(_rundir(daemon_env), "daemon.sock")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.connect(path)
        for identity in ({"model": FAKE, "version": "0.0.1", "protocol": protocol.PROTOCOL_VERSION},
                         {"model": FAKE, "version": __version__, "protocol": protocol.PROTOCOL_VERSION - 1}):
            protocol.send(sock, protocol.SHAPES["info"].request(identity))
            reply, _ = protocol.receive(sock)
            assert reply["ok"] is False and reply["error"] == "mismatch"
        # "stop unless you are X" leaves a daemon that is X alone
        me = {"model": FAKE, "version": __version__, "protocol": protocol.PROTOCOL_VERSION}
        protocol.send(sock, protocol.SHAPES["shutdown"].request({}, unless=me, reason="test"))
        assert protocol.receive(sock)[0]["stopping"] is False
    assert status(daemon_env)["running"] is True


def test_concurrent_clients_get_correct_answers(daemon_env):
    from thatch_cli.daemon.client import Client

    seed(daemon_env)
    thatch(daemon_env, "daemon", "start")
    local = {**daemon_env, "THATCH_DAEMON": "0"}
    queries = ["publish", "vim keybindings", "sqlite wal", "docs wiki", "twine upload", "editor"]
    expected = {q: [(r["store"], r["slug"], r["scores"]["dense"]) for r in
                    thatch_json(local, "recall", q, "--all-stores", "--mode", "semantic", "--floor", "0")[1]["results"]]
                for q in queries}
    db_path = daemon_env["THATCH_DB"]
    stores = ["acme/widget", "global"]
    failures: list = []

    def worker(index: int) -> None:
        client = Client(daemon_env, autostart=False)
        try:
            for round_ in range(15):
                query = queries[(index + round_) % len(queries)]
                reply, _ = client.call("search", db=db_path, filter=Filter(stores).to_json(), query=query,
                                       passage=None, limit=10, min_score=None, wait=True)
                got = [(s, slug, round(score, 4)) for s, slug, score, _cosine in reply["hits"]]  # JSON shows 4 digits
                if got != expected[query]:
                    failures.append((query, got, expected[query]))
        except Exception as exc:  # surfaced below
            failures.append(repr(exc))
        finally:
            client.close()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert failures == []
    assert status(daemon_env)["requests"] >= 8 * 15


# -- falling back ------------------------------------------------------------------------


def _hold_broken_daemon(env: dict) -> tuple[socket.socket, int, threading.Event]:
    """A "daemon" that holds the lock and accepts connections, then hangs up."""
    rundir = runtime.ensure_dir(env)
    lock_fd = runtime.open_lock(os.path.join(rundir, "daemon.lock"))
    assert runtime.try_flock(lock_fd)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(os.path.join(rundir, "daemon.sock"))
    listener.listen(8)
    listener.settimeout(0.1)
    done = threading.Event()

    def serve() -> None:
        while not done.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            conn.close()

    threading.Thread(target=serve, daemon=True).start()
    return listener, lock_fd, done


def test_unreachable_daemon_falls_back_in_process_and_keeps_the_write(daemon_env):
    listener, lock_fd, done = _hold_broken_daemon(daemon_env)
    try:
        code, data, err = thatch_json(daemon_env, "remember", "kept", "this write must not be lost")
        assert code == 0 and data["status"] == "created" and data["has_vector"] is True
        assert err.count("\n") == 1 and "daemon unavailable" in err and "in-process" in err
        code, found, err = thatch_json(daemon_env, "recall", "write must not be lost")
        assert code == 0 and found["mode"] == "hybrid" and found["results"][0]["slug"] == "kept"
        assert "daemon unavailable" in err
    finally:
        done.set()
        listener.close()
        os.close(lock_fd)
    from thatch_cli.storage.memories import MemoryDB

    row = MemoryDB.open(Path(daemon_env["THATCH_DB"])).get("acme/widget", "kept", with_vector=True)
    assert row is not None and row.model == FAKE and len(row.embedding) == 4 * 64


def test_unusable_runtime_dir_falls_back(daemon_env, tmp_path):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    env = {**daemon_env, "XDG_RUNTIME_DIR": str(blocker)}
    result = thatch(env, "remember", "note", "still saved")
    assert result.returncode == 0 and "daemon unavailable" in result.stderr
    assert thatch({**env, "THATCH_DAEMON": "0"}, "show", "note").returncode == 0


def test_model_that_cannot_load_degrades_like_in_process(daemon_env):
    seed(daemon_env)
    env = {**daemon_env, "THATCH_MODEL": "acme/no-such-model", "HF_HUB_OFFLINE": "1"}
    code, data, err = thatch_json(env, "recall", "twine")
    assert code == 0 and data["mode"] == "lexical" and [r["slug"] for r in data["results"]] == ["release"]
    assert "daemon unavailable" not in err
    code, saved, err = thatch_json(env, "remember", "offline", "saved without a model")
    assert code == 0 and saved["has_vector"] is False and "without a vector" in " ".join(saved["notices"])
    # The failed daemon does not linger.
    assert wait_until(lambda: not daemon_pids(env), timeout=8)


@pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")
def test_foreign_owned_socket_and_dir_are_refused(daemon_env):
    nobody = 65534
    rundir = runtime.ensure_dir(daemon_env)
    path = os.path.join(rundir, "daemon.sock")
    impostor = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    impostor.bind(path)
    impostor.listen(1)
    os.chown(path, nobody, nobody)
    try:
        result = thatch(daemon_env, "remember", "secret", "never sent to a stranger's socket")
        assert result.returncode == 0 and "owned by uid 65534" in result.stderr
        impostor.settimeout(0.2)
        with pytest.raises(OSError):
            impostor.accept()  # nobody connected to it
    finally:
        impostor.close()
    os.unlink(path)
    os.chown(rundir, nobody, nobody)
    result = thatch(daemon_env, "recall", "secret")
    assert result.returncode == 0 and "owned by uid 65534" in result.stderr and "secret" in result.stdout
    assert daemon_pids(daemon_env) == []
    status_result = thatch(daemon_env, "daemon", "status")
    assert status_result.returncode != 0 and "owned by uid 65534" in status_result.stderr


# -- idle exit ------------------------------------------------------------------------------


def test_idle_daemon_exits(daemon_env):
    env = {**daemon_env, "THATCH_DAEMON_IDLE": "0.5"}
    pid = thatch_json(env, "daemon", "start")[1]["pid"]
    assert wait_until(lambda: not runtime.pid_alive(pid), timeout=8)
    rundir = _rundir(env)
    assert not os.path.exists(os.path.join(rundir, "daemon.sock"))
    assert not runtime.lock_held(rundir)
    assert "idle for" in Path(rundir, "daemon.log").read_text()


# -- the shell hook's warm-up --------------------------------------------------------------


def test_maybe_warm_starts_one_daemon_and_then_leaves_it_be(daemon_env):
    """What it costs (it returns before the model loads; a call while the
    daemon is up is a file check) is measured by bench/hooks.py."""
    from thatch_cli.daemon.warm import maybe_warm

    maybe_warm(daemon_env)
    rundir = _rundir(daemon_env)
    assert wait_until(lambda: runtime.lock_held(rundir) and runtime.read_pidfile(rundir) is not None)
    pid = runtime.read_pidfile(rundir)["pid"]
    for _ in range(20):
        maybe_warm(daemon_env)
    assert daemon_pids(daemon_env) == [pid]  # nothing else was spawned
    other = {**daemon_env, "THATCH_MODEL": "fake:32"}
    maybe_warm(other)  # another model: its own daemon, started in the background; ours keeps serving
    assert wait_until(lambda: (runtime.read_pidfile(_rundir(other)) or {}).get("model") == "fake:32")
    assert runtime.pid_alive(pid) and runtime.read_pidfile(rundir)["pid"] == pid


def test_maybe_warm_never_raises_and_respects_the_switch(daemon_env, tmp_path):
    from thatch_cli.daemon.warm import maybe_warm

    maybe_warm({**daemon_env, "THATCH_DAEMON": "0"})
    assert daemon_pids(daemon_env) == []
    blocker = tmp_path / "file"
    blocker.write_text("")
    maybe_warm({**daemon_env, "XDG_RUNTIME_DIR": str(blocker)})
    maybe_warm({})  # nothing to go on: still no exception


def test_maybe_warm_imports_nothing_heavy(daemon_env):
    code = ("import sys, os; from thatch_cli.daemon.warm import maybe_warm; maybe_warm(dict(os.environ));"
            "print(sorted(m for m in ('numpy', 'typer', 'rich', 'dulwich', 'torch', 'sentence_transformers',"
            " 'subprocess') if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code], env=daemon_env, capture_output=True, text=True, timeout=30)
    assert result.stdout.strip() == "[]", result.stderr
    assert wait_until(lambda: len(daemon_pids(daemon_env)) == 1)


def test_recall_client_imports_no_numpy_when_the_daemon_serves(daemon_env, tmp_path):
    seed(daemon_env)
    thatch(daemon_env, "daemon", "start")
    result, modules = run_probed(["recall", "publish"], env=daemon_env, cwd=tmp_path, tmp_path=tmp_path, timeout=30)
    assert result.returncode == 0 and "release" in result.stdout, result.stderr
    assert modules, result.stderr  # the probe reported
    assert sorted(modules & {"numpy", "torch", "sentence_transformers", "typer", "thatch_cli.ranking.dense"}) == []


# -- the runtime module agrees with the rest of thatch ------------------------------------------


def test_runtime_mirrors_embeddings(minilm_folder):
    from thatch_cli.model import embeddings

    for name in (minilm_folder, "fake:64", "BAAI/bge-small-en-v1.5"):
        assert runtime.expected_model({"THATCH_MODEL": name}) == embeddings.embedder_from_env({"THATCH_MODEL": name}).name
    assert runtime.expected_model({}) == embeddings.embedder_from_env({}).name


# -- patching the cached matrix after a save --------------------------------------------------


def test_patched_matrix_equals_a_reloaded_one():
    import random

    import numpy as np

    from thatch_cli.daemon.cache import with_row
    from thatch_cli.ranking.dense import StoreVectors

    rng = np.random.default_rng(7)
    pick = random.Random(7)
    dim = 16
    rows = {}
    for i in range(200):
        slug = f"note-{pick.randrange(10_000):05d}-é" if i % 3 else f"Z{i}"
        rows[slug] = (pick.choice([None, "", "feat/a", "feat/b"]), pick.random() < 0.2,
                      np.asarray(rng.normal(size=dim), "<f4").tobytes(), {"pinned": int(pick.random() < 0.3)})

    def build(current):
        return StoreVectors.build("s", [(slug, *row) for slug, row in sorted(current.items())], dim)

    patched = build(rows)
    for step in range(60):
        slug = pick.choice(sorted(rows)) if step % 2 else f"new-{step}"
        if step % 5 == 0 and slug in rows:
            del rows[slug]
            patched, had = with_row(patched, slug, None, dim)
            assert had
        else:
            rows[slug] = (pick.choice([None, "feat/c", "feat/a"]), pick.random() < 0.2,
                          np.asarray(rng.normal(size=dim), "<f4").tobytes(), {"pinned": int(pick.random() < 0.3)})
            patched, _ = with_row(patched, slug, rows[slug], dim)
    fresh = build(rows)
    assert patched.slugs == fresh.slugs
    assert patched.matrix.tobytes() == fresh.matrix.tobytes()
    assert (patched.archived == fresh.archived).all()
    for branch in (None, "feat/a", "feat/b", "feat/c", "nope"):
        for archived in (False, True):
            for fields in ({}, {"pinned": True}):
                where = Filter(["s"], branch=branch, archived=archived, fields=fields)
                assert (patched.mask(where) == fresh.mask(where)).all()
    assert 0 < fresh.mask(Filter(["s"], any_branch=True, fields={"pinned": True})).sum() < len(fresh.slugs)


def test_saves_patch_the_cache_and_recall_stays_exact(daemon_env):
    seed(daemon_env)
    local = {**daemon_env, "THATCH_DAEMON": "0"}
    thatch(daemon_env, "recall", "publish")  # loads both stores into the cache
    assert (status(daemon_env)["cache_loads"], status(daemon_env)["cache_patches"]) == (2, 0)
    steps = [("remember", "deploy", "deploys go through github actions"),
             ("remember", "deploy", "deploys go through the release workflow", "--overwrite"),
             ("remember", "scoped", "login form half done publish", "--branch", "feat/login"),
             ("remember", "hidden", "publish old notes", "--archived")]
    for step in steps:
        assert thatch(daemon_env, *step).returncode == 0
        for query, extra in (("publish", []), ("deploy workflow", []), ("login", ["--branch", "feat/login"]),
                             ("publish", ["--include-archived"])):
            warm = thatch_json(daemon_env, "recall", query, *extra)[1]
            cold = thatch_json(local, "recall", query, *extra)[1]
            assert [(r["slug"], r["score"]) for r in warm["results"]] == \
                   [(r["slug"], r["score"]) for r in cold["results"]], (step, query)
            assert warm["notices"] == cold["notices"]
    # Every save patched the cached matrix; nothing was reloaded from disk.
    assert (status(daemon_env)["cache_loads"], status(daemon_env)["cache_patches"]) == (2, 4)
    # A write the daemon was not told about (forget runs no engine) is noticed by the version check.
    assert thatch(daemon_env, "forget", "deploy").returncode == 0
    warm = thatch_json(daemon_env, "recall", "deploy workflow")[1]
    assert "deploy" not in [r["slug"] for r in warm["results"]]
    assert status(daemon_env)["cache_loads"] == 3


def test_recall_pinned_through_the_daemon_follows_pin_and_unpin(daemon_env):
    """A filterable field (pinned) filters in the daemon's mask, and a pin made
    after the store was cached (an UPDATE no engine hears of) is seen."""
    seed(daemon_env)
    local = {**daemon_env, "THATCH_DAEMON": "0"}
    assert thatch(daemon_env, "pin", "release").returncode == 0
    for _ in range(2):  # the second is answered from the cached matrix
        warm = thatch_json(daemon_env, "recall", "publish", "--pinned", "--mode", "semantic")[1]
        assert [r["slug"] for r in warm["results"]] == ["release"]
    assert status(daemon_env)["cache_loads"] >= 1
    assert thatch(daemon_env, "unpin", "release").returncode == 0
    assert thatch(daemon_env, "pin", "wal").returncode == 0
    for env in (daemon_env, local):
        found = thatch_json(env, "recall", "publish", "--pinned", "--mode", "semantic", "--floor", "0")[1]
        assert [r["slug"] for r in found["results"]] == ["wal"]


# -- a stopped daemon, alternating models ------------------------------------------------------


def test_a_stopped_daemon_costs_seconds_then_the_command_degrades(daemon_env):
    """SIGSTOP: the socket still accepts, nothing answers. Each request pings
    the daemon while it waits and gives up within seconds (the timeout below
    is far under the 120 s a request may take while a model loads). Then the
    command degrades instead of loading the model itself (on a machine too
    busy for the daemon, every command doing that was a herd): recall ranks
    by keywords, remember saves without a vector, reindex embeds in-process."""
    seed(daemon_env)
    pid = thatch_json(daemon_env, "daemon", "start")[1]["pid"]
    os.kill(pid, signal.SIGSTOP)
    try:
        code, data, err = thatch_json(daemon_env, "recall", "publish the package", timeout=30)
        said = " ".join(data["notices"]) + err
        assert code == 0 and data["results"][0]["slug"] == "release"
        assert "semantic search unavailable (the background model process is not keeping up: the daemon stopped" \
            " answering" in said and "in-process" not in said
        code, data, err = thatch_json(daemon_env, "remember", "later", "saved while the daemon is stuck", timeout=30)
        assert code == 0 and data["has_vector"] is False
        assert "saved without a vector (the background model process is not keeping up" in data["notices"][0]
        code, data, err = thatch_json(daemon_env, "reindex", timeout=60)
        assert code == 0 and data["embedded"] == 1 and "in-process" in err
    finally:
        os.kill(pid, signal.SIGCONT)
    assert thatch_json(daemon_env, "recall", "publish the package")[2] == ""  # served again once it runs


def test_alternating_models_never_restart_a_daemon(daemon_env):
    seed(daemon_env)
    first = thatch_json(daemon_env, "daemon", "start")[1]["pid"]
    other = {**daemon_env, "THATCH_MODEL": "fake:32"}
    assert thatch_json(other, "recall", "publish")[0] == 0
    second = status(other)["pid"]
    for env in (daemon_env, other, daemon_env, other):
        code, data, err = thatch_json(env, "recall", "publish the package")
        assert code == 0 and data["results"] and err == "", err
    assert (status(daemon_env)["pid"], status(other)["pid"]) == (first, second)


def test_the_daemon_never_creates_or_migrates_a_file_it_is_named(daemon_env, tmp_path):
    """A same-user client naming a missing file or a foreign SQLite file gets
    a `database` error; the file is not created, and a foreign or older
    database keeps its bytes (no journal switch, no thatch tables)."""
    import sqlite3

    from thatch_cli.daemon.client import Client

    seed(daemon_env)
    thatch(daemon_env, "daemon", "start")
    missing = tmp_path / "missing.db"
    foreign = tmp_path / "foreign.db"
    conn = sqlite3.connect(foreign)
    conn.execute("CREATE TABLE entries (slug TEXT, store TEXT, label TEXT, content TEXT, embedding BLOB)")
    conn.execute("INSERT INTO entries VALUES ('a', 'acme/widget', 'a', 'someone else''s data', NULL)")
    conn.commit()
    conn.close()
    before = foreign.read_bytes()

    client = Client(daemon_env, autostart=False)

    def search(db: Path | str) -> dict:
        return client.call("search", db=str(db), filter=Filter(["acme/widget"]).to_json(), query="publish",
                           passage=None, limit=5, min_score=None, wait=True)[0]

    try:
        for path in (missing, foreign):
            with pytest.raises(protocol.ErrorReply) as refused:
                search(path)
            assert refused.value.code == "database", refused.value.message
        assert search(daemon_env["THATCH_DB"])["hits"]  # still serving its real database
    finally:
        client.close()
    assert not missing.exists()
    assert foreign.read_bytes() == before
    assert not Path(f"{foreign}-wal").exists()


def test_the_daemon_is_found_whatever_environment_a_host_passes(daemon_env, tmp_path, monkeypatch):
    """Hosts start `thatch mcp` without XDG_RUNTIME_DIR or TMPDIR (Codex, the
    TypeScript MCP SDK): the runtime directory comes from the user id, so one
    daemon serves every environment (issue 17, point 5)."""
    import pwd

    user = pwd.getpwuid(os.getuid())
    stripped = {"HOME": daemon_env["HOME"], "PATH": os.environ["PATH"], "USER": user.pw_name,
                "THATCH_DB": daemon_env["THATCH_DB"], "THATCH_MODEL": FAKE}
    terminal = {**stripped, "TMPDIR": str(tmp_path / "tmp"), "XDG_RUNTIME_DIR": ""}
    assert runtime.runtime_dir(stripped) == runtime.runtime_dir(terminal)
    assert runtime.user_dir(stripped) in (f"/run/user/{os.getuid()}/thatch", f"/tmp/thatch-{os.getuid()}")
    run_user = f"/run/user/{os.getuid()}"
    desktop = {**stripped, "XDG_RUNTIME_DIR": run_user}
    if os.path.isdir(run_user):  # a desktop session: the terminal's XDG_RUNTIME_DIR is this one
        assert runtime.runtime_dir(desktop) == runtime.runtime_dir(stripped)
    assert runtime.runtime_dir({**stripped, "THATCH_MODEL": "fake:32"}) != runtime.runtime_dir(stripped)
