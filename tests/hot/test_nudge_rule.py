"""The recall nudge's rule (ops/nudge.py: meaning and words) through the real
`thatch flush-tools`, a warm daemon and each model bench/nudge_rule.py
measures: a prompt that names a memory's subject lists it even when its
meaning alone stays under nudge.threshold; a prompt that only shares common
words with the memories, in one clause or several, lists nothing. The store is the 40 developer
memories of bench/data/nudge_prompts.json (term weights depend on the whole
store, so the test uses the bench's)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from thatch_cli.ops.context import Context
from thatch_cli.ops.remember import remember

from helpers import bench_models, hook, hook_payload, stop_all, thatch_process

pytestmark = pytest.mark.model

ROOT = Path(__file__).resolve().parents[2]
DATA = json.loads((ROOT / "bench" / "data" / "nudge_prompts.json").read_text(encoding="utf-8"))
# Each names its memory's subject, and with every model the cosine alone stays under 0.45.
NAMED = {"what's the command to run the unit tests?": "Test command",
         "when does on-call get paged for new errors?": "Error monitoring"}
# Each shares a word or two with some memory ("test", "cluster", "cache", "payments") and nothing more.
COMMON_WORDS = ["write a unit test for the slugify helper", "what is a cluster in statistics?",
                "explain cache lines and false sharing in CPU caches",
                "how do credit card payments work between banks?",
                "this function retries three times, make the number of retries a parameter",
                "the UI freezes when I drag a large image, can you profile it?",
                "release the file lock before the function returns"]


@pytest.fixture(scope="module")
def model_paths(minilm_folder, tmp_path_factory) -> dict[str, str | None]:
    models = bench_models()

    mpnet = models.cache_root() / "all-mpnet-base-v2"
    return {"minilm": minilm_folder,
            "compressed": str(models.build_compressed(minilm_folder, tmp_path_factory.mktemp("m") / "compressed")),
            "mpnet": str(mpnet) if (mpnet / "modules.json").is_file() else None}


@pytest.mark.parametrize("model", ["minilm", "compressed", "mpnet"])
def test_the_nudge_fires_on_a_named_subject_and_not_on_common_words(model, model_paths, git_repo, isolated_env):
    path = model_paths[model]
    if path is None:
        pytest.skip("all-mpnet-base-v2 is not fetched: run `python bench/models.py mpnet` (PyPI) first")
    project = git_repo("shop", remote="git@github.com:acme/shop.git")
    # A generous hook deadline: this checks what is listed, not how fast (bench/nudge_latency.py does).
    env = {**os.environ, "THATCH_MODEL": path, "THATCH_DAEMON": "1", "HF_HUB_OFFLINE": "1", "THATCH_HOOK_DEADLINE": "20"}
    # Saved (and the model measured, once) in this process; the daemon then reads the same calibration.
    with Context(env={**env, "THATCH_DAEMON": "0"}, cwd=project) as ctx:
        for memory in DATA["memories"]:
            remember(ctx, memory["content"], memory["label"])

    def nudge(prompt: str) -> str:
        result = hook(["flush-tools"], hook_payload("claude_user_prompt_submit", project=project, prompt=prompt,
                                                    session=f"s-{model}"), env=env)
        assert result.returncode == 0 and "Traceback" not in result.stderr, result
        return result.stdout

    try:
        # A recall waits for the daemon to load the model; the hook never does (it would answer by keywords).
        warm = thatch_process(["recall", "--json", "unit tests"], env=env, cwd=project, timeout=600)
        assert json.loads(warm.stdout)["mode"] == "hybrid", warm
        for prompt, label in NAMED.items():
            text = nudge(prompt)
            assert text.startswith("thatch: ") and "may relate to this prompt" in text, (prompt, text)
            assert f'- "{label}" (acme/shop)' in text, (prompt, text)
        for prompt in COMMON_WORDS:
            assert nudge(prompt).startswith("thatch: After responding"), prompt
    finally:
        stop_all(env)
