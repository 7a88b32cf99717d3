"""A rich progress bar on stderr for long work, shown only to a person
watching a terminal. While it is up it is also the command's wait
indicator (Context.waiting): a wait for the model shows in the bar's
description instead of a second status line fighting it for the row."""

from __future__ import annotations

from ..ops.context import Context
from .output import Output

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: light commands never import typing
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

# Work is reported in steps of this many memories, so the bar moves every
# second or so even on a slow machine (a batch of 256 took several seconds).
STEP = 32
# Without a terminal, a long run says how far it got this often (seconds).
TICK_S = 5.0


class ProgressBar:
    def __init__(self, description: str) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

        self.description = description
        self._progress = Progress(
            "[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
            console=Console(stderr=True), transient=True,
        )
        self._task = self._progress.add_task(description, total=None)
        self._progress.start()

    @classmethod
    def for_output(cls, out: Output, description: str, ctx: Context | None = None,
                   unit: str = "lines") -> "_Scope":
        """A context manager giving a bar when stderr is a terminal and the
        output is for people, else a Ticker (a line on stderr every few
        seconds of a long run). With `ctx`, waits show in the bar."""
        if out.rich_stderr and not out.json_mode:
            return _Scope(cls(description), ctx)
        return _Scope(Ticker(out, description, unit), None)

    def __call__(self, done: int, total: int | None) -> None:
        self._progress.update(self._task, completed=done, total=total)

    def waiting(self, message: str) -> "_Described":
        return _Described(self, message)

    def aside(self, text: str) -> None:
        self._progress.console.print(text, end="", markup=False, highlight=False)

    def close(self) -> None:
        self._progress.stop()


class Ticker:
    """Progress without a terminal: after TICK_S seconds, and every TICK_S
    seconds after that, one line on stderr saying how far the work got."""

    def __init__(self, out: Output, description: str, unit: str) -> None:
        import time

        self.out, self.description, self.unit = out, description, unit
        self.clock = time.monotonic
        self.next = self.clock() + TICK_S

    def __call__(self, done: int, total: int | None) -> None:
        if self.clock() < self.next:
            return
        self.next = self.clock() + TICK_S
        share = f" of {total:,} {self.unit} ({100 * done // total}%)" if total else f" {self.unit}"
        self.out.notice(f"{self.description.lower()}: {done:,}{share} so far")

    def close(self) -> None:
        pass


class _Described:
    """The bar's description says what is awaited for the length of a wait."""

    def __init__(self, bar: ProgressBar, message: str) -> None:
        self.bar, self.message = bar, message

    def __enter__(self) -> "_Described":
        self.bar._progress.update(self.bar._task, description=f"{self.bar.description} ({self.message}…)")
        return self

    def __exit__(self, *exc: object) -> None:
        self.bar._progress.update(self.bar._task, description=self.bar.description)

    def aside(self, text: str) -> None:
        self.bar.aside(text)


class _Scope:
    """`ctx` only with a ProgressBar: a Ticker has no place to show waits."""

    def __init__(self, bar: "ProgressBar | Ticker", ctx: Context | None) -> None:
        self.bar, self.ctx = bar, ctx
        self.saved: Callable[[str], Any] | None = None

    def __enter__(self) -> "ProgressBar | Ticker":
        if self.ctx is not None:
            assert isinstance(self.bar, ProgressBar)
            self.saved, self.ctx.indicator = self.ctx.indicator, self.bar.waiting
        return self.bar

    def __exit__(self, *exc: object) -> None:
        if self.ctx is not None:
            self.ctx.indicator = self.saved
        self.bar.close()
