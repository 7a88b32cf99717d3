"""Running a real host program (Claude Code, Codex, the MCP inspector) from
npm against the stand-in model API, in a home of its own.

The programs come from $THATCH_TEST_HOSTS (default
~/.cache/thatch-test-hosts), where .ci/run installs packages.txt; a test
whose program is missing is skipped, saying how to install it. Each run
gets a private HOME, CODEX_HOME, thatch database and runtime directory,
the hosts' telemetry and update checks off, and every proxy variable
pointing at a closed port on 127.0.0.1 with only 127.0.0.1 exempt, so
nothing but the stand-in can be reached; tests check the stand-in saw the
traffic.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
# The thatch under test; THATCH_TEST_THATCH runs these tests against another
# build (an older checkout's, to see what a host did before a change).
THATCH = os.environ.get("THATCH_TEST_THATCH") or str(Path(sys.executable).with_name("thatch"))
DEAD_PROXY = "http://127.0.0.1:9"


# Read once, before the suite's fixtures point HOME at a temporary folder.
HOSTS_DIR = Path(os.environ.get("THATCH_TEST_HOSTS")
                 or Path(pwd.getpwuid(os.getuid()).pw_dir) / ".cache" / "thatch-test-hosts")


def hosts_dir() -> Path:
    return HOSTS_DIR


def packages() -> dict[str, str]:
    """alias -> npm spec, from packages.txt."""
    found = {}
    for line in (HERE / "packages.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            alias, spec = line.split()
            found[alias] = spec
    return found


INSTALL_HINT = ("install the host programs: " + " ".join(
    ["nice npm install --prefix \"${THATCH_TEST_HOSTS:-$HOME/.cache/thatch-test-hosts}\"",
     *[f"{alias}@npm:{spec}" for alias, spec in packages().items()]]) + " (.ci/run does)")


def program(alias: str, bin_name: str) -> list[str]:
    """The argv that runs `bin_name` of the installed package `alias`; skips when missing."""
    if shutil.which("node") is None:
        pytest.skip("node is not installed (the real-host tests need node and npm)")
    package = hosts_dir() / "node_modules" / alias
    try:
        manifest = json.loads((package / "package.json").read_text())
    except (OSError, ValueError):
        pytest.skip(f"{alias} is not installed in {hosts_dir()}: {INSTALL_HINT}")
    bins = manifest.get("bin")
    entry = bins if isinstance(bins, str) else (bins or {}).get(bin_name)
    if not entry or not (package / entry).exists():
        pytest.skip(f"{alias} has no {bin_name} program in {package}")
    path = package / entry
    with open(path, "rb") as fh:
        native = fh.read(4) == b"\x7fELF"
    return [str(path)] if native else ["node", str(path)]


def on_path(bin_dir: Path, name: str, argv: list[str]) -> None:
    """A `name` command in `bin_dir` that runs `argv` (what `npm install -g` would put on PATH)."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    script = bin_dir / name
    script.write_text("#!/bin/sh\nexec " + " ".join(f"'{a}'" for a in argv) + ' "$@"\n')
    script.chmod(0o755)


