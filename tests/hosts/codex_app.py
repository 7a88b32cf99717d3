"""Codex's own app server (`codex app-server`, JSON-RPC lines over stdio),
used the way Codex's /hooks screen uses it: list the hooks Codex found for
a project, then trust them by writing `hooks.state."KEY"` through
`config/batchWrite`. The trust entries land in the user's config.toml as
Codex writes them, which is the host-owned state `thatch setup` must keep."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any


class AppServer:
    def __init__(self, codex: list[str], env: dict[str, str], cwd: Path, log: Path) -> None:
        self._log = open(log, "ab")
        self.proc = subprocess.Popen([*codex, "app-server"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self._log, env=env, cwd=cwd)
        self._next = 0
        self.request("initialize", {"clientInfo": {"name": "thatch-tests", "version": "1"}})
        self._send({"method": "initialized"})

    def _send(self, message: dict) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()

    def request(self, method: str, params: dict | None = None) -> Any:
        self._next += 1
        ident = self._next
        self._send({"id": ident, "method": method, "params": params or {}})
        assert self.proc.stdout is not None
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"codex app-server closed while answering {method}")
            message = json.loads(line)
            if message.get("id") == ident and "method" not in message:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result")

    def hooks(self, cwd: Path) -> list[dict]:
        data = self.request("hooks/list", {"cwds": [str(cwd)]})["data"]
        return [hook for entry in data for hook in entry["hooks"]]

    def trust(self, hooks: list[dict]) -> None:
        """What the /hooks screen does when the user trusts these hooks."""
        edits = [{"keyPath": f"hooks.state.{json.dumps(hook['key'])}",
                  "value": {"enabled": True, "trusted_hash": hook["currentHash"]}, "mergeStrategy": "upsert"}
                 for hook in hooks]
        self.request("config/batchWrite", {"edits": edits, "reloadUserConfig": True})

    def close(self) -> None:
        try:
            if self.proc.stdin:
                self.proc.stdin.close()
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        finally:
            if self.proc.stdout:
                self.proc.stdout.close()
            self._log.close()

    def __enter__(self) -> "AppServer":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
