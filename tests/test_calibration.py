"""One scale for every model (thatch_cli/calibration/): the curve arithmetic,
the cache, the light status report, and the decisions themselves: a model
whose cosines are squeezed into [0.5, 1] (all-MiniLM-L6-v2 plus a Dense
layer, cos' = 0.5 + 0.5 cos, built here through the normal model folder
path) nudges, floors and warns exactly as MiniLM does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from thatch_cli import calibration
from thatch_cli.calibration import IDENTITY_CURVE, KINDS, Calibration, Curve
from thatch_cli.calibration.fit import of
from thatch_cli.model.embeddings import FakeEmbedder, SentenceTransformerEmbedder
from thatch_cli.ops import nudge
from thatch_cli.ops.context import Context
from thatch_cli.ops.recall import peek
from thatch_cli.ops.remember import remember
from thatch_cli.support.settings import NUDGE_THRESHOLD, RECALL_FLOOR

from helpers import bench_models

# -- the arithmetic -------------------------------------------------------------------------------


def test_a_curve_maps_monotonically_and_inverts():
    curve = Curve([-1.0, 0.5, 0.75, 1.0], [-1.0, 0.0, 0.5, 1.0])
    assert curve(0.5) == 0.0 and curve(0.625) == pytest.approx(0.25) and curve(1.0) == 1.0
    values = [curve(x / 100) for x in range(-100, 101)]
    assert values == sorted(values)
    for y in (-0.5, 0.0, 0.3, 0.5, 0.99):
        assert curve(curve.inverse(y)) == pytest.approx(y)
    with pytest.raises(ValueError):
        Curve([0.0, 0.0], [0.0, 1.0])  # xs must increase
    with pytest.raises(ValueError):
        Curve([0.0, 1.0], [1.0, 0.0])  # and ys never fall


def test_the_fitted_curve_through_quantiles_is_monotone_even_with_ties():
    from thatch_cli.calibration.fit import curve

    fitted = curve([0.1, 0.1, 0.2, 0.3, 0.3, 0.9], [0.0, 0.05, 0.1, 0.2, 0.25, 0.8])
    assert fitted.xs == sorted(set(fitted.xs)) and fitted.xs[0] == -1.0 and fitted.xs[-1] == 1.0
    assert fitted.ys == sorted(fitted.ys)


def test_the_scale_follows_unrelated_pairs_to_their_top_then_related_ones():
    import numpy as np

    from thatch_cli.calibration.fit import RELATED, TAIL, quantiles

    rng = np.random.default_rng(7)
    related = np.array([True] * 400 + [False] * 40_000)
    scores = np.where(related, rng.uniform(0.3, 0.9, related.size), rng.uniform(-0.1, 0.4, related.size))
    found = quantiles(scores, related)
    low, high = found[:-RELATED], found[-RELATED:]
    assert found == sorted(found) and low[0] == scores[~related].min()
    # The unrelated pairs set the scale up to where only TAIL of them score higher.
    assert np.count_nonzero(scores[~related] > low[-1]) == pytest.approx(TAIL, abs=1)
    # Above it, the related pairs that score higher, from the lowest of them to the highest.
    above = scores[related & (scores > low[-1])]
    assert high[0] == above.min() and high[-1] == scores.max()


def test_the_reference_was_measured_on_the_bundled_sample_the_current_way():
    """A sample or scheme change without `python bench/calibration_reference.py`
    would make every model's first fit fail."""
    from thatch_cli.calibration.fit import RELATED, TAIL, _tail_probabilities, sample_hash, sample_items

    ref = calibration.reference()
    assert ref["sample"] == sample_hash()
    count = len(sample_items())
    unrelated = count * (count - 1)
    for kind in KINDS:
        assert len(ref[kind]) == len(_tail_probabilities(unrelated)) + RELATED
        assert ref[kind] == sorted(ref[kind])
    assert count >= 300 and TAIL < unrelated / 1000


