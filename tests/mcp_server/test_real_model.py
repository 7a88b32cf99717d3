"""With the real model (the bundled all-MiniLM-L6-v2) behind the shared
daemon: an agent's recall before the model is loaded answers at once by
keywords, then by meaning once it is; and the agent hook flush-tools lists a memory
for a paraphrased prompt (calibrated cosine >= nudge.threshold), stays quiet for an
unrelated one, and stamps no recall telemetry. One daemon start serves the
whole scenario (loading the model takes seconds)."""

from __future__ import annotations

import json
import os

import anyio
import pytest

from thatch_cli.ops.context import Context
from thatch_cli.ops.remember import remember

from helpers import BrokenEmbedder, call_json, hook, hook_payload, mcp_session, stop_all, thatch_process, wait_until

pytestmark = pytest.mark.model

NOTES = [
    ("Staging port", "The staging server listens on port 8443 behind the VPN."),
    ("Database pool", "The connection pool size is 20; tests time out on CI when it is smaller."),
    ("Release process", "Tag the commit, build the wheel and upload it to PyPI with twine."),
]


def test_agents_with_the_real_model(git_repo, isolated_env, minilm_path):
    project = git_repo("widget", remote="git@github.com:acme/widget.git")
    env = {**os.environ, "THATCH_MODEL": minilm_path, "THATCH_DAEMON": "1", "HF_HUB_OFFLINE": "1",
           "CLAUDE_PROJECT_DIR": str(project)}
    # One memory saved while no model could load: findable by its words only.
    with Context(env={**env, "THATCH_DAEMON": "0"}, cwd=project, embedder_factory=lambda _env: BrokenEmbedder()) as ctx:
        remember(ctx, "Deploys go out on Tuesdays and Thursdays only.", "Deploy days")

    async def scenario():
        async with mcp_session(env) as session:
            early = call_json(await session.call_tool("memory_recall", {"query": "which days do deploys go out"}))
            for label, body in NOTES:  # waits for the model: these get vectors
                saved = call_json(await session.call_tool("memory_remember", {"label": label, "content": body}))
                assert not saved[0] and "notices" not in saved[1], saved  # a save without a vector says so
            later = call_json(await session.call_tool("memory_recall", {"query": "what port does staging use"}))
            return early, later

    try:
        (early_error, early), (later_error, later) = anyio.run(scenario)
        assert not early_error and early["mode"] == "lexical"
        assert [r["label"] for r in early["results"]] == ["Deploy days"]
        assert "semantic search unavailable" in early["notices"][0]
        assert not later_error and later["mode"] == "hybrid" and later["results"][0]["label"] == "Staging port"

        def counts() -> dict[str, int]:
            listed = json.loads(thatch_process(["list", "--json"], env=env, cwd=project).stdout)["memories"]
            return {m["label"]: m["recall_count"] for m in listed}

        stamped = counts()
        assert stamped["Staging port"] == 1  # memory_recall stamps what it returns

        def nudge(prompt: str) -> str:
            result = hook(["flush-tools"], hook_payload("claude_user_prompt_submit", project=project, prompt=prompt,
                                                        session="s-real"), env=env)
            assert result.returncode == 0, result.stderr
            return result.stdout

        assert wait_until(lambda: "Staging port" in nudge("what port is the staging environment reachable on?"),
                          timeout=30, step=0.5)
        pool = nudge("how many database connections should the pool allow?")
        assert pool.startswith("thatch: 1 stored memory may relate to this prompt.") and '- "Database pool"' in pool
        assert nudge("what's a good recipe for banana bread?").startswith("thatch: After responding")
        assert counts() == stamped  # the nudges stamped nothing
    finally:
        stop_all(env)
