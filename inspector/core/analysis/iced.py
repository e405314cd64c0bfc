"""`ix`: iced-x86 for the x86 analysis, each name loaded on first use, without the package's `__init__`.

`import iced_x86` runs a generated `__init__` that imports `typing` and all 58 of the package's
constant modules (`Code` alone defines some 4,900 names, `Mnemonic` 1,800): about 11 ms, the
largest single cost of a warm one-process corpus run's first dump, which the analysis pays
for a few dozen constants and four classes. So `ix` loads only what is asked for:

- a class (`Decoder`, `Formatter`, ...) from the compiled module `iced_x86._iced_x86_py`, loaded
  from its file and registered under its own name: a later `import iced_x86` (a test, a host
  application) finds it in `sys.modules` and uses the same module, which matters because a
  compiled module can be initialized only once per process;
- a constant module (`OpKind`, `Register`, ...) read as text: the generator writes every
  constant as one line, `NAME: Kind = 12 # type: ignore`, and executing the module would import
  `typing` (3 ms) for a module of integers. The lines are read into a namespace of the same
  names and values (a test holds every constant module of the installed iced-x86 to its
  executed twin); a file without such lines is executed instead.

A package whose modules are not files (a frozen application keeps them in an archive) is
imported the ordinary way, and so is everything once something imported the package itself.
The `Code` and `Mnemonic` modules are the two big ones; the analysis takes the few values it
needs from them by decoding (`inspector.core.analysis.x86._iced`), so a crash never reads them.

    from inspector.core.analysis.iced import ix
    ix.Decoder(64, code, ip=address)   # iced_x86.Decoder, loaded now
"""

from __future__ import annotations

import _thread
import sys

from inspector.core.memo import memo

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (inspector.core.lazy)

__all__ = ["ix"]

_PACKAGE = "iced_x86"
_COMPILED = "_iced_x86_py"


@memo(1)
def _directory() -> str | None:
    """The installed package's folder, found without running its `__init__`, if its modules are
    files there (not in a frozen application's archive, where the ordinary import is used)."""
    import os
    from importlib.util import find_spec

    package = find_spec(_PACKAGE)
    if package is None or not package.submodule_search_locations:
        return None
    directory = package.submodule_search_locations[0]
    return directory if os.path.isfile(os.path.join(directory, "__init__.py")) else None


def _from_file(directory: str, name: str, suffixes: list[str]) -> object:
    """The package's submodule `name` executed from its file in `directory`, or None if it has none."""
    import os
    from importlib.util import module_from_spec, spec_from_file_location

    path = next((p for p in (os.path.join(directory, name + s) for s in suffixes) if os.path.isfile(p)), None)
    spec = None if path is None else spec_from_file_location(f"{_PACKAGE}.{name}", path)
    if spec is None or spec.loader is None:
        return None
    module = module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[spec.name]
        raise
    return module


class Constants:
    """A constant module's names and values, read from its text (`read_constants`)."""

    def __init__(self, module: str, values: dict[str, int]) -> None:
        self.__dict__.update(values)
        self._module = module

    def __repr__(self) -> str:
        return f"<constants of {_PACKAGE}.{self._module}>"


def read_constants(path: str, module: str) -> Constants | None:
    """The constants of the generated module `module` at `path` (`NAME: module = 12 # type: ignore`
    lines; the docstrings between them are skipped), or None when it has none, cannot be read or
    spells a value otherwise."""
    values: dict[str, int] = {}
    marker = f": {module} = "
    try:
        with open(path, encoding="utf-8") as text:
            for line in text:
                name, found, rest = line.partition(marker)
                value, _, comment = rest.partition(" # ")
                if found and name.isidentifier() and comment.strip() == "type: ignore":
                    values.setdefault(name, int(value, 0))  # `12`, or flags: `0x0000_0001`
    except (OSError, UnicodeDecodeError, ValueError):
        return None  # not the generator's spelling: the module is executed instead
    return Constants(module, values) if values else None


class _Iced:
    """iced-x86's public names, each loaded when first asked for and then kept as an attribute."""

    def __init__(self) -> None:
        # the analysis runs on the walk's thread and the window's background thread, and the
        # compiled module must not be loaded twice
        self._lock = _thread.allocate_lock()

    def __getattr__(self, name: str) -> object:
        if name.startswith("_"):
            raise AttributeError(name)
        with self._lock:
            value = self.__dict__.get(name)
            if value is None:
                value = self._load(name)
                setattr(self, name, value)
        return value

    def _load(self, name: str) -> object:
        package = sys.modules.get(_PACKAGE)
        if package is not None:  # imported the ordinary way already
            return getattr(package, name)
        directory = _directory()
        if directory is not None:
            # a constant module (`OpKind`, `Register`: the compiled module has a class of that
            # name, for type checkers only), else a class of the compiled module
            import os

            path = os.path.join(directory, name + ".py")
            if os.path.isfile(path):
                return (
                    sys.modules.get(f"{_PACKAGE}.{name}")
                    or read_constants(path, name)
                    or _from_file(directory, name, [".py"])
                )
            from importlib.machinery import EXTENSION_SUFFIXES

            compiled = sys.modules.get(f"{_PACKAGE}.{_COMPILED}") or _from_file(
                directory, _COMPILED, EXTENSION_SUFFIXES
            )
            if compiled is not None:
                return getattr(compiled, name)
        import importlib  # no package folder (a frozen application): the ordinary import

        return getattr(importlib.import_module(_PACKAGE), name)


if TYPE_CHECKING:
    import iced_x86 as ix
else:
    ix = _Iced()
