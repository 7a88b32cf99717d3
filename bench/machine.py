"""One line describing the machine a benchmark ran on, for its report."""

from __future__ import annotations

import os
import platform
from pathlib import Path


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def describe(*, torch: bool = False) -> str:
    import numpy

    from thatch_cli import __version__

    memory = round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30)
    text = (f"{os.cpu_count()} cores (`nproc`), {cpu_name()}, {memory} GB RAM; Linux {platform.release()};"
            f" Python {platform.python_version()}; thatch {__version__}; numpy {numpy.__version__}")
    if torch:
        import torch as module

        text += f"; torch {module.__version__}"
    return text
