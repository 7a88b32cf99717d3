"""The per-repository opt-in, kept in the repository's own git config
(`.git/config`, never a global file): `thatch.sync.remote` names the remote
memories go through, and that remote gets the wildcard fetch refspec so a
plain `git fetch` or `git pull` brings them. Written with `git config`,
so the file stays git's; `sync off` removes exactly what `init` added.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from pathlib import Path

from ..support.errors import InvalidInput, NotFound

KEY = "thatch.sync.remote"


def refspec(remote: str) -> str:
    return f"+refs/thatch/memories*:refs/thatch/remotes/{remote}/memories*"


def _git(top: Path, env: Mapping[str, str], *args: str, check: bool = False) -> subprocess.CompletedProcess:
    result = subprocess.run(["git", *args], cwd=top, env=dict(env), capture_output=True, text=True, timeout=30,
                            check=False)
    if check and result.returncode != 0:
        raise InvalidInput(f"git {' '.join(args[:2])} failed: {result.stderr.strip()[:300]}")
    return result


def get(top: Path, env: Mapping[str, str], key: str) -> str | None:
    result = _git(top, env, "config", "--get", key)
    return result.stdout.strip() if result.returncode == 0 and result.stdout.strip() else None


def remote(top: Path, env: Mapping[str, str]) -> str | None:
    """The remote sync is on for in this repository (None: not opted in)."""
    return get(top, env, KEY)


def remote_url(top: Path, env: Mapping[str, str], name: str) -> str:
    url = get(top, env, f"remote.{name}.url")
    if url is None:
        remotes = _git(top, env, "remote").stdout.split()
        known = f" (remotes: {', '.join(remotes)})" if remotes else " (this repository has no remote)"
        raise NotFound(f"no remote named {name!r}{known}; pass --remote NAME", remote=name, remotes=remotes)
    return url


def default_remote(top: Path, env: Mapping[str, str]) -> str:
    """The remote of the current branch's upstream, else origin, else the only one."""
    branch = _git(top, env, "symbolic-ref", "--quiet", "--short", "HEAD").stdout.strip()
    upstream = get(top, env, f"branch.{branch}.remote") if branch else None
    if upstream and upstream != ".":
        return upstream
    remotes = _git(top, env, "remote").stdout.split()
    if "origin" in remotes or not remotes:
        return "origin"
    return remotes[0] if len(remotes) == 1 else "origin"


def fetch_specs(top: Path, env: Mapping[str, str], name: str) -> list[str]:
    return _git(top, env, "config", "--get-all", f"remote.{name}.fetch").stdout.split()


def enable(top: Path, env: Mapping[str, str], name: str) -> list[str]:
    """Opt in (idempotent); what was changed. Switching to another remote
    takes thatch's refspec off the others."""
    changed = _drop_specs(top, env, keep=name)
    if remote(top, env) != name:
        _git(top, env, "config", "--local", KEY, name, check=True)
        changed.append(f"{KEY} = {name}")
    spec = refspec(name)
    if spec not in fetch_specs(top, env, name):
        _git(top, env, "config", "--local", "--add", f"remote.{name}.fetch", spec, check=True)
        changed.append(f"remote.{name}.fetch += {spec}")
    return changed


def disable(top: Path, env: Mapping[str, str]) -> list[str]:
    """Opt out: remove exactly what enable added; what was changed."""
    name = remote(top, env)
    changed = _drop_specs(top, env)
    if name is None:
        return changed
    _git(top, env, "config", "--local", "--unset-all", KEY)
    changed.append(f"{KEY} removed")
    return changed


def _drop_specs(top: Path, env: Mapping[str, str], keep: str | None = None) -> list[str]:
    """Take thatch's refspec off every remote but `keep` (one left by an
    earlier remote included); what was changed."""
    import re

    changed = []
    listed = _git(top, env, "config", "--local", "--get-regexp", r"^remote\..*\.fetch$").stdout.splitlines()
    for line in listed:
        key, _, spec = line.partition(" ")
        name = key[len("remote."):-len(".fetch")]
        if name == keep or spec != refspec(name):
            continue
        _git(top, env, "config", "--local", "--fixed-value", "--unset-all", key, spec)
        if spec in fetch_specs(top, env, name):  # git before 2.30 has no --fixed-value
            _git(top, env, "config", "--local", "--unset-all", key, "^" + re.escape(spec) + "$")
        changed.append(f"{key} -= {spec}")
    return changed


def identity(top: Path, env: Mapping[str, str], anonymous: str = "thatch") -> str:
    """`Name <email>` as git would sign a commit here; without any identity
    git knows, `anonymous` (a name of this database's own, so two machines
    without one are still told apart) at this host."""
    result = _git(top, env, "var", "GIT_COMMITTER_IDENT")
    if result.returncode == 0 and ">" in result.stdout:
        return result.stdout.rsplit(">", 1)[0].strip() + ">"
    import socket

    name = get(top, env, "user.name") or env.get("USER") or anonymous
    email = get(top, env, "user.email") or f"{name}@{socket.gethostname() or 'localhost'}"
    return f"{name} <{email}>"
