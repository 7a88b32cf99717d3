"""`thatch init` (the shell hook) and `thatch completion install | show`
(integrations/shell.py, integrations/completion.py)."""

from __future__ import annotations

import sys
from typing import Annotated, Any, Optional

from ..integrations.shell import SETUP, SHELLS
from ..ops.context import Context
from .declare import Argument, Json, Option, command, group
from .output import Output

COMPLETION = group("completion", "Shell completion for bash, zsh and fish.")


@command("init", examples=['eval "$(thatch init bash)"', "thatch init fish | source",
                          'eval "$(thatch init --deactivate zsh)"'],
         json="shell, executable, deactivate, rc_file, rc_line, deactivate_line, script")
def init(
    ctx: Context, out: Output, *,
    shell: Annotated[Optional[str], Argument(show_default=False, choices=SHELLS,
                                             help="Shell to print the hook for (default: the one running thatch).")] = None,
    deactivate: Annotated[bool, Option("--deactivate",
                                       help="Print what removes the hook from the running shell instead.")] = False,
    as_json: Json = False,
) -> None:
    """Print the shell hook: a one-line memory summary when you enter a repository or switch branch.

    Add one line to your shell's startup file:

      bash  (~/.bashrc)                   eval "$(PATH="$HOME/.local/bin:$PATH" thatch init bash 2>/dev/null)"
      zsh   (~/.zshrc)                    eval "$(PATH="$HOME/.local/bin:$PATH" thatch init zsh 2>/dev/null)"
      fish  (~/.config/fish/config.fish)  thatch init fish | source

    The bash and zsh lines also look in ~/.local/bin, which a login shell may not have on PATH yet when it reads them.

    When neither the repository around the current directory nor its HEAD changed since the last prompt, the hook starts no process. THATCH_QUIET=1 silences it.

    Entering a repository whose store has memories with vectors also starts the background model process (about 500 MB of memory; it exits after daemon.idle seconds without a request, 600 by default), so the first recall there answers at once. To turn that off: thatch config set daemon.warm false

    To remove it from a running shell: eval "$(thatch init --deactivate bash)" (zsh likewise); fish: thatch init --deactivate fish | source
    """
    from ..integrations.shell import check_shell, detect_shell, render, resolve_executable

    name = check_shell(shell) if shell else detect_shell(ctx.env)
    executable = resolve_executable(sys.argv[0] if sys.argv else "", ctx.env)
    script = render(name, executable, deactivate=deactivate)
    if out.json_mode:
        rc_file, line, off = SETUP[name]
        out.json({"shell": name, "executable": executable, "deactivate": deactivate,
                  "rc_file": rc_file, "rc_line": line, "deactivate_line": off, "script": script})
    else:
        out.stdout.write(script)


@command("install", group=COMPLETION, examples=["thatch completion install", "thatch completion install zsh"],
         json="shell, path, status (installed, updated or unchanged), notes")
def completion_install(
    ctx: Context, out: Output, *,
    shell: Annotated[Optional[str], Argument(metavar="SHELL", show_default=False, choices=SHELLS,
                                             help="bash, zsh or fish (default: the shell you are running).")] = None,
    as_json: Json = False,
) -> None:
    """Install the completion script where your shell looks for it (safe to re-run)."""
    from ..integrations import completion
    from ..integrations.shell import check_shell, detect_shell

    outcome = completion.install(check_shell(shell) if shell else detect_shell(ctx.env), ctx.env, _definitions())
    if out.json_mode:
        out.json(outcome.to_json())
        return
    if outcome.status == "unchanged":
        out.line(f"{outcome.shell} completion already up to date: {outcome.path}")
    else:
        out.line(f"{outcome.status.capitalize()} {outcome.shell} completion: {outcome.path}")
    for note in outcome.notes:
        out.line(note)


@command("show", group=COMPLETION, examples=["thatch completion show", "thatch completion show fish > thatch.fish"],
         json="shell, script")
def completion_show(
    ctx: Context, out: Output, *,
    shell: Annotated[Optional[str], Argument(metavar="SHELL", show_default=False, choices=SHELLS,
                                             help="bash, zsh or fish (default: the shell you are running).")] = None,
    as_json: Json = False,
) -> None:
    """Print the completion script for a shell."""
    from ..integrations import completion
    from ..integrations.shell import check_shell, detect_shell

    name = check_shell(shell) if shell else detect_shell(ctx.env)
    script = completion.script(name, _definitions())
    if out.json_mode:
        out.json({"shell": name, "script": script})
        return
    out.stdout.write(script)


def _definitions() -> dict[str, Any]:
    """The generated command-line definitions the completion scripts are rendered from."""
    from ..support.errors import ThatchError
    from .fastpath import load_spec

    try:
        return load_spec()
    except ImportError as exc:
        raise ThatchError(f"CLI definitions missing from the installation: {exc}") from exc
