"""Callers that must not wait for the model (an agent's recall, a prompt
hook): they use it only when the daemon has it loaded, and otherwise start
the daemon in the background and answer by keywords at once."""

from __future__ import annotations

import os
import threading

import pytest

from thatch_cli.daemon import handlers, protocol
from thatch_cli.memory.filter import Filter
from thatch_cli.ops.context import Context
from thatch_cli.ops.recall import peek
from thatch_cli.ops.remember import remember

from helpers import daemon_pids, stop_all, wait_until


@pytest.fixture
def env(isolated_env, tmp_path):
    values = {**os.environ, "THATCH_DAEMON": "1", "THATCH_MODEL": "fake:64", "THATCH_STORE": "acme/widget"}
    yield values
    stop_all(values)


def context(env, tmp_path) -> Context:
    return Context(env=env, cwd=tmp_path, use_daemon=True, wait_for_model=False)


def test_no_daemon_yet_means_keywords_now_and_a_daemon_starting(env, tmp_path):
    with Context(env={**env, "THATCH_DAEMON": "0"}, cwd=tmp_path) as ctx:
        remember(ctx, "publish with twine upload", "Release")
    assert daemon_pids(env) == []
    with context(env, tmp_path) as ctx:
        first = peek(ctx, "twine upload release")
    assert first.mode == "lexical" and [r.memory.label for r in first.results] == ["Release"]
    assert "starting in the background" in first.notices[0]
    assert wait_until(lambda: len(daemon_pids(env)) == 1, timeout=20)

    def answered_by_meaning() -> bool:
        with context(env, tmp_path) as ctx:
            return peek(ctx, "twine upload release").mode == "hybrid"

    assert wait_until(answered_by_meaning, timeout=30, step=0.2)


class _Loading:
    """A server whose model is still loading."""

    class model:
        ready = threading.Event()
        name = "fake:64"

    cache = None


def test_the_daemon_answers_model_loading_instead_of_waiting():
    request = {"db": "/nowhere", "filter": Filter(["s"]).to_json(), "query": "q", "passage": None, "limit": 5,
               "min_score": None, "wait": False}
    with pytest.raises(protocol.ErrorReply) as caught:
        handlers.search(_Loading, request, b"")
    assert caught.value.code == protocol.MODEL_LOADING
