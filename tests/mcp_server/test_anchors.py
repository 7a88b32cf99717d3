"""Anchors over MCP, through a real client: `files` in memory_remember and
memory_recall, and a drifted memory marked in memory_recall and memory_show."""

from __future__ import annotations

from pathlib import Path

import anyio

from helpers import call_json, git, mcp_env, mcp_session


def test_remember_and_recall_with_files_and_the_drift_mark(git_repo, isolated_env):
    repo: Path = git_repo("widget", remote="git@github.com:acme/widget.git")
    (repo / "config.py").write_text("".join(f"key_{i} = {i}\n" for i in range(1, 41)))
    git(repo, "add", "config.py")
    git(repo, "commit", "-qm", "config")
    first = git(repo, "rev-parse", "--short=7", "HEAD")
    env = mcp_env()

    async def scenario() -> None:
        async with mcp_session(env, cwd=repo) as session:
            error, saved = call_json(await session.call_tool("memory_remember", {
                "label": "Config keys", "content": "unknown keys are ignored", "files": ["config.py:10-19"]}))
            assert not error and saved["memory"]["anchors"] == ["config.py:10-19"]
            (repo / "config.py").write_text("".join(f"key_{i} = {i * (i < 15)}\n" for i in range(1, 41)))
            git(repo, "commit", "-qam", "edit")
            error, found = call_json(await session.call_tool("memory_recall", {"query": "", "files": ["config.py"]}))
            assert not error, found
            (result,) = found["results"]
            assert result["drift"] == [f"the code it describes changed since {first}: 5 of 10 lines"
                                       " (config.py:10-19)"]
            text = (await session.call_tool("memory_recall", {"query": "config keys"})).content[0].text
            assert "doubt: the code it describes changed" in text and "describes: config.py:10-19" in text
            error, shown = call_json(await session.call_tool("memory_show", {"label": "Config keys"}))
            assert shown["memory"]["drift"] == result["drift"]
            error, refused = call_json(await session.call_tool("memory_remember", {
                "label": "Elsewhere", "content": "x", "files": ["/etc/hostname"]}))
            assert error and "outside any git checkout" in str(refused)

    anyio.run(scenario)