class Sandbox:
    """A home, a git project (acme/widget) and the environment a host runs in."""

    def __init__(self, root: Path, api_url: str) -> None:
        self.root = root
        self.home = root / "home"
        self.project = root / "widget"
        self.bin = root / "bin"
        self.run_dir = root / "run"
        for directory in (self.home, self.project, self.bin):
            directory.mkdir(parents=True)
        self.run_dir.mkdir(mode=0o700)
        self.env = {
            "HOME": str(self.home), "USER": os.environ.get("USER", "tester"), "LANG": "C.UTF-8", "TERM": "dumb",
            "PATH": f"{self.bin}:{Path(THATCH).parent}:{os.environ['PATH']}",
            "XDG_CONFIG_HOME": str(self.home / ".config"), "XDG_CACHE_HOME": str(self.home / ".cache"),
            "XDG_STATE_HOME": str(self.home / ".local" / "state"), "XDG_RUNTIME_DIR": str(self.run_dir),
            "THATCH_DB": str(root / "thatch.db"), "THATCH_MODEL": "fake:64", "THATCH_DAEMON": "0",
            "CODEX_HOME": str(self.home / ".codex"),
            "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "T",
            "GIT_COMMITTER_EMAIL": "t@example.com",
            # Nothing but 127.0.0.1: every proxy is a closed port there.
            **{name: DEAD_PROXY for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy",
                                             "all_proxy")},
            "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost",
            # Claude Code: the stand-in, no telemetry, updates or error reports.
            "ANTHROPIC_BASE_URL": api_url, "ANTHROPIC_API_KEY": "sk-ant-standin",
            "DISABLE_AUTOUPDATER": "1", "DISABLE_TELEMETRY": "1", "DISABLE_ERROR_REPORTING": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_NON_ESSENTIAL_MODEL_CALLS": "1",
            # Codex: the stand-in's provider reads its key from here.
            "STANDIN_API_KEY": "standin",
        }
        self.api_url = api_url
        subprocess.run(["git", "init", "-q", "-b", "main"], cwd=self.project, env=self.env, check=True)
        subprocess.run(["git", "remote", "add", "origin", "git@github.com:acme/widget.git"], cwd=self.project,
                       env=self.env, check=True)
        (self.project / "README").write_text("widget\n")
        subprocess.run(["git", "add", "README"], cwd=self.project, env=self.env, check=True)
        subprocess.run(["git", "commit", "-qm", "init"], cwd=self.project, env=self.env, check=True)

    def thatch(self, *args: str, input: str | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
        done = subprocess.run([THATCH, *args], cwd=self.project, env={**self.env, **(env or {})}, input=input,
                              capture_output=True, text=True, timeout=120)
        return done

    def remember(self, label: str, content: str, *extra: str) -> None:
        done = self.thatch("remember", label, content, *extra)
        assert done.returncode == 0, done

    def run(self, argv: list[str], *, timeout: float = 180, env: dict | None = None, cwd: Path | None = None,
            input: str | None = None) -> subprocess.CompletedProcess:
        return subprocess.run(argv, cwd=cwd or self.project, env={**self.env, **(env or {})}, capture_output=True,
                              text=True, timeout=timeout, input=input if input is not None else "")

    def codex_config(self, model: dict, extra: str = "") -> Path:
        """CODEX_HOME/config.toml: the stand-in as the model provider, a model catalog entry for it (so MCP tools
        are found through tool search, as with OpenAI's own models), the project trusted, updates off."""
        codex_home = self.home / ".codex"
        codex_home.mkdir(parents=True, exist_ok=True)
        catalog = codex_home / "standin-models.json"
        catalog.write_text(json.dumps({"models": [model]}))
        config = codex_home / "config.toml"
        config.write_text(
            "# the user's own settings\n"
            f'model = "gpt-standin"\nmodel_provider = "standin"\nmodel_catalog_json = "{catalog}"\n'
            "check_for_update_on_startup = false\n\n"
            "[model_providers.standin]\n"
            f'name = "standin"\nbase_url = "{self.api_url}/v1"\nwire_api = "responses"\nenv_key = "STANDIN_API_KEY"\n\n'
            "[analytics]\nenabled = false\n\n"
            f'[projects."{self.project}"]\ntrust_level = "trusted"\n' + extra)
        return config


def codex_model(codex: list[str], env: dict[str, str]) -> dict:
    """A model catalog entry for the stand-in: one of the models Codex ships
    (`codex debug models`) that uses plain tools and tool search (MCP tools
    are found through it, as with OpenAI's own models), renamed."""
    done = subprocess.run([*codex, "debug", "models", "--bundled"], capture_output=True, text=True, env=env,
                          timeout=60)
    assert done.returncode == 0 and done.stdout.startswith("{"), done
    models = json.loads(done.stdout)["models"]
    model = next(m for m in models if m.get("supports_search_tool") and m.get("tool_mode") is None)
    return {**model, "slug": "gpt-standin", "display_name": "stand-in", "upgrade": None}