def test_the_cache_is_per_model_and_sample(isolated_env):
    assert calibration.lookup(isolated_env, "some-model@abc") is None
    measured = Calibration("some-model@abc", {kind: Curve([-1.0, 0.5, 1.0], [-1.0, 0.2, 1.0]) for kind in KINDS},
                           sample=calibration.sample_version())
    calibration.remember(isolated_env, measured)
    found = calibration.lookup(isolated_env, "some-model@abc")
    assert found is not None and found.score("query", 0.5) == pytest.approx(0.2)
    path = calibration.cache_path(isolated_env)
    data = json.loads(path.read_text())
    data["some-model@abc"]["sample"] = "another-sample"  # measured on an older sample: measured again
    path.write_text(json.dumps(data))
    assert calibration.lookup(isolated_env, "some-model@abc") is None
    path.write_text("{not json")
    assert calibration.lookup(isolated_env, "some-model@abc") is None
    # The reference model is the scale: its curve is the identity, never measured.
    reference = calibration.lookup(isolated_env, calibration.reference()["identity"])
    assert reference is not None and reference.curves["query"] is IDENTITY_CURVE


def test_the_status_report_is_light_and_says_what_each_cut_off_means(isolated_env, tmp_path):
    """`state` (for `thatch status`) reads the cache only: no numpy, no model."""
    code = ("import json, os, sys; from thatch_cli.calibration import state; print(json.dumps(state(os.environ)));"
            " print(sorted({m.split('.')[0] for m in sys.modules} & {'numpy', 'torch', 'sentence_transformers'}))")
    env = {**os.environ, "THATCH_MODEL": "some/hub-model"}
    measured = Calibration("some/hub-model", {kind: Curve([-1.0, 0.5, 1.0], [-1.0, 0.25, 1.0]) for kind in KINDS},
                           sample=calibration.sample_version())
    before = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    report, imported = before.stdout.splitlines()
    assert imported == "[]" and json.loads(report)["calibrated"] is False
    calibration.remember(isolated_env, measured)
    after = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    report, imported = after.stdout.splitlines()
    state = json.loads(report)
    assert imported == "[]" and state["calibrated"] is True and state["identity"] == "some/hub-model"
    assert state["cutoffs"]["recall.floor"] == {"value": RECALL_FLOOR, "kind": "query",
                                                "cosine": round(measured.cosine("query", RECALL_FLOOR), 4)}
    assert set(state["cutoffs"]) == {"recall.floor", "nudge.threshold", "duplicates.threshold"}


# -- the decisions, with a real model and its squeezed copy ---------------------------------------------------

NOTES = {
    "Deploy freeze": "No production deploys on Fridays after 2pm; the on-call lead must approve any exception.",
    "Release process": "Tag the commit, build the wheel and upload it to PyPI with twine.",
    "Staging database": "The staging Postgres listens on port 5432 on db-staging.internal.",
    "Code style": "Run ruff format before committing; CI rejects unformatted files.",
    "Log retention": "Application logs are kept for 30 days, audit logs for seven years.",
    "Laptop setup": "Run ./scripts/bootstrap.sh on a new laptop; it installs uv, Node 20 and the hooks.",
}
PROMPTS = [
    "can I ship the release to prod this friday afternoon?",
    "how do I publish a new version of the package?",
    "which port does the staging db use",
    "how long do we keep the logs around",
    "what should I install on my new computer",
    "banana bread recipe with walnuts",
    "who won the 1998 world cup final",
    "how do volcanoes form",
]
NEAR_COPIES = {
    "Friday freeze": "No production deploys on Friday after 2pm; exceptions need the on-call lead.",
    "Publishing": "To release, tag the commit, build the wheel, then upload it to PyPI using twine.",
    "Bike tyres": "Pump the bike tyres to 4 bar before a long ride.",
}


@pytest.fixture(scope="module")
def squeezed(minilm_path, tmp_path_factory) -> str:
    build_compressed = bench_models().build_compressed

    return str(build_compressed(minilm_path, tmp_path_factory.mktemp("models") / "all-MiniLM-L6-v2-compressed"))


