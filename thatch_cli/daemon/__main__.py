"""`python -m thatch_cli.daemon serve`: run the daemon in this process (the
client starts it this way, detached; see runtime.spawn)."""

from __future__ import annotations

import sys


def main(argv: list[str]) -> int:
    if argv[:1] != ["serve"]:
        sys.stderr.write("usage: python -m thatch_cli.daemon serve\n")
        return 2
    from .server import main as serve

    return serve()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
