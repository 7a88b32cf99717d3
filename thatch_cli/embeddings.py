"""Embedders: text in, L2-normalised float32 vectors out.

Nothing here imports numpy or sentence-transformers at module level; the
model loads on the first vector anyone asks for.
"""

from __future__ import annotations

import hashlib
import os
import re
import socket
from pathlib import Path
from typing import TYPE_CHECKING, Mapping, Protocol, Sequence
from urllib.parse import urlparse

from .errors import ModelUnavailable

if TYPE_CHECKING:
    import numpy as np

BGE_QUERY_PREFIX = "Represent this sentence for searching relevant passages: "
_GENERIC_DIRS = {"model", "models", "snapshots", "onnx", "main"}


class Embedder(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed_query(self, text: str) -> "np.ndarray": ...

    def embed_passages(self, texts: Sequence[str]) -> "np.ndarray": ...


def model_space(name: str | None) -> str | None:
    """The embedding space a model name denotes. Mirrors of one model share a
    space (Xenova/bge-small-en-v1.5 == BAAI/bge-small-en-v1.5); a local folder
    is known by its most specific directory name."""
    if not name:
        return None
    parts = [p for p in re.split(r"[\\/]+", name.strip()) if p]
    if not parts:
        return None
    meaningful = [p for p in parts if p.lower() not in _GENERIC_DIRS] or parts
    return meaningful[-1].lower().replace("_", "-")


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
        # Record a local folder by absolute path so the model column means the
        # same thing whatever directory thatch was run from.
        self._source = str(path.resolve()) if path.is_dir() else model
        self._env = env or {}
        self._model = None
        self._prefix = BGE_QUERY_PREFIX if wants_query_prefix(self._source) else ""

    @property
    def name(self) -> str:
        return self._source

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
        return self._model

    def _in_hub_cache(self) -> bool:
        env = self._env
        home = Path(env.get("HOME") or Path.home())
        hub = env.get("HF_HUB_CACHE") or os.path.join(
            env.get("HF_HOME") or os.path.join(env.get("XDG_CACHE_HOME") or home / ".cache", "huggingface"), "hub"
        )
        return (Path(hub) / ("models--" + self._source.replace("/", "--"))).is_dir()

    def _check_hub_reachable(self) -> None:
        """Fail in milliseconds, before the 5 s import of sentence-transformers
        and the hub client's ~30 s of retries, when a download cannot work."""
        if self._env.get("HF_HUB_OFFLINE") == "1" or self._env.get("THATCH_OFFLINE") == "1":
            raise ModelUnavailable(f"embedding model {self._source!r} is not cached and offline mode is on")
        host = urlparse(self._env.get("HF_ENDPOINT") or "https://huggingface.co").hostname or "huggingface.co"
        try:
            socket.getaddrinfo(host, 443)
        except OSError as exc:
            raise ModelUnavailable(
                f"embedding model {self._source!r} is not cached and {host} is unreachable"
                f" ({exc.strerror or exc}); set a local model folder with 'thatch config set model PATH'"
            ) from exc

    def _from_hub(self, factory):
        try:
            return factory(self._source, device="cpu", local_files_only=True)
        except Exception:
            if self._env.get("HF_HUB_OFFLINE") == "1" or self._env.get("THATCH_OFFLINE") == "1":
                raise
        self._check_hub_reachable()
        return factory(self._source, device="cpu")

    def embed_query(self, text: str) -> "np.ndarray":
        return self._encode([self._prefix + text])[0]

    def embed_passages(self, texts: Sequence[str]) -> "np.ndarray":
        return self._encode(list(texts))

    def _encode(self, texts: list[str]) -> "np.ndarray":
        import numpy as np

        model = self._load()
        vectors = model.encode(
            texts, batch_size=32, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
        )
        return np.asarray(vectors, dtype=np.float32)


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
        import numpy as np

        vector = np.zeros(self._dim, dtype=np.float32)
        for word in re.findall(r"\w+", text.lower()):
            digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
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


def model_name(env: Mapping[str, str]) -> str:
    """The configured model: THATCH_MODEL, else `model` in the settings file,
    else the default (settings.py)."""
    from .settings import value

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
