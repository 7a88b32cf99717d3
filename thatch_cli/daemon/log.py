"""The daemon's log lines (its stderr is daemon.log)."""

from __future__ import annotations

import os
import sys
import time


def log(message: str) -> None:
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
    sys.stderr.write(f"{stamp} [{os.getpid()}] {message}\n")
    sys.stderr.flush()
