"""The package keeps the shape the README's Architecture section describes:
no module-level import cycles, no module over about 400 lines, SQL only in
storage/, and a core that imports without the command-line or numeric
stacks. Read from the source with `ast`, so the checks cannot drift from
the code."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "thatch_cli"
MAX_LINES = 400
ARCHITECTURE = PACKAGE.parent / "docs" / "architecture.md"

# The documented layer order (docs/architecture.md), top first. A module may
# import its own package and any package of a later layer, never one of its
# own layer or above, at module level or inside a function. A new module in
# a listed package needs nothing here; a new package goes in the row where
# it belongs. "" is the root package: `__version__` and the lazy public API,
# which imports nothing (its names are resolved by importlib, for library users).
LAYERS: list[tuple[str, ...]] = [
    ("gen", "__main__"),
    ("cli",),
    ("hot", "mcp"),
    ("sync",),
    ("ops",),
    ("daemon",),
    ("ranking",),
    ("calibration",),
    ("model",),
    ("storage",),
    ("integrations",),
    ("location",),
    ("memory",),
    ("support", ""),
]


def modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _module_level_imports(tree: ast.Module):
    """Imports executed when the module is imported: top level, and inside
    top-level if/try blocks, but not under `if TYPE_CHECKING:`."""
    pending = list(tree.body)
    while pending:
        node = pending.pop(0)
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif isinstance(node, ast.If) and not _is_type_checking(node.test):
            pending += node.body + node.orelse
        elif isinstance(node, ast.Try):
            pending += node.body + node.orelse + node.finalbody + [n for h in node.handlers for n in h.body]


def _targets(name: str, path: Path, node: ast.Import | ast.ImportFrom, known: dict[str, Path]) -> set[str]:
    """The modules of the package that an import statement loads (a name
    imported from a package counts as its submodule when it is one)."""
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names if alias.name in known}
    base = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    if node.level:
        base = base[: len(base) - (node.level - 1)]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    found = {f"{target}.{alias.name}" for alias in node.names if f"{target}.{alias.name}" in known}
    if len(found) < len(node.names) and target in known:
        found.add(target)
    return found


def full_import_graph() -> dict[str, set[str]]:
    """Every import of the package's own modules, wherever it is written:
    module level, inside functions and under `if TYPE_CHECKING:`."""
    known = modules()
    graph: dict[str, set[str]] = {}
    for name, path in known.items():
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                deps |= _targets(name, path, node, known)
        graph[name] = deps - {name}
    return graph


def layer_of(module: str) -> tuple[int, str]:
    """(row in LAYERS, package) of a module of thatch_cli."""
    package = module.split(".")[1] if "." in module else ""
    for row, packages in enumerate(LAYERS):
        if package in packages:
            return row, package
    raise AssertionError(f"package {package!r} of {module} is not in LAYERS (tests/test_layout.py)")


def imports_against_the_order(graph: dict[str, set[str]]) -> list[str]:
    wrong = []
    for module, deps in sorted(graph.items()):
        row, package = layer_of(module)
        for dep in sorted(deps):
            dep_row, dep_package = layer_of(dep)
            if dep_package != package and dep_row <= row:
                wrong.append(f"{module} -> {dep}")
    return wrong


def import_graph() -> dict[str, set[str]]:
    known = modules()
    graph: dict[str, set[str]] = {}
    for name, path in known.items():
        is_package = path.name == "__init__.py"
        deps: set[str] = set()
        for node in _module_level_imports(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                deps.update(alias.name for alias in node.names)
                continue
            base = name.split(".") if is_package else name.split(".")[:-1]
            if node.level:
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            deps.add(target)
            deps.update(f"{target}.{alias.name}" for alias in node.names)
        graph[name] = {d for d in deps if d in known and d != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_module_level_import_cycles():
    assert cycles(import_graph()) == []


def test_no_import_cycles_counting_imports_inside_functions():
    assert cycles(full_import_graph()) == []


def test_every_import_follows_the_documented_layer_order():
    assert imports_against_the_order(full_import_graph()) == []


def test_the_order_check_can_fail():
    graph = {"thatch_cli.storage.memories": {"thatch_cli.ops.context", "thatch_cli.storage.schema"},
             "thatch_cli.hot.prompt": {"thatch_cli.mcp.server", "thatch_cli"}}
    assert imports_against_the_order(graph) == ["thatch_cli.hot.prompt -> thatch_cli.mcp.server",
                                                "thatch_cli.storage.memories -> thatch_cli.ops.context"]


def test_every_package_has_a_layer_and_the_architecture_page_lists_the_order():
    """docs/architecture.md names the layers, top first, in the paragraph
    that starts "Dependencies point down"; each package is in exactly one."""
    packages = {name.split(".")[1] for name, path in modules().items() if name.count(".") == 1}
    listed = [package for row in LAYERS for package in row if package]
    assert sorted(listed) == sorted(packages) and len(set(listed)) == len(listed)
    text = ARCHITECTURE.read_text(encoding="utf-8")
    paragraph = text[text.index("Dependencies point down"):].split("\n\n")[0]
    named = [n.rstrip("/") for n in re.findall(r"`([a-z_]+/?)`", paragraph) if n.rstrip("/") in packages]
    assert list(dict.fromkeys(named)) == listed


def test_the_cycle_check_can_fail():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == [["a", "b", "c"]]


def test_no_module_is_over_400_lines():
    sizes = {name: len(path.read_text(encoding="utf-8").splitlines()) for name, path in modules().items()}
    assert {name: n for name, n in sizes.items() if n > MAX_LINES} == {}


def _executes_sql(path: Path) -> bool:
    """Whether the module calls execute/executemany/executescript on something."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in (
                "execute", "executemany", "executescript"):
            return True
    return False


