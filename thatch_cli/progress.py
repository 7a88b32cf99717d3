"""A rich progress bar on stderr for long work; callers only create one on a TTY."""

from __future__ import annotations


class ProgressBar:
    def __init__(self, description: str) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

        self._progress = Progress(
            "[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
            console=Console(stderr=True), transient=True,
        )
        self._task = self._progress.add_task(description, total=None)
        self._progress.start()

    def __call__(self, done: int, total: int) -> None:
        self._progress.update(self._task, completed=done, total=total)

    def close(self) -> None:
        self._progress.stop()
