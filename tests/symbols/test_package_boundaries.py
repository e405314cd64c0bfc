"""What the symbol package may import: core types/errors/cancel, small helpers; numpy only to build."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.test_architecture import _imports

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "inspector" / "core" / "symbols"
# the version is read by the symbol-server client for its User-Agent
ALLOWED_CORE = {
    "inspector.core.types",
    "inspector.core.module_identity",  # the protocol a module satisfies (split from types: typing)
    "inspector.core.errors",
    "inspector.core.cancel",
    "inspector.core.record",
    "inspector.core.enums",  # the engine's enumerations (cheap to define and use)
    "inspector.core.memo",  # functools.lru_cache without importing functools
    "inspector.core.logs",  # logging imported only when a message is written
    "inspector.core.lazy",  # the package's names imported on first use
    "inspector.core.ordered",  # independent pieces of a job on a few threads, taken in order
    "inspector.__version__",
}


def test_symbols_depend_only_on_core_types_errors_and_cancel() -> None:
    for path in PACKAGE.glob("*.py"):
        for module in _imports(path):
            # _imports also lists `package.name` for every `from package import name`
            if module.startswith("inspector.") and not module.startswith("inspector.core.symbols"):
                assert any(module == a or module.startswith(a + ".") for a in ALLOWED_CORE), (
                    f"{path.name} imports {module}"
                )


def test_only_the_cold_builder_and_its_helpers_import_numpy() -> None:
    users = sorted(
        p.name for p in PACKAGE.glob("*.py") if any(m.split(".")[0] == "numpy" for m in _imports(p))
    )
    assert users == ["index_arrays.py", "index_build.py"]


def test_importing_the_package_loads_neither_numpy_nor_the_minidump_reader() -> None:
    code = (
        "import sys, inspector.core.symbols\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('numpy', 'PySide6', 'pyqtgraph')"
        " or m.startswith('inspector.core.minidump')]\n"
        "print(','.join(sorted(bad)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO)
    assert out.stdout.strip() == ""
