"""Finding and opening the `.sym` file of a module.

A `SymbolSupplier` has an ordered list of symbol paths. Each is either

* a directory laid out as a Breakpad symbol store,
  `<debug file leaf>/<debug id>/<debug file leaf, .pdb → .sym, else + .sym>`
  (rust-minidump's `breakpad_sym_lookup`; an empty debug file falls back to
  the code file, as for MinGW builds), or
* a single `.sym` file, used for a module when its MODULE line names the
  module's debug id and debug file (only that first line is read to decide).

Paths are tried in order and the first hit wins. When no path has the
module under its debug id, directories are probed in the code-id layout
`<code file leaf>/<CODE ID upper-case>/<code file leaf, .dll → .sym, else + .sym>`
(rust-minidump's `code_info_breakpad_sym_lookup`). rust-minidump itself uses
that layout only with a symbol server, so `code_id_fallback=False` gives its
exact behaviour for local paths.

Symbol paths that do not exist or cannot be read are listed in `problems`;
they never make a lookup fail. `SymbolSupplier.load(module)` locates and
opens the file and returns a `ModuleSymbols`: loaded (possibly with damaged
lines), not found (with every path tried), no identifier to look up, or
unreadable.
"""

from __future__ import annotations

import enum
import os
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from inspector.core.cancel import NEVER, CancelToken
from inspector.core.symbols.cache import IndexCache
from inspector.core.symbols.errors import SymbolFileUnreadable
from inspector.core.symbols.records import DamageReport, DownloadStatus
from inspector.core.symbols.symbol_file import MAX_MODULE_LINE, SymbolFile, parse_module_line
from inspector.core.types import ModuleIdentity


def leafname(path: str) -> str:
    """The last component of a POSIX or Windows path (rust-minidump's `leafname`)."""
    return path.replace("\\", "/").rsplit("/", 1)[-1]


def replace_or_add_extension(filename: str, match: str, new: str) -> str:
    """`foo.PDB` → `foo.sym` when the extension is `match` (any case), else `foo.so` → `foo.so.sym`."""
    parts = filename.split(".")
    if len(parts) > 1 and parts[-1].lower() == match:
        parts.pop()
    parts.append(new)
    return ".".join(parts)


def debug_id_components(module: ModuleIdentity) -> tuple[str, str, str] | None:
    """(debug file leaf, debug id, name.sym), or None without a debug id or any file name."""
    debug_file = module.debug_file or module.code_file
    if not module.debug_id or not debug_file:
        return None
    leaf = leafname(debug_file)
    return leaf, module.debug_id, replace_or_add_extension(leaf, "pdb", "sym")


def code_id_components(module: ModuleIdentity) -> tuple[str, str, str] | None:
    """(code file leaf, CODE ID, name.sym), or None without a code file or code id."""
    if not module.code_file or not module.code_id:
        return None
    leaf = leafname(module.code_file)
    return leaf, module.code_id.upper(), replace_or_add_extension(leaf, "dll", "sym")


def debug_id_path(module: ModuleIdentity) -> str | None:
    """`<debug file leaf>/<debug id>/<name>.sym`, or None without a debug id or any file name."""
    components = debug_id_components(module)
    return None if components is None else "/".join(components)


def code_id_path(module: ModuleIdentity) -> str | None:
    """`<code file leaf>/<CODE ID>/<name>.sym`, or None without a code file or code id."""
    components = code_id_components(module)
    return None if components is None else "/".join(components)


@dataclass(frozen=True, slots=True)
class PathProblem:
    path: str
    reason: str


@dataclass(frozen=True, slots=True)
class Located:
    """Where a module's symbol file is (`path` None: nowhere), what was tried, and how it was found."""

    path: Path | None
    tried: tuple[str, ...]
    found_by: str | None = None  # "debug id", "MODULE line", "code id", "download cache", "symbol server"
    download: DownloadStatus | None = None  # symbol servers only


class SymbolStatus(enum.Enum):
    LOADED = "loaded"
    DAMAGED = "loaded with damaged lines"
    NOT_FOUND = "not found"
    NO_IDENTIFIER = "no debug or code identifier"
    UNREADABLE = "unreadable"


@dataclass(frozen=True, slots=True, eq=False)
class ModuleSymbols:
    """The outcome of getting a module's symbols.

    LOADED / DAMAGED: `symbol_file` is usable (DAMAGED: some lines were skipped,
    `damage` says which kinds); NOT_FOUND: `tried` lists every candidate path;
    NO_IDENTIFIER: the module names no debug id and no code id; UNREADABLE: the
    file was found but could not be read (`error`).
    """

    status: SymbolStatus
    symbol_file: SymbolFile | None = None
    path: Path | None = None
    tried: tuple[str, ...] = ()
    found_by: str | None = None
    damage: DamageReport | None = None
    error: str | None = None
    load_seconds: float = 0.0
    download: DownloadStatus | None = None  # symbol servers only: the download (or why there was none)

    @property
    def found(self) -> bool:
        return self.symbol_file is not None

    @property
    def symbol_url(self) -> str | None:
        """Where the file was downloaded from: this run's download, else the file's `INFO URL` line."""
        if self.download is not None and self.download.url is not None:
            return self.download.url
        return None if self.symbol_file is None else self.symbol_file.info.url

    @property
    def rust_minidump_corrupt(self) -> bool:
        """rust-minidump would report `corrupt_symbols` (it fails to parse this file)."""
        return self.damage is not None and self.damage.rust_minidump_rejects


