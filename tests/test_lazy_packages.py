"""Packages whose names are imported on first use (`inspector.core.lazy`) offer exactly what they say.

Such a package lists each name three times: in its `lazy_names` table (what runs), under
`if TYPE_CHECKING:` (what type checkers see) and in `__all__`. A name missing from the table
would type-check and then fail at run time, so the three must agree, and every name must be
importable through the package.
"""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
LAZY_INITS = sorted(
    p for p in (REPO / "inspector").rglob("__init__.py") if "lazy_names(" in p.read_text(encoding="utf-8")
)


def _package(init: Path) -> str:
    return ".".join(init.parent.relative_to(REPO).parts)


def _lists(init: Path) -> tuple[dict[str, str], dict[str, str], list[str]]:
    """(name -> module of the table, name -> module of the TYPE_CHECKING imports, __all__)."""
    package = _package(init)
    tree = ast.parse(init.read_text(encoding="utf-8"))
    table: dict[str, str] = {}
    typed: dict[str, str] = {}
    exported: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            if getattr(node.value.func, "id", None) == "lazy_names":
                for module, names in ast.literal_eval(node.value.args[1]).items():
                    table.update(dict.fromkeys(names, f"{package}.{module}"))
        elif isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "__all__":
            exported = ast.literal_eval(node.value)
        elif isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            for imp in node.body:
                assert isinstance(imp, ast.ImportFrom) and imp.module is not None
                typed.update({alias.name: imp.module for alias in imp.names})
    return table, typed, exported


def test_the_lazy_packages_are_the_engines() -> None:
    assert {_package(p) for p in LAZY_INITS} >= {
        "inspector.core.minidump",
        "inspector.core.symbols",
        "inspector.core.unwind",
        "inspector.core.process",
        "inspector.core.analysis",
    }


@pytest.mark.parametrize("init", LAZY_INITS, ids=_package)
def test_table_type_checking_imports_and_all_agree(init: Path) -> None:
    table, typed, exported = _lists(init)
    assert table == typed
    assert sorted(exported) == sorted(table)
    package = importlib.import_module(_package(init))
    for name, module in table.items():
        assert getattr(package, name) is getattr(importlib.import_module(module), name)


def test_importing_one_module_of_a_package_does_not_import_the_others() -> None:
    child = (
        "import sys\n"
        "import inspector.core.minidump.format\n"
        "print(sorted(m for m in sys.modules if m.startswith('inspector.core.minidump.')))\n"
    )
    run = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, check=True)
    loaded = set(ast.literal_eval(run.stdout))
    assert "inspector.core.minidump.format" in loaded
    assert not {"inspector.core.minidump.dump", "inspector.core.minidump.mozilla"} & loaded
