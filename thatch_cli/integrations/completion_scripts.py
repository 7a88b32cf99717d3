"""Shell completion scripts for bash, zsh and fish, from the CLI definitions.

Commands, options and fixed choices are written into each script as static
lists, so completing them starts no process. Labels, store names and branch
names come from the database through `thatch _complete KIND [--store S]`
(thatch_cli/hot/complete.py), one value per line.

`thatch completion install|show` renders them at run time from the
exported CLI spec (thatch_cli/cli/spec.py); `python -m thatch_cli.gen
completions` writes the same text to completions/ for packagers.
"""

from __future__ import annotations

import re

from ..memory.fields import COMPLETED
from ..support.files import template
from .completion_tree import HELP_OPTION, VERSION_OPTION, Argument, Node, Option, summary, tree
from .shell import SHELLS

DYNAMIC = tuple(COMPLETED)  # kinds `thatch _complete` answers: labels, stores, branches (memory/fields.py)
HEADER = "Generated from the CLI definitions by `python -m thatch_cli.gen completions`; do not edit."


# -- bash ------------------------------------------------------------------------------


def _sh(text: str) -> str:
    """Single-quoted for sh/bash/zsh."""
    return "'" + text.replace("'", "'\\''") + "'"


def _shword(text: str) -> str:
    """Bare when the shell reads it as one word as it is, else single-quoted."""
    return text if re.fullmatch(r"[\w:./+-]+", text) else _sh(text)


def _case_arms(arms: list[tuple[list[str], str]], default: str, indent: str = "        ") -> str:
    lines = [f"{indent}{'|'.join(_sh(p) for p in patterns)}) {body} ;;" for patterns, body in arms]
    lines.append(f"{indent}*) {default} ;;")
    return "\n".join(lines)


def _bash_kind(item: Option | Argument) -> str:
    """The kind as _thatch_r holds it; fixed values travel with it ("choices:a b c")."""
    return f"choices:{' '.join(item.choices)}" if item.kind == "choices" else item.kind


def bash(root: Node) -> str:
    nodes = list(root.walk())
    subcommands = [([n.path], f"_thatch_r={_sh(' '.join(n.children))}") for n in nodes if n.is_group]
    options = [([n.path], "_thatch_r=" + _sh(" ".join(name for o in n.options for name in o.names + o.negations)))
               for n in nodes]
    values: dict[str, list[str]] = {}
    for n in nodes:
        for o in n.options:
            if o.kind != "flag":
                values.setdefault(_bash_kind(o), []).extend(f"{n.path}|{name}" for name in o.names)
    arguments: dict[str, list[str]] = {}
    for n in nodes:
        for index, a in enumerate(n.arguments):
            if a.kind != "none":  # the default arm
                arguments.setdefault(_bash_kind(a), []).append(f"{n.path}|{index}")
    parts = [
        "# bash completion for thatch                               -*- shell-script -*-",
        f"# {HEADER}",
        "# Install: thatch completion install bash",
        "",
        "# Subcommands of command path $1 (empty for thatch itself), into _thatch_r.",
        "_thatch_subcommands() {",
        '    case $1 in',
        _case_arms(subcommands, "_thatch_r=''"),
        "    esac",
        "}",
        "",
        "# Options of command path $1.",
        "_thatch_options() {",
        '    case $1 in',
        _case_arms(options, "_thatch_r='--help -h'"),
        "    esac",
        "}",
        "",
        "# What option $2 of command path $1 takes: flag (no value), or the kind of value",
        "# (choices:VALUES for a fixed list).",
        "_thatch_option_value() {",
        '    case "$1|$2" in',
        _case_arms([(patterns, f"_thatch_r={_shword(kind)}") for kind, patterns in sorted(values.items())],
                   "_thatch_r=flag"),
        "    esac",
        "}",
        "",
        "# What argument $2 (counting from 0) of command path $1 takes.",
        "_thatch_argument() {",
        '    case "$1|$2" in',
        _case_arms([(patterns, f"_thatch_r={_shword(kind)}") for kind, patterns in sorted(arguments.items())],
                   "_thatch_r=none"),
        "    esac",
        "}",
    ]
    return "\n".join(parts) + "\n" + template("completions/bash-main.bash")


# -- zsh -------------------------------------------------------------------------------


def _zfunc(path: str) -> str:
    return "_thatch" + "".join("_" + re.sub(r"[^A-Za-z0-9]", "_", w) for w in path.split())


def _zdesc(text: str) -> str:
    """Text for an _arguments [description]: brackets and colons escaped."""
    return re.sub(r"([\\\[\]:])", r"\\\1", summary(text))


def _zaction(item: Option | Argument) -> str:
    if item.kind == "choices":
        return "(" + " ".join(item.choices) + ")"
    if item.kind in DYNAMIC:
        return f"_thatch_{item.kind}"
    return "_files" if item.kind == "files" else " "


def _zoption_specs(option: Option) -> list[str]:
    spellings = option.names + option.negations
    exclusive = "" if option.multiple else "(" + " ".join(spellings) + ")"
    if option is HELP_OPTION or option is VERSION_OPTION:
        exclusive = "(- *)"
    prefix = "*" if option.multiple else ""
    specs = []
    for name in spellings:
        if option.kind == "flag":
            suffix = ""
        else:
            suffix = "=" if name.startswith("--") else "+"
        value = "" if option.kind == "flag" else f":{option.metavar.lower()}:{_zaction(option)}"
        desc = _zdesc(option.help) if name not in option.negations else _zdesc(f"Negate {option.names[0]}.")
        specs.append(f"{exclusive}{prefix}{name}{suffix}[{desc}]{value}")
    return specs