def decisions(embedder, env: dict, tmp: Path) -> dict:
    ctx = Context(env={**env, "THATCH_DB": str(tmp / f"{abs(hash(embedder.name))}.db"), "THATCH_STORE": "acme/widget",
                       "THATCH_DAEMON": "0"}, cwd=tmp, embedder_factory=lambda _env: embedder)
    for label, body in NOTES.items():
        remember(ctx, body, label)
    found = {}
    for prompt in PROMPTS:
        found[prompt] = {
            "nudge": [m.memory.label for m in nudge.related(ctx, prompt, threshold=NUDGE_THRESHOLD)],
            "recall": [r.memory.label for r in peek(ctx, prompt).results],
        }
    for label, body in NEAR_COPIES.items():
        found[label] = sorted(m.label for m, _ in remember(ctx, body, label).similar)
    ctx.close()
    return found


@pytest.mark.model
def test_a_squeezed_model_decides_exactly_as_the_reference(minilm_path, squeezed, isolated_env, tmp_path):
    env = {**os.environ, **isolated_env}
    reference = decisions(SentenceTransformerEmbedder(minilm_path, env=env), env, tmp_path)
    other = SentenceTransformerEmbedder(squeezed, env=env)
    assert other.name != SentenceTransformerEmbedder(minilm_path, env=env).name and other.dim == 385
    assert decisions(other, env, tmp_path) == reference
    # Something was decided: prompts nudge and recall finds, cake finds nothing.
    assert reference[PROMPTS[2]]["nudge"] == ["Staging database"] and reference[PROMPTS[3]]["nudge"] == ["Log retention"]
    assert reference[PROMPTS[0]]["recall"][:1] == ["Deploy freeze"]
    assert reference[PROMPTS[5]] == {"nudge": [], "recall": []}
    assert reference["Friday freeze"] == ["Deploy freeze"] and reference["Bike tyres"] == []
    # Measured once, then read from the cache.
    assert calibration.lookup(env, other.name) is not None
    # Raw cosines (what thatch compared before) would nudge on every prompt and floor nothing.
    raw = type("Raw", (), {"name": other.name, "dim": other.dim, "embed_query": other.embed_query,
                           "embed_passages": other.embed_passages,
                           "calibration": lambda self: Calibration.identity(other.name)})()
    (tmp_path / "raw").mkdir()
    uncalibrated = decisions(raw, env, tmp_path / "raw")
    assert all(uncalibrated[p]["nudge"] for p in PROMPTS) and uncalibrated[PROMPTS[5]]["recall"]


def test_measuring_a_model_is_a_wait_of_its_own_and_happens_once(monkeypatch, isolated_env, tmp_path):
    """The first command with a new model waits a few seconds for the
    measurement: the wait indicator (a spinner at a terminal, nothing on a
    pipe or with --json) says so; the next command reads the cache."""
    from thatch_cli.calibration import fit as fitting
    from thatch_cli.ops.engine import MEASURING

    measured = []

    def fake_fit(embedder):
        measured.append(embedder.name)
        return Calibration(embedder.name, dict.fromkeys(KINDS, IDENTITY_CURVE), sample=calibration.sample_version())

    monkeypatch.setattr(fitting, "fit", fake_fit)
    folder = tmp_path / "some-model"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    shown = []

    class Shown:
        def __init__(self, message):
            shown.append(message)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return None

    for _ in range(2):
        ctx = Context(env={**isolated_env, "THATCH_DAEMON": "0"}, cwd=tmp_path, indicator=Shown,
                      embedder_factory=lambda env: SentenceTransformerEmbedder(str(folder), env=env))
        ctx.engine().calibration()
        ctx.close()
    assert shown == [MEASURING, MEASURING] and len(measured) == 1  # the second found it cached


def test_the_test_embedder_is_its_own_scale():
    found = of(FakeEmbedder(16))
    assert found.measured and found.curves["passage"] is IDENTITY_CURVE
