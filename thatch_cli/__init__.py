"""thatch: a local, git-aware memory store for coding agents."""

__version__ = "0.1.0"