def _is_file(path: Path) -> bool:
    """`Path.is_file`, but False when the path cannot even be asked about: a module name from a
    dump can make it longer than the system allows (ENAMETOOLONG), which `is_file` raises."""
    try:
        return path.is_file()
    except OSError:
        return False


class SymbolSupplier:
    """Locates symbol files in an ordered list of symbol paths (directories or single `.sym` files)."""

    def __init__(
        self,
        symbol_paths: Iterable[str | os.PathLike[str]],
        *,
        cache: IndexCache | None = None,
        code_id_fallback: bool = True,
    ) -> None:
        self.paths = tuple(Path(p) for p in symbol_paths)
        self.cache = cache
        self.code_id_fallback = code_id_fallback
        self.problems = tuple(p for p in (_check_path(path) for path in self.paths) if p is not None)
        self._module_lines: dict[Path, tuple[str, str] | None] = {}
        self._lock = threading.Lock()

    def locate(self, module: ModuleIdentity) -> Located:
        tried: list[str] = []
        relative = debug_id_path(module)
        if relative is not None:
            for path in self.paths:
                if path.is_dir():
                    candidate = path / relative
                    tried.append(str(candidate))
                    if _is_file(candidate):
                        return Located(candidate, tuple(tried), "debug id")
                elif path.is_file():
                    tried.append(str(path))
                    if self._module_line_matches(path, module):
                        return Located(path, tuple(tried), "MODULE line")
        relative = code_id_path(module) if self.code_id_fallback else None
        if relative is not None:
            for path in self.paths:
                if path.is_dir():
                    candidate = path / relative
                    tried.append(str(candidate))
                    if _is_file(candidate):
                        return Located(candidate, tuple(tried), "code id")
        return Located(None, tuple(tried))

    def load(self, module: ModuleIdentity, cancel: CancelToken = NEVER) -> ModuleSymbols:
        """Locate (for a server supplier: download) and open the module's symbol file."""
        started = time.perf_counter()
        cancel.check()
        located = self._find(module, cancel)
        if located.path is None:
            status = SymbolStatus.NOT_FOUND
            if debug_id_path(module) is None and code_id_path(module) is None:
                status = SymbolStatus.NO_IDENTIFIER
            return ModuleSymbols(
                status,
                tried=located.tried,
                load_seconds=time.perf_counter() - started,
                download=located.download,
            )
        try:
            symbol_file = SymbolFile.open(located.path, cache=self.cache, cancel=cancel)
        except SymbolFileUnreadable as exc:
            return ModuleSymbols(
                SymbolStatus.UNREADABLE,
                path=located.path,
                tried=located.tried,
                found_by=located.found_by,
                error=exc.reason,
                load_seconds=time.perf_counter() - started,
                download=located.download,
            )
        damage = symbol_file.damage
        return ModuleSymbols(
            SymbolStatus.DAMAGED if damage.damaged else SymbolStatus.LOADED,
            symbol_file,
            located.path,
            located.tried,
            located.found_by,
            damage,
            load_seconds=time.perf_counter() - started,
            download=located.download,
        )

    def _find(self, module: ModuleIdentity, cancel: CancelToken) -> Located:
        """Where `load` gets the file from (a server supplier downloads here)."""
        return self.locate(module)

    def close(self) -> None:
        """Release what the supplier holds (nothing for local paths)."""

    def __enter__(self) -> SymbolSupplier:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _module_line_matches(self, path: Path, module: ModuleIdentity) -> bool:
        with self._lock:
            if path not in self._module_lines:
                self._module_lines[path] = _read_module_line(path)
            found = self._module_lines[path]
        if found is None or not module.debug_id:
            return False
        debug_id, name = found
        wanted = leafname(module.debug_file or module.code_file)
        return debug_id.upper() == module.debug_id.upper() and (
            not name or not wanted or leafname(name).lower() == wanted.lower()
        )


def _read_module_line(path: Path) -> tuple[str, str] | None:
    """(debug id, debug file) of a `.sym` file's MODULE line; only the first line is read."""
    try:
        with open(path, "rb") as f:
            first = f.read(MAX_MODULE_LINE).split(b"\n", 1)[0]
    except OSError:
        return None
    module = parse_module_line(first)
    return None if module is None else (module.debug_id, module.debug_file)


def _check_path(path: Path) -> PathProblem | None:
    try:
        st = path.stat()
    except FileNotFoundError:
        return PathProblem(str(path), "does not exist")
    except OSError as exc:
        return PathProblem(str(path), exc.strerror or str(exc))
    if path.is_dir():
        if not os.access(path, os.R_OK | os.X_OK):
            return PathProblem(str(path), "directory is not readable")
        return None
    if path.is_file():
        if not os.access(path, os.R_OK):
            return PathProblem(str(path), "file is not readable")
        return None
    return PathProblem(str(path), f"not a file or directory (mode {st.st_mode:o})")
