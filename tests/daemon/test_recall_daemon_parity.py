"""With the real all-MiniLM-L6-v2 model: recall through the warm daemon gives
exactly the results and scores of recall in-process, for every scope and
filter, and so does remember's near-duplicate check."""

from __future__ import annotations

import io
import os

import pytest

from thatch_cli.daemon.client import Client
from thatch_cli.memory.records import Memory
from thatch_cli.model.embeddings import SentenceTransformerEmbedder
from thatch_cli.ops.context import Context
from thatch_cli.ops.recall import peek
from thatch_cli.ops.remember import find_similar, remember

from helpers import daemon_pids, stop_all

pytestmark = pytest.mark.model

NOTES = [
    ("Release process", "Tag the commit, build the wheel and upload it to PyPI with twine.", None, False),
    ("Database choice", "We store everything in SQLite with WAL so readers never block the writer.", None, False),
    ("Code style", "Run ruff format before committing; CI rejects unformatted files.", None, False),
    ("Flaky test", "test_sync times out on CI when the network mock is not reset between tests.", None, False),
    ("Onboarding", "New laptops need the VPN profile and an SSH key registered with the git host.", None, False),
    ("Logging", "Use structlog with JSON output in production and pretty console output locally.", None, False),
    ("Login form wip", "The login form validates emails client-side; server checks are still missing.",
     "feat/login", False),
    ("Session cookies", "Session cookies are HttpOnly and SameSite=Lax; rotate the secret monthly.",
     "feat/login", False),
    ("Old deploy", "We used to deploy with fabric scripts over ssh to each host.", None, True),
    ("Deploy", "Deploys go through the GitHub Actions workflow; never push to prod by hand.", None, False),
    ("Caching", "API responses are cached in Redis for five minutes, keyed by user and route.", None, False),
    ("Migrations", "Alembic migrations run automatically on startup in staging, manually in prod.", None, False),
    ("Same text A", "Retry failed webhook deliveries with exponential backoff up to one hour.", None, False),
    ("Same text B", "Retry failed webhook deliveries with exponential backoff up to one hour.", None, False),
]
GLOBAL = [
    ("Editor", "Prefer vim keybindings and a dark theme in every editor.", None, False),
    ("Shell", "zsh with a minimal prompt; aliases live in ~/.zshrc.local.", None, False),
]
OTHER = [("Wiki", "Architecture docs live in the wiki under Engineering/Platform.", None, False)]

QUERIES = [
    ("how do I publish a new version of the package", {}),
    ("which storage engine do we use and why", {}),
    ("what should a new hire set up on their computer", {}),
    ("formatter to apply before pushing code", {"limit": 3}),
    ("login validation", {"branch": "feat/login"}),
    ("login validation", {}),
    ("how do we deploy", {"include_archived": True}),
    ("how do we deploy", {}),
    ("webhook retries", {"limit": 1}),
    ("editor preferences", {"all_stores": True}),
    ("where is the architecture documentation", {"all_stores": True, "limit": 20}),
    ("redis", {"store": "acme/widget", "limit": 50}),
]


@pytest.fixture(scope="module")
def minilm(minilm_path):
    return SentenceTransformerEmbedder(minilm_path)


def _results(outcome):
    return [(r.memory.store, r.memory.slug, r.score, r.match, r.ranked.dense, r.ranked.dense_rank,
             r.ranked.lexical, r.ranked.lexical_rank) for r in outcome.results]


def test_recall_is_identical_with_and_without_the_daemon(isolated_env, tmp_path, minilm, minilm_path):
    env = {**os.environ, "THATCH_MODEL": minilm_path, "THATCH_DAEMON": "1", "THATCH_STORE": "acme/widget"}
    local = Context(env=env, cwd=tmp_path, embedder_factory=lambda _env: minilm)
    for store, notes in (("acme/widget", NOTES), ("global", GLOBAL), ("other/repo", OTHER)):
        for label, body, branch, archived in notes:
            remember(local, body, label, store=store, branch=branch, archived=archived or None)
    errors = io.StringIO()
    warm = Context(env=env, cwd=tmp_path, use_daemon=True, stderr=errors)
    assert warm.daemon_enabled() and not local.daemon_enabled()
    try:
        for mode in ("hybrid", "semantic"):
            for query, options in QUERIES:
                expected = peek(local, query, mode=mode, **options)
                got = peek(warm, query, mode=mode, **options)
                assert got.mode == expected.mode == mode
                assert _results(got) == _results(expected), (mode, query)
                assert got.notices == expected.notices and got.stores == expected.stores
        # remember's near-duplicate check, daemon side vs in-process
        probe = Memory(store="acme/widget", slug="probe", label="probe", content="")
        text = "# Retry\n\nRetry failed webhook deliveries with exponential backoff up to an hour."
        near_local = find_similar(local, probe, text)
        near_warm = find_similar(warm, probe, text)
        assert [(h.key, h.score) for h in near_warm.hits] == [(h.key, h.score) for h in near_local.hits]
        assert len(near_warm.hits) == 2 and near_warm.vector == near_local.vector
        assert warm.engine().local is None and errors.getvalue() == ""  # really served by the daemon
        assert len(daemon_pids(env)) == 1
        # A write bumps the store version: the daemon's cached matrix follows,
        # reloaded (a write it was not told about) or patched (its own saves).
        remember(local, "Feature flags are read from LaunchDarkly at startup.", "Feature flags", store="acme/widget")
        query = "where do feature flags come from"
        assert _results(peek(warm, query)) == _results(peek(local, query))
        assert peek(warm, query).results[0].memory.slug == "feature-flags"
        saved = remember(warm, "Feature flags come from a YAML file in the repo.", "Feature flags",
                         store="acme/widget", overwrite=True)
        assert saved.memory.embedding == remember(local, "Feature flags come from a YAML file in the repo.",
                                                  "Feature flags", store="other/repo").memory.embedding
        remember(warm, "Webhooks retry with backoff for an hour.", "Webhook retries", store="acme/widget",
                 branch="feat/login")
        for query, options in QUERIES + [("feature flags yaml", {}), ("webhook backoff", {"branch": "feat/login"})]:
            assert _results(peek(warm, query, **options)) == _results(peek(local, query, **options)), query
        from thatch_cli.daemon.client import Client as _Client

        status = _Client(env, autostart=False).status()
        assert status["cache_patches"] >= 2
        # Passage checks (remember) and queries share one entry per store searched.
        assert status["cached_stores"] == len(["acme/widget", "global", "other/repo"])
    finally:
        warm.close()
        local.close()
        Client(env, autostart=False).stop()
        stop_all(env)
