"""One line describing the machine a benchmark ran on, for its report."""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


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


def install_thatch(work: Path, revision: str | None = None) -> Path:
    """A fresh virtualenv with thatch installed from a copy of this checkout
    (building in the checkout would leave build/ behind), or of the commit
    `revision` names (git archive); returns its bin/."""
    tag = "" if revision is None else "-" + "".join(c if c.isalnum() else "_" for c in revision)
    venv = work / f"venv{tag}"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    source = work / f"source{tag}"
    source.mkdir()
    if revision is None:
        for name in ("pyproject.toml", "README.md"):
            shutil.copy2(ROOT / name, source / name)
        shutil.copytree(ROOT / "thatch_cli", source / "thatch_cli", ignore=shutil.ignore_patterns("__pycache__"))
    else:
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", revision, "pyproject.toml", "README.md",
                                  "thatch_cli"], check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(source)], input=archive, check=True)
    python = venv / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-deps",
                    str(source)], check=True)
    purelib = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                  check=True, capture_output=True, text=True).stdout.strip())
    # This interpreter's packages (dulwich for an identity cache miss), after thatch's own.
    (purelib / "zz-bench-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return venv / "bin"