def _zarguments(lines: list[str], specs: list[str], flags: str) -> None:
    lines.append(f"    _arguments {flags} \\")
    for spec in specs[:-1]:
        lines.append(f"        {_sh(spec)} \\")
    lines.append(f"        {_sh(specs[-1])}")


def _zsh_node(node: Node) -> list[str]:
    name = _zfunc(node.path)
    lines = [f"{name}() {{"]
    specs = [spec for o in node.options for spec in _zoption_specs(o)]
    if node.is_group:
        lines.append("    local curcontext=$curcontext state state_descr line ret=1")
        lines.append("    typeset -A opt_args")
        _zarguments(lines, specs + ["1: :->command", "*:: :->argument"], "-C")
        lines[-1] += " && ret=0"
        label = f"thatch {node.path} command".replace("  ", " ")
        context = "thatch-" + "-".join(node.path.split() + ["$words[1]"])
        lines += [
            "    case $state in",
            "        (command)",
            "            local -a commands",
            "            commands=(",
            *[f"                {_sh(child + ':' + summary(sub.help))}" for child, sub in node.children.items()],
            "            )",
            f"            _describe -t commands {_sh(label)} commands && ret=0",
            "            ;;",
            "        (argument)",
            f"            curcontext=${{curcontext%:*:*}}:{context}:",
            "            case $words[1] in",
            *[f"                ({child}) {_zfunc(sub.path)} && ret=0 ;;" for child, sub in node.children.items()],
            "            esac",
            "            ;;",
            "    esac",
            "    return ret",
        ]
    else:
        for index, arg in enumerate(node.arguments, start=1):
            optional = "" if arg.required else ":"
            specs.append(f"{index}:{optional}{arg.name}:{_zaction(arg)}")
        _zarguments(lines, specs, "-S")
    lines.append("}")
    return lines





def zsh(root: Node) -> str:
    lines = ["#compdef thatch", f"# zsh completion for thatch. {HEADER}",
             "# Install: thatch completion install zsh"]
    for node in root.walk():
        lines.append("")
        lines += _zsh_node(node)
    helpers = "".join(f"_thatch_{kind}() {{ _thatch_complete {kind} {field.name} {kind} }}\n"
                      for kind, field in COMPLETED.items())
    return ("\n".join(lines) + "\n" + template("completions/zsh-helpers.zsh") + helpers
            + template("completions/zsh-footer.zsh"))


# -- fish ------------------------------------------------------------------------------


def _fq(text: str) -> str:
    """Single-quoted for fish (which escapes only \\ and ' there)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _fdesc(text: str) -> str:
    return summary(text).rstrip(".")




def _fish_values(item: Option | Argument) -> str:
    if item.kind in DYNAMIC:
        return f"-f -a {_fq(f'(__thatch_values {item.kind})')}"
    if item.kind == "choices":
        return "-f -a " + _fq(" ".join(item.choices))
    if item.kind == "files":
        return "-F"
    return "-f"


def fish(root: Node) -> str:
    nodes = list(root.walk())
    lines = [f"# fish completion for thatch. {HEADER}", "# Install: thatch completion install fish", ""]
    lines.append("# Subcommands of command path $argv[1], one per line.")
    lines.append("function __thatch_subcommands")
    lines.append("    switch \"$argv[1]\"")
    for n in nodes:
        if n.is_group:
            lines.append(f"        case {_fq(n.path)}")
            lines.append(f"            printf '%s\\n' {' '.join(n.children)}")
    lines += ["    end", "end", "", "# Whether option $argv[2] of command path $argv[1] takes a value.",
              "function __thatch_takes_value", "    switch \"$argv[1]|$argv[2]\""]
    valued = [f"{n.path}|{name}" for n in nodes for o in n.options if o.kind != "flag" for name in o.names]
    if valued:
        lines.append("        case " + " ".join(_fq(v) for v in valued))
        lines.append("            return 0")
    lines += ["    end", "    return 1", "end", template("completions/fish-helpers.fish").rstrip("\n"), "", "complete -c thatch -f"]
    for n in nodes:
        at = _fq(f"__thatch_at {_fq(n.path)}")
        for o in n.options:
            spellings = [(name, False) for name in o.names] + [(name, True) for name in o.negations]
            for name, negation in spellings:
                flag = f"-l {name[2:]}" if name.startswith("--") else (
                    f"-s {name[1:]}" if len(name) == 2 else f"-o {name[1:]}")
                desc = f"Negate {o.names[0]}" if negation else _fdesc(o.help)
                value = "" if o.kind == "flag" or negation else f" -r {_fish_values(o)}"
                lines.append(f"complete -c thatch -n {at} {flag}{value} -d {_fq(desc)}")
        if n.is_group:
            first = _fq(f"__thatch_arg {_fq(n.path)} 0")
            for child, sub in n.children.items():
                lines.append(f"complete -c thatch -n {first} -a {child} -d {_fq(_fdesc(sub.help))}")
        for index, arg in enumerate(n.arguments):
            if arg.kind == "none":
                continue
            cond = _fq(f"__thatch_arg {_fq(n.path)} {index}")
            # Values from the database describe themselves; a per-value description would repeat.
            desc = "" if arg.kind in DYNAMIC else f" -d {_fq(_fdesc(arg.help))}"
            lines.append(f"complete -c thatch -n {cond} {_fish_values(arg)}{desc}")
    return "\n".join(lines) + "\n"


# -- all shells -------------------------------------------------------------------------


RENDERERS = {"bash": bash, "zsh": zsh, "fish": fish}


def render_all(definitions: dict) -> dict[str, str]:
    """Every shell's script for the CLI `definitions` (cli/spec.py's data)."""
    root = tree(definitions)
    return {shell: RENDERERS[shell](root) for shell in SHELLS}