def test_sql_is_written_only_in_storage():
    outside = [name for name, path in modules().items() if _executes_sql(path) and not name.startswith(
        "thatch_cli.storage")]
    assert outside == []
    assert any(_executes_sql(path) for name, path in modules().items() if name.startswith("thatch_cli.storage"))


@pytest.mark.parametrize("module", ["thatch_cli", "thatch_cli.ops.remember", "thatch_cli.ops.recall",
                                    "thatch_cli.ops.memories", "thatch_cli.ops.hygiene", "thatch_cli.ops.dedup",
                                    "thatch_cli.ops.transfer", "thatch_cli.ops.branches", "thatch_cli.ops.reindex",
                                    "thatch_cli.location.scope", "thatch_cli.storage.memories"])
def test_the_core_imports_without_typer_rich_or_numpy(module):
    code = (f"import sys, {module}; "
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'typer', 'click', 'rich', 'numpy', 'torch'}))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_the_public_api_is_lazy_and_complete():
    import thatch_cli

    for name in thatch_cli.__all__:
        assert getattr(thatch_cli, name) is not None, name


def test_every_command_module_is_built_into_the_app():
    """A command module app.py does not list would be silently missing."""
    from thatch_cli.cli import app, declare

    declaring = {path.stem for path in (PACKAGE / "cli").glob("*.py")
                 if re.search(r"^@command\(", path.read_text(encoding="utf-8"), re.M)}
    assert declaring == set(app.MODULES)
    assert {c.function.__module__.rsplit(".", 1)[1] for c in declare.COMMANDS} == set(app.MODULES)


def test_every_module_has_a_docstring_that_its_package_names():
    """A newcomer finds a behaviour from the tree: every module says what it
    holds, and every package's docstring lists its modules and subpackages
    (docs/architecture.md's tree is generated from these)."""
    undocumented, unlisted = [], []
    for name, path in modules().items():
        if not ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))):
            undocumented.append(name)
        package, _, leaf = name.rpartition(".")
        if package in ("", "thatch_cli") or leaf == "__main__":
            continue  # the root's docstring is the public API; __main__ runs the package
        doc = ast.get_docstring(ast.parse(modules()[package].read_text(encoding="utf-8"))) or ""
        if not re.search(rf"\b{re.escape(leaf)}\b", doc):
            unlisted.append(name)
    assert undocumented == [] and unlisted == []


def test_the_support_package_is_standard_library_only():
    """thatch_cli/support/ holds what every layer uses: it imports the
    standard library and itself only, at module level or inside functions."""
    stdlib = set(sys.stdlib_module_names) | {"__future__"}
    found = {}
    for name, path in modules().items():
        if not name.startswith("thatch_cli.support"):
            continue
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
                targets = [".".join(base + ([node.module] if node.module else []))]
            else:
                continue
            for target in targets:
                if target.split(".")[0] not in stdlib and not target.startswith("thatch_cli.support"):
                    found.setdefault(name, []).append(target)
    assert any(name.startswith("thatch_cli.support.") for name in modules())
    assert found == {}
