"""Embedders: text in, L2-normalised float32 vectors out; and what a model
is called, and which embedding space its vectors live in.

A model is identified by what it is, never by where it lies: a hub id as
given, a local folder by its declared name plus a fingerprint of its
weights (`all-MiniLM-L6-v2@53aa51172d14`), so a recreated virtualenv or a
copied folder is the same model. That identity is what the `model` column
records and what the daemon serves.

An embedding space is the model family plus its pooling. The original
thatch embeds BGE English models (Xenova/bge-small-en-v1.5) with mean
pooling and L2 normalisation, where the sentence-transformers release
of BGE uses the CLS token. thatch embeds them the original's way, so both
tools' rows on one file are one space: such a model's identity carries
`#mean` (`BAAI/bge-small-en-v1.5#mean`), `Xenova/...` (the original's
transformers.js) means mean pooling, and anything else is the model's own
(native) pooling. Rows of another space are never ranked against a query;
`thatch reindex` re-embeds them.

Nothing here imports numpy or sentence-transformers at module level; the
model loads on the first vector anyone asks for.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ..support.errors import ModelUnavailable
from .identity import legacy_family, local_identity

NATIVE = "native"
POOLINGS = ("cls", "mean")
# How the original thatch pools, and so how thatch embeds the models it shares with it.
ORIGINAL_POOLING = "mean"

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: the prompt hook would pay ~2.5 ms to import typing
if TYPE_CHECKING:
    from typing import Mapping, Protocol, Sequence

    import numpy as np
    from sentence_transformers import SentenceTransformer

    class Embedder(Protocol):
        @property
        def name(self) -> str: ...

        @property
        def dim(self) -> int: ...

        def embed_query(self, text: str) -> "np.ndarray": ...

        def embed_passages(self, texts: Sequence[str]) -> "np.ndarray": ...

BGE_QUERY_PREFIX = "Represent this sentence for searching relevant passages: "


def _split_pooling(name: str) -> tuple[str, str | None]:
    base, mark, pooling = name.rpartition("#")
    if mark and pooling.lower() in POOLINGS:
        return base, pooling.lower()
    return name, None


def _is_path(name: str) -> bool:
    return name.startswith(("/", "~", ".", "\\")) or "\\" in name


def model_space(name: str | None) -> str | None:
    """The embedding space of vectors a model value names: family#pooling.
    Mirrors of one hub model share a family (Xenova/bge-small-en-v1.5 and
    BAAI/bge-small-en-v1.5), a local identity is its own family (name and
    fingerprint), a path recorded by an older thatch its directory name."""
    if not name or not name.strip():
        return None
    base, pooling = _split_pooling(name.strip())
    family: str | None
    if "@" in base and not _is_path(base):
        family = base.lower()
    else:
        family = legacy_family(base)
    if family is None:
        return None
    if pooling is None:
        pooling = "mean" if base.lower().startswith("xenova/") else NATIVE
    return f"{family}#{pooling}"


def space_label(space: str) -> str:
    """A space as reports show it: the family alone for a model's own pooling."""
    return space[: -len("#" + NATIVE)] if space.endswith("#" + NATIVE) else space


def identity_cache(env: Mapping[str, str]) -> Path:
    from ..support.paths import cache_dir

    return cache_dir(env) / "models.json"


def model_identity(name: str, env: Mapping[str, str], *, compute: bool = True) -> str | None:
    """What `name` (THATCH_MODEL's value: a hub id, a local folder, or
    fake:DIM) identifies, without loading it: the value thatch records in
    the `model` column, `#mean` included for a model it embeds the
    original's way (pooled_like_original). None when that would mean
    fingerprinting a folder not seen before and `compute` is False."""
    if name.startswith("fake:"):
        return name
    path = os.path.expanduser(name)
    identity = local_identity(path, identity_cache(env), compute=compute) if os.path.isdir(path) else name.strip()
    if identity is not None and pooled_like_original(identity):
        identity += "#" + ORIGINAL_POOLING
    return identity


def pooled_like_original(name: str) -> bool:
    """Whether thatch embeds this model as the original thatch does (mean
    pooling): the BGE English models, which the original uses, so both
    tools' vectors of one file can be compared."""
    return wants_query_prefix(name)


