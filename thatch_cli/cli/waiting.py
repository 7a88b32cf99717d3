"""A status line on stderr while a command waits for the model or the
daemon, so a cold `thatch recall` does not sit silent for seconds.

Nothing shows for the first half second (a warm command never flickers);
then a spinner, what is being waited for and the seconds so far, redrawn
ten times a second on one line and erased when the wait ends. Only for a
person at a terminal: never with --json, on a pipe or with TERM=dumb
(cli/run.py decides). Standard library only: rich costs ~40 ms to import,
more than most waits worth showing would be.
"""

from __future__ import annotations

import time

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: light commands never import typing
if TYPE_CHECKING:
    from typing import IO

DELAY = 0.5
INTERVAL = 0.1
FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
_CLEAR = "\r\x1b[K"


def wanted(stream: IO[str], env, json_mode: bool) -> bool:
    """Whether waits may show on `stream`: a terminal, not dumb, not --json."""
    if json_mode or env.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class Spinner:
    """A context manager: the status line for one wait on `stream`."""

    def __init__(self, stream: IO[str], message: str, delay: float = DELAY, interval: float = INTERVAL) -> None:
        import threading  # only a command that waits on a terminal needs it

        self.stream, self.message, self.delay, self.interval = stream, message, delay, interval
        self._done = threading.Event()
        self._lock = threading.Lock()
        self._drawn = False
        self._thread = threading.Thread(target=self._run, name="thatch-spinner", daemon=True)

    def __enter__(self) -> Spinner:
        self._started = time.monotonic()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join()
        self.clear()

    def _run(self) -> None:
        if self._done.wait(self.delay):
            return
        frame = 0
        while not self._done.is_set():
            seconds = time.monotonic() - self._started
            self._write(f"\r{FRAMES[frame % len(FRAMES)]} thatch: {self.message}… {seconds:.0f}s\x1b[K")
            frame += 1
            self._done.wait(self.interval)

    def _write(self, text: str) -> None:
        with self._lock:
            try:
                self.stream.write(text)
                self.stream.flush()
                self._drawn = True
            except (OSError, ValueError):
                self._done.set()

    def clear(self) -> None:
        """Erase the line (at the end of the wait)."""
        self.aside("")

    def aside(self, text: str) -> None:
        """Write `text` (a notice) on a line of its own; the status line
        comes back on the next frame."""
        with self._lock:
            try:
                if self._drawn:
                    self.stream.write(_CLEAR)
                    self._drawn = False
                if text:
                    self.stream.write(text)
                self.stream.flush()
            except (OSError, ValueError):
                pass
