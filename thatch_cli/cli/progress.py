"""A rich progress bar on stderr for long work, shown only to a person
watching a terminal."""

from __future__ import annotations

from .output import Output


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

    @classmethod
    def for_output(cls, out: Output, description: str) -> "_Scope":
        """A context manager giving a bar when stderr is a terminal and the
        output is for people, else None."""
        return _Scope(cls(description) if out.rich_stderr and not out.json_mode else None)

    def __call__(self, done: int, total: int | None) -> None:
        self._progress.update(self._task, completed=done, total=total)

    def close(self) -> None:
        self._progress.stop()


class _Scope:
    def __init__(self, bar: ProgressBar | None) -> None:
        self.bar = bar

    def __enter__(self) -> ProgressBar | None:
        return self.bar

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.close()
