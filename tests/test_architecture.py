"""The core never depends on Qt, pyqtgraph or the GUI: checked on the import graph."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FORBIDDEN = ("PySide6", "shiboken6", "pyqtgraph", "inspector.gui", "inspector.app")


def _module_name(path: Path, root: Path = REPO) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path, root: Path = REPO) -> set[str]:
    """Every module a file imports, anywhere in it (also inside functions), made absolute."""
    name = _module_name(path, root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return found


def _graph(root: Path = REPO) -> dict[str, set[str]]:
    return {_module_name(p, root): _imports(p, root) for p in (root / "inspector").rglob("*.py")}


def _forbidden(module: str) -> bool:
    return any(module == f or module.startswith(f + ".") for f in FORBIDDEN)


def _core_offenders(root: Path = REPO) -> list[str]:
    """Import chains from a core module to a forbidden one, followed through our own package."""
    graph = _graph(root)
    core = [m for m in graph if m == "inspector.core" or m.startswith("inspector.core.")]
    assert core, "no core modules found"
    offenders = []
    for start in core:
        seen, stack = {start}, [(start, [start])]
        while stack:
            module, chain = stack.pop()
            for target in graph.get(module, ()):
                if _forbidden(target):
                    offenders.append(" -> ".join([*chain, target]))
                    continue
                # follow our own modules (and the packages a dotted name passes through)
                for own in (t for t in graph if target == t or target.startswith(t + ".")):
                    if own not in seen:
                        seen.add(own)
                        stack.append((own, [*chain, own]))
    return sorted(set(offenders))


def test_core_import_graph_never_reaches_qt_or_gui() -> None:
    offenders = _core_offenders()
    assert not offenders, "core reaches a forbidden module:\n" + "\n".join(offenders)


def test_importing_all_of_core_loads_no_qt() -> None:
    """The same rule at run time: import every core module in a fresh interpreter."""
    code = (
        "import pkgutil, sys, importlib, inspector.core as c\n"
        "for m in pkgutil.walk_packages(c.__path__, 'inspector.core.'): importlib.import_module(m.name)\n"
        f"bad = sorted(m for m in sys.modules if m.split('.')[0] in {FORBIDDEN[:3]!r} "
        "or m.startswith(('inspector.gui', 'inspector.app')))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO)
    assert out.stdout.strip() == ""


def test_headless_cli_does_not_import_qt() -> None:
    code = (
        "import sys, inspector.cli\n"
        "print(','.join(m for m in sys.modules if m.startswith(('PySide6', 'pyqtgraph'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO)
    assert out.stdout.strip() == ""


def test_checker_sees_an_indirect_qt_import_inside_a_function(tmp_path: Path) -> None:
    """The check itself must catch core -> core helper -> (function-level) Qt import."""
    core = tmp_path / "inspector" / "core"
    core.mkdir(parents=True)
    (tmp_path / "inspector" / "__init__.py").write_text("")
    (core / "__init__.py").write_text("")
    (core / "walker.py").write_text("from . import helper\n")
    (core / "helper.py").write_text("def f():\n    from PySide6 import QtCore\n    return QtCore\n")
    assert _core_offenders(tmp_path) == [
        "inspector.core.helper -> PySide6",
        "inspector.core.helper -> PySide6.QtCore",
        "inspector.core.walker -> inspector.core.helper -> PySide6",
        "inspector.core.walker -> inspector.core.helper -> PySide6.QtCore",
    ]


def _own_imports(root: Path = REPO) -> dict[str, set[str]]:
    """Our modules and, for each, the modules of ours it imports (anywhere in it, TYPE_CHECKING too).

    `from package import name` imports the module `package.name` when that is one of ours,
    else `package` itself (a name it defines or re-exports).
    """
    files = {_module_name(p, root): p for p in (root / "inspector").rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names if alias.name in files)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")
                    base = base[: len(base) - (node.level - 1)]
                    module = ".".join(base + ([node.module] if node.module else []))
                else:
                    module = node.module or ""
                for alias in node.names:
                    if f"{module}.{alias.name}" in files:
                        targets.add(f"{module}.{alias.name}")
                    elif module in files:
                        targets.add(module)
        targets.discard(name)
        graph[name] = targets
    return graph


def _import_cycles(root: Path = REPO) -> list[list[str]]:
    """Groups of our modules that import each other, directly or through others (Tarjan's SCCs)."""
    graph = _own_imports(root)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(start: str) -> None:
        # iterative: a deep chain of imports must not hit the recursion limit
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, targets = work[-1]
            for target in targets:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        cycles.append(sorted(group))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return sorted(cycles)


def test_no_import_cycles_between_our_modules() -> None:
    cycles = _import_cycles()
    assert not cycles, "modules that import each other:\n" + "\n".join(" <-> ".join(c) for c in cycles)


def test_cycle_finder_sees_a_cycle_through_a_type_checking_import(tmp_path: Path) -> None:
    package = tmp_path / "inspector"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from inspector.b import thing\n")
    (package / "b.py").write_text("from inspector import c\nthing = 1\n")
    (package / "c.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from inspector.a import x\n"
    )
    (package / "d.py").write_text("import inspector.a\n")
    assert _import_cycles(tmp_path) == [["inspector.a", "inspector.b", "inspector.c"]]


#: Longest a module of ours may be: past it, a module usually does several jobs (split it by job).
MAX_MODULE_LINES = 700


def test_no_module_is_longer_than_the_limit() -> None:
    long = {
        str(p.relative_to(REPO)): n
        for p in (REPO / "inspector").rglob("*.py")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert not long, f"modules longer than {MAX_MODULE_LINES} lines (split them by job): {long}"


def test_no_class_is_defined_in_both_the_core_and_the_gui() -> None:
    """The window shows the core's model: it keeps no second copy of the core's types."""

    def classes(root: Path) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {}
        for path in root.rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
                if isinstance(node, ast.ClassDef):
                    found.setdefault(node.name, []).append(str(path.relative_to(REPO)))
        return found

    core, gui = classes(REPO / "inspector" / "core"), classes(REPO / "inspector" / "gui")
    both = {name: core[name] + gui[name] for name in core.keys() & gui.keys()}
    assert not both, f"classes defined in both inspector/core and inspector/gui: {both}"