def legacy_renames(models: Sequence[str], model: str, env: Mapping[str, str]) -> dict[str, str]:
    """New names for `model` values an older thatch recorded as a folder
    path: the folder's identity when it still exists, else the configured
    model's when that is a folder of the same name (a recreated
    virtualenv, a newer Python). Paths matching neither are left alone.
    `model` is the configured model."""
    configured = os.path.expanduser(model)
    current = os.path.realpath(configured) if os.path.isdir(configured) else None
    renames = {}
    for old in models:
        if os.path.isdir(old):
            renames[old] = computed(local_identity(old, identity_cache(env)), old)
        elif current is not None and legacy_family(old) == legacy_family(current):
            renames[old] = computed(local_identity(current, identity_cache(env)), current)
    return renames


def computed(identity: str | None, name: str) -> str:
    """An identity worked out with compute=True, which is never None (only a
    prompt's compute=False leaves it unknown); `name` stands in otherwise."""
    return identity if identity is not None else name


def wants_query_prefix(name: str) -> bool:
    space = model_space(name) or ""
    return space.startswith("bge-") and "-en" in space


def _quiet_transformers() -> None:
    """Weight-loading progress bars and hub warnings would break `--json`
    output and clutter an agent's terminal."""
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.set_verbosity_error()
        hf_logging.disable_progress_bar()
    except Exception:
        pass


class SentenceTransformerEmbedder:
    """A sentence-transformers model, loaded on first use."""

    def __init__(self, model: str, *, env: Mapping[str, str] | None = None) -> None:
        path = Path(model).expanduser()
        self._env = env or {}
        # Loaded from where it is, recorded as what it is (see model_identity).
        self._source = str(path.resolve()) if path.is_dir() else model
        self._identity = computed(model_identity(self._source, self._env), self._source)
        self._model: SentenceTransformer | None = None
        self._prefix = BGE_QUERY_PREFIX if wants_query_prefix(self._identity) else ""

    @property
    def name(self) -> str:
        return self._identity

    @property
    def env(self) -> Mapping[str, str]:
        """Where its calibration is cached (calibration.fit.of measures it there)."""
        return self._env

    @property
    def dim(self) -> int:
        model = self._load()
        getter = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        return int(getter())

    def _load(self):
        if self._model is not None:
            return self._model
        local = Path(self._source).is_dir()
        if not local and not self._in_hub_cache():
            self._check_hub_reachable()
        try:
            from sentence_transformers import SentenceTransformer
        except Exception as exc:  # ImportError, or a broken torch install
            raise ModelUnavailable(f"sentence-transformers is not importable: {exc}") from exc
        _quiet_transformers()
        try:
            if local:
                self._model = SentenceTransformer(self._source, device="cpu")
            else:
                self._model = self._from_hub(SentenceTransformer)
        except Exception as exc:
            first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise ModelUnavailable(f"cannot load embedding model {self._source!r}: {first_line}") from exc
        if pooled_like_original(self._identity):
            _pool_like_original(self._model)
        return self._model

    def _hub_cache(self) -> Path:
        """The hub cache of this embedder's environment (the daemon's may not
        be this process's, and the hub client reads its own only once)."""
        env = self._env
        home = Path(env.get("HOME") or Path.home())
        return Path(env.get("HF_HUB_CACHE") or os.path.join(
            env.get("HF_HOME") or os.path.join(env.get("XDG_CACHE_HOME") or home / ".cache", "huggingface"), "hub"))

    def _in_hub_cache(self) -> bool:
        return (self._hub_cache() / ("models--" + self._source.replace("/", "--"))).is_dir()

    def _check_hub_reachable(self) -> None:
        """Fail in milliseconds, before the 5 s import of sentence-transformers
        and the hub client's ~30 s of retries, when a download cannot work."""
        if self._env.get("HF_HUB_OFFLINE") == "1" or self._env.get("THATCH_OFFLINE") == "1":
            raise ModelUnavailable(f"embedding model {self._source!r} is not cached and offline mode is on")
        import socket
        from urllib.parse import urlparse

        host = urlparse(self._env.get("HF_ENDPOINT") or "https://huggingface.co").hostname or "huggingface.co"
        try:
            socket.getaddrinfo(host, 443)
        except OSError as exc:
            raise ModelUnavailable(
                f"embedding model {self._source!r} is not cached and {host} is unreachable"
                f" ({exc.strerror or exc}); set a local model folder with 'thatch config set model PATH'"
            ) from exc

    def _from_hub(self, factory):
        cache = str(self._hub_cache())
        try:
            return factory(self._source, device="cpu", local_files_only=True, cache_folder=cache)
        except Exception:
            if self._env.get("HF_HUB_OFFLINE") == "1" or self._env.get("THATCH_OFFLINE") == "1":
                raise
        self._check_hub_reachable()
        return factory(self._source, device="cpu", cache_folder=cache)

    def embed_query(self, text: str) -> "np.ndarray":
        return self._encode([self._prefix + text])[0]

    def embed_passages(self, texts: Sequence[str]) -> "np.ndarray":
        return self._encode(list(texts))

    def embed_queries(self, texts: Sequence[str]) -> "np.ndarray":
        return self._encode([self._prefix + t for t in texts])

    def _encode(self, texts: list[str]) -> "np.ndarray":
        import numpy as np

        model = self._load()
        vectors = model.encode(
            texts, batch_size=32, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
        )
        return np.asarray(vectors, dtype=np.float32)


