"""thatch_cli/cli/spec.json: the CLI definitions the fast path reads."""

from __future__ import annotations

import json
from pathlib import Path

from .. import __version__
from ..files import SPEC_PATH
from . import cli_model


def render() -> str:
    data = {"version": __version__, "commands": cli_model.commands(), "groups": cli_model.groups()}
    return json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def write() -> list[Path]:
    SPEC_PATH.write_text(render(), encoding="utf-8")
    return [SPEC_PATH]
