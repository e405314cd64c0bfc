"""Package namespaces whose names are imported on first use (PEP 562).

Importing any module of a package runs the package's `__init__` first, so an `__init__` that
imported all its modules to offer their names made every user of one module pay for all of them
(the start-up of a headless `stackwalk` is mostly imports). A package lists its names instead:

    __getattr__ = lazy_names(__name__, {"dump": ("Minidump",), ...})
    if TYPE_CHECKING:  # the same names, for type checkers and readers
        from inspector.core.minidump.dump import Minidump
    __all__ = ["Minidump", ...]

`from inspector.core.minidump import Minidump` then imports `inspector.core.minidump.dump` at that
moment; `tests/test_lazy_packages.py` checks that the three lists agree.

The same goes for `typing` (a tenth of what a `stackwalk --json` process imported): the modules
on that path name its types in annotations only, which `from __future__ import annotations`
leaves unevaluated, and guard those imports with a module constant of their own,

    TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
    if TYPE_CHECKING:
        from typing import Any

which type checkers read as `typing.TYPE_CHECKING` (mypy treats any `TYPE_CHECKING` so).
A `Protocol` needs `typing` at run time, so those live in modules of their own
(`inspector.core.module_identity`) or become `Callable` aliases; `tests/test_startup_cost.py`
checks that the path stays without `typing`.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping


def lazy_names(package: str, names_by_module: Mapping[str, tuple[str, ...]]) -> Callable[[str], object]:
    """The `__getattr__` of `package`, whose names live in its modules (relative names: `"dump"`
    is `package.dump`)."""
    where = {name: module for module, names in names_by_module.items() for name in names}

    def __getattr__(name: str) -> object:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        # __import__ rather than importlib.import_module: the C import path, which
        # `python -X importtime` reports module by module
        full = f"{package}.{module}"
        __import__(full)
        value = getattr(sys.modules[full], name)
        setattr(sys.modules[package], name, value)  # looked up once
        return value

    return __getattr__