def normalise(matrix: "np.ndarray") -> "np.ndarray":
    """Rows scaled to unit length (a zero row stays zero)."""
    import numpy as np

    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=-1, keepdims=True)
    norms[norms == 0] = 1.0
    return matrix / norms


def _pool_like_original(model) -> None:
    """Make a loaded sentence-transformers pipeline pool as the original
    thatch does (mean over the tokens the attention mask keeps), whatever
    pooling its folder declares (BGE's says CLS). Its Normalize step, or
    encode's normalize_embeddings, then L2-normalises as the original does."""
    try:
        from sentence_transformers.sentence_transformer.modules import Pooling
    except ImportError:  # sentence-transformers before 6
        from sentence_transformers.models import Pooling  # type: ignore[no-redef]

    for index, module in enumerate(model):
        if type(module).__name__ == "Pooling":
            mode = getattr(module, "pooling_mode", None) or module.get_pooling_mode_str()
            if mode != ORIGINAL_POOLING:
                width = getattr(module, "embedding_dimension", None) or module.word_embedding_dimension
                model._modules[str(index)] = Pooling(width, pooling_mode=ORIGINAL_POOLING)
            return


class FakeEmbedder:
    """Deterministic bag-of-words hashing embedder for tests: texts sharing
    words get similar vectors, so ranking behaves plausibly without a model."""

    def __init__(self, dim: int = 64, name: str | None = None) -> None:
        self._dim = dim
        self._name = name or f"fake:{dim}"

    @property
    def name(self) -> str:
        return self._name

    @property
    def dim(self) -> int:
        return self._dim

    def _vector(self, text: str) -> "np.ndarray":
        from hashlib import blake2b

        import numpy as np

        vector = np.zeros(self._dim, dtype=np.float32)
        for word in re.findall(r"\w+", text.lower()):
            digest = blake2b(word.encode(), digest_size=8).digest()
            index = int.from_bytes(digest[:4], "little") % self._dim
            vector[index] += 1.0 if digest[4] & 1 else -1.0
        norm = float(np.linalg.norm(vector))
        if norm == 0:
            vector[0] = 1.0
            return vector
        return vector / norm

    def embed_query(self, text: str) -> "np.ndarray":
        return self._vector(text)

    def embed_passages(self, texts: Sequence[str]) -> "np.ndarray":
        import numpy as np

        return np.stack([self._vector(t) for t in texts]) if texts else np.zeros((0, self._dim), np.float32)

    # Its scores are taken as already on the calibrated scale (calibration.fit.of).
    on_scale = True


def model_name(env: Mapping[str, str]) -> str:
    """The configured model: THATCH_MODEL, else `model` in the settings file,
    else the default (support/settings.py)."""
    from ..support.settings import value

    return value(env, "model")


def embedder_from_env(env: Mapping[str, str]) -> Embedder:
    """The configured model (model_name): a hub id or a local folder.
    `fake:DIM` selects the test embedder (used by the test suite's subprocesses)."""
    name = model_name(env)
    if name.startswith("fake:"):
        try:
            return FakeEmbedder(int(name.split(":", 1)[1]))
        except ValueError:
            raise ModelUnavailable(f"bad fake model spec {name!r}") from None
    return SentenceTransformerEmbedder(name, env=env)
