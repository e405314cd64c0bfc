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
exact behaviour for local paths — for modules that have a debug id.

A module without a debug id (no CodeView record, as in dumps written by wine's
dbghelp) is always looked up by code file and code id (`identity.match`): in the
code-id layout, then in each directory's `StoreIndex` (every `.sym` file by its
MODULE and `INFO CODE_ID` lines, cached on disk), and in single `.sym` files by
those lines. rust-minidump finds nothing locally for such a module.

Symbol paths that do not exist or cannot be read are listed in `problems`;
they never make a lookup fail. `SymbolSupplier.load(module)` locates and
opens the file and returns a `ModuleSymbols`: loaded (possibly with damaged
lines), not found (with every path tried), no identifier to look up, or
unreadable.
"""

from __future__ import annotations

import _thread
import os
import stat
import time

from inspector.core.cancel import NEVER, CancelToken
from inspector.core.enums import Enum
from inspector.core.memo import memo
from inspector.core.record import Record
from inspector.core.symbols.cache import (
    IndexCache,
    KeptAnswers,
    Witness,
    absence_witness,
    present_witness,
)
from inspector.core.symbols.errors import SymbolFileUnreadable
from inspector.core.symbols.identity import (
    MatchedBy,
    ObjectIdentity,
    SymbolMatch,
    has_debug_id,
    leaf,
    match,
    sym_identity,
)
from inspector.core.symbols.records import DamageReport, DownloadStatus
from inspector.core.symbols.symbol_file import SymbolFile
from inspector.core.types import path_text

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (inspector.core.lazy)
if TYPE_CHECKING:
    from collections.abc import Iterable

    from inspector.core.module_identity import ModuleIdentity
    from inspector.core.symbols.objects.sources import FoundObject, ObjectSources
    from inspector.core.symbols.store_index import StoreIndex

#: The last component of a POSIX or Windows path (rust-minidump's `leafname`).
leafname = leaf


def replace_or_add_extension(filename: str, match: str, new: str) -> str:
    """`foo.PDB` → `foo.sym` when the extension is `match` (any case), else `foo.so` → `foo.so.sym`."""
    parts = filename.split(".")
    if len(parts) > 1 and parts[-1].lower() == match:
        parts.pop()
    parts.append(new)
    return ".".join(parts)


def debug_id_components(module: ModuleIdentity) -> tuple[str, str, str] | None:
    """(debug file leaf, debug id, name.sym), or None without a debug id or any file name.

    An all-zero debug id is none (rust-minidump has no debug identifier for a nil GUID).
    """
    debug_file = module.debug_file or module.code_file
    if not has_debug_id(module) or not debug_file:
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


class PathProblem(Record):
    path: str
    reason: str


class Located(Record):
    """Where a module's symbol file is (`path` None: nowhere), what was tried, and how it was found."""

    path: str | None
    tried: tuple[str, ...]
    found_by: str | None = None  # "debug id", "MODULE line", "code id", "download cache", "symbol server"
    download: DownloadStatus | None = None  # symbol servers only
    matched_by: MatchedBy | None = None  # which identity the lookup that found it used
    #: binaries and debug files downloaded for the module (debuginfod, Microsoft symbol servers)
    objects: tuple[FoundObject, ...] = ()


class SymbolStatus(Enum):
    LOADED = "loaded"
    DAMAGED = "loaded with damaged lines"
    NOT_FOUND = "not found"
    NO_IDENTIFIER = "no debug or code identifier"
    UNREADABLE = "unreadable"


class ModuleSymbols(Record, eq=False):
    """The outcome of getting a module's symbols.

    LOADED / DAMAGED: `symbol_file` is usable (DAMAGED: some lines were skipped,
    `damage` says which kinds); NOT_FOUND: `tried` lists every candidate path;
    NO_IDENTIFIER: the module names no debug id and no code id; UNREADABLE: the
    file was found but could not be read (`error`).
    """

    status: SymbolStatus
    symbol_file: SymbolFile | None = None
    path: str | None = None
    tried: tuple[str, ...] = ()
    found_by: str | None = None
    damage: DamageReport | None = None
    error: str | None = None
    load_seconds: float = 0.0
    download: DownloadStatus | None = None  # symbol servers only: the download (or why there was none)
    match: SymbolMatch | None = None  # loaded files: matched by debug id or code id, and the file's identity
    #: where the symbols came from, for people: ".sym file", "DWARF in the binary", "a .debug file",
    #: "symbol table only", with "(module file on this machine)" or "(debuginfod URL)" (see `objects`)
    source: str | None = None
    #: the binaries and debug files the symbols were made from (None: a `.sym` file)
    objects: tuple[str, ...] = ()
    #: where the CFI came from: ".sym", ".eh_frame", ".debug_frame", "PE unwind info", …
    cfi_sources: tuple[str, ...] = ()
    #: for a module without symbols: what would give it some (identity and file names looked for)
    help: str | None = None

    @property
    def found(self) -> bool:
        return self.symbol_file is not None

    @property
    def unwind_origin(self) -> str | None:
        """Where the module's STACK CFI / STACK WIN rules come from, for the unwind trace.

        `.sym file /path/libfoo.so.sym`, or for objects the tables and the file they were read
        from (`.eh_frame of /usr/lib/…/libc.so.6`), then where the file was found
        (`module file on this machine`, `symbol path`, `debuginfod <url>`, …).
        """
        if self.symbol_file is None:
            return None
        url = self.symbol_url
        if self.objects:
            what = "; ".join(self.cfi_sources) or f"no unwind tables in {', '.join(self.objects)}"
            where = " ".join(w for w in (self.found_by, url) if w)
            return f"{what} ({where})" if where else what
        shown = f".sym file {self.path}"
        return f"{shown} (downloaded from {url})" if url else shown

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


#: answers kept at most (the oldest goes first)
MAX_LOCATED = 4096
#: (symbol paths, code-id fallback, module identity) -> where `SymbolSupplier.locate` found its file,
#: with the witnesses of what that depended on (`SymbolSupplier._witnesses`), for the whole process
_LOCATED = KeptAnswers(MAX_LOCATED)


def _kind(path: str) -> int:
    """The symbol path's file type (`stat.S_IFDIR`, `stat.S_IFREG`, …); 0 when it cannot be asked about."""
    try:
        return stat.S_IFMT(os.stat(path).st_mode)
    except (OSError, ValueError):
        return 0


class SymbolSupplier:
    """Locates symbol files in an ordered list of symbol paths (directories or single `.sym` files)."""

    def __init__(
        self,
        symbol_paths: Iterable[str | os.PathLike[str]],
        *,
        cache: IndexCache | None = None,
        code_id_fallback: bool = True,
        local_modules: bool = True,
    ) -> None:
        #: the symbol paths as `str(Path(p))` spells them (strings: a `Path` per probe cost more
        #: than the probe)
        self.paths = tuple(path_text(p) for p in symbol_paths)
        self.cache = cache
        self.code_id_fallback = code_id_fallback
        #: also use the modules' own files on this machine (and /usr/lib/debug) when they match
        self.local_modules = local_modules
        checked = [_check_path(path) for path in self.paths]
        self.problems = tuple(problem for _, problem in checked if problem is not None)
        self._kinds = tuple(kind for kind, _ in checked)
        self._headers: dict[str, ObjectIdentity | None] = {}
        self._store_indexes: dict[str, StoreIndex] = {}
        self._lock = _thread.allocate_lock()
        self._objects: ObjectSources | None = None

    def locate(self, module: ModuleIdentity, cancel: CancelToken = NEVER) -> Located:
        """Where the module's file is; `cancel` can stop the one slow step, indexing a folder.

        The answer for a module with a debug id is kept for the process (`_LOCATED`) with the
        files and folders it depended on, and given again while they are unchanged: every dump
        of a batch asks for the same modules in the same symbol paths (kept from the second time
        it is asked: `KeptAnswers`).
        """
        key = (
            self.paths,
            self.code_id_fallback,
            module.debug_file,
            module.debug_id,
            module.code_file,
            module.code_id,
        )
        known: Located | None = _LOCATED.get(key)
        if known is not None:
            return known
        located = self._locate(module, cancel)
        if _LOCATED.asked_before(key):
            witnesses = self._witnesses(module, located)
            if witnesses is not None:
                _LOCATED.keep(key, located, witnesses)
        return located

    def _witnesses(self, module: ModuleIdentity, located: Located) -> tuple[Witness, ...] | None:
        """What `located` depended on: each symbol path, each candidate file looked at (a file's
        header decides, or its absence), the file found; None when that cannot be told cheaply
        (a module without a debug id is looked for in every `.sym` file of a folder)."""
        if not has_debug_id(module):
            return None
        witnesses: dict[str, Witness | None] = {}
        for path in (*self.paths, *located.tried):
            if path not in witnesses:
                witnesses[path] = present_witness(path) or absence_witness(path)
        found = [w for w in witnesses.values() if w is not None]
        if len(found) < len(witnesses):
            return None
        return tuple(dict(found).items())

    def _locate(self, module: ModuleIdentity, cancel: CancelToken) -> Located:
        tried: list[str] = []
        kinds = self._path_kinds()
        components = debug_id_components(module)
        if components is not None:
            for path, kind in zip(self.paths, kinds, strict=True):
                if kind == stat.S_IFDIR:
                    candidate = os.path.join(path, *components)
                    tried.append(candidate)
                    if os.path.isfile(candidate):  # False for a name too long to ask about, too
                        return Located(candidate, tuple(tried), "debug id", matched_by=MatchedBy.DEBUG_ID)
                elif kind == stat.S_IFREG:
                    tried.append(path)
                    if self._header_matches(path, module) is MatchedBy.DEBUG_ID:
                        return Located(path, tuple(tried), "MODULE line", matched_by=MatchedBy.DEBUG_ID)
        without_debug_id = not has_debug_id(module)
        components = code_id_components(module) if self.code_id_fallback or without_debug_id else None
        if components is not None:
            for path, kind in zip(self.paths, kinds, strict=True):
                if kind == stat.S_IFDIR:
                    candidate = os.path.join(path, *components)
                    tried.append(candidate)
                    if os.path.isfile(candidate) and self._layout_file_agrees(candidate, module):
                        return Located(candidate, tuple(tried), "code id", matched_by=MatchedBy.CODE_ID)
        if without_debug_id:
            return self._locate_by_code_id(module, tried, cancel)
        return Located(None, tuple(tried))

    def _locate_by_code_id(self, module: ModuleIdentity, tried: list[str], cancel: CancelToken) -> Located:
        """A module without a debug id: `.sym` files whose MODULE / INFO CODE_ID lines name its code id."""
        if not module.code_id or not module.code_file:
            return Located(None, tuple(tried))
        for path, kind in zip(self.paths, self._path_kinds(), strict=True):
            if kind == stat.S_IFDIR:
                tried.append(f"{path} (every .sym file's INFO CODE_ID line)")
                found = self._store_index(path).candidates(module, cancel)
                if found:
                    first = found[0][0]
                    return Located(first, tuple(tried), "INFO CODE_ID line", matched_by=MatchedBy.CODE_ID)
            elif kind == stat.S_IFREG:
                tried.append(path)
                if self._header_matches(path, module) is MatchedBy.CODE_ID:
                    return Located(path, tuple(tried), "INFO CODE_ID line", matched_by=MatchedBy.CODE_ID)
        return Located(None, tuple(tried))

    def _path_kinds(self) -> list[int]:
        """Each symbol path's file type as it was when the supplier was made (as its `problems`);
        one that was not there then is looked at again, in case it has appeared since."""
        return [kind or _kind(path) for path, kind in zip(self.paths, self._kinds, strict=True)]

    def _store_index(self, root: str) -> StoreIndex:
        with self._lock:
            index = self._store_indexes.get(root)
            if index is None:
                # only for modules without a debug id (a stackwalk of most dumps never imports it)
                from inspector.core.symbols.store_index import StoreIndex

                directory = None if self.cache is None else self.cache.directory
                index = self._store_indexes[root] = StoreIndex(root, directory)
            return index

    def load(self, module: ModuleIdentity, cancel: CancelToken = NEVER) -> ModuleSymbols:
        """Locate (for a server supplier: download) and open the module's symbols.

        Order: what the user gave first, so a walk does not depend on what this machine has
        installed: a `.sym` file in the symbol paths; binaries and debug files in the symbol
        paths; what a server supplier downloads; last the module's own files on this machine
        (`local_modules`).
        """
        started = time.perf_counter()
        cancel.check()
        located = self.locate(module, cancel)
        looked: list[str] = []
        if located.path is None:
            found, looked = self._local_objects(module, cancel, on_machine=False)
            if found:
                return self._open_objects(module, found, located, started, cancel)
            located = self._find_remote(module, cancel, located)
            if located.path is None and located.objects:
                return self._open_objects(module, list(located.objects), located, started, cancel)
        if located.path is None:
            found, more = self._local_objects(module, cancel, on_machine=True)
            looked += more
            if found:
                return self._open_objects(module, found, located, started, cancel)
        if located.path is None:
            # neither a debug-id nor a code-id path to look for (`debug_id_path`, `code_id_path`)
            identifiable = (has_debug_id(module) and bool(module.debug_file or module.code_file)) or bool(
                module.code_file and module.code_id
            )
            status = SymbolStatus.NOT_FOUND if identifiable else SymbolStatus.NO_IDENTIFIER
            return ModuleSymbols(
                status,
                tried=(*located.tried, *looked),
                load_seconds=time.perf_counter() - started,
                download=located.download,
                help=_help(module),
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
            match=_symbol_match(module, symbol_file, located.matched_by),
            source=".sym file",
            cfi_sources=(".sym",),
        )

    def _find_remote(self, module: ModuleIdentity, cancel: CancelToken, local: Located) -> Located:
        """What a server supplier finds past the local paths (nothing here)."""
        return local

    # ---- binaries and debug files ---------------------------------------------------------------

    def object_sources(self) -> ObjectSources:
        """The objects of the symbol paths and of this machine (made on first use)."""
        with self._lock:
            if self._objects is None:
                from inspector.core.symbols.objects.sources import ObjectSources

                directory = None if self.cache is None else self.cache.directory
                self._objects = ObjectSources(
                    self.paths,
                    local_modules=self.local_modules,
                    cache_dir=None if directory is None else os.path.join(directory, "objects"),
                )
            return self._objects

    def _local_objects(
        self, module: ModuleIdentity, cancel: CancelToken, *, on_machine: bool
    ) -> tuple[list[FoundObject], list[str]]:
        wanted = self.local_modules if on_machine else bool(self.paths)
        if not wanted or not (module.debug_id or module.code_id):
            return [], []
        return self.object_sources().find_local(module, cancel, on_machine=on_machine)

    def _open_objects(
        self,
        module: ModuleIdentity,
        found: list[FoundObject],
        located: Located,
        started: float,
        cancel: CancelToken,
    ) -> ModuleSymbols:
        from inspector.core.symbols.objects.errors import ObjectUnreadable
        from inspector.core.symbols.objects.sources import describe_source

        sources = self.object_sources()
        paths = tuple(f.path for f in found)
        try:
            converted, _cfi, _fresh = sources.convert(module, found, cancel)
            symbol_file = SymbolFile.open(converted, cache=self.cache, cancel=cancel)
        except (ObjectUnreadable, SymbolFileUnreadable) as exc:
            return ModuleSymbols(
                SymbolStatus.UNREADABLE,
                path=path_text(found[0].path),
                tried=located.tried,
                found_by=found[0].origin,
                error=exc.reason,
                load_seconds=time.perf_counter() - started,
                download=located.download,
                objects=paths,
                help=_help(module),
            )
        damage = symbol_file.damage
        return ModuleSymbols(
            SymbolStatus.DAMAGED if damage.damaged else SymbolStatus.LOADED,
            symbol_file,
            path_text(found[0].path),
            located.tried,
            found[0].origin,
            damage,
            load_seconds=time.perf_counter() - started,
            download=located.download,
            match=_symbol_match(module, symbol_file, found[0].matched_by),
            source=describe_source(found, symbol_file),
            objects=paths,
            cfi_sources=symbol_file.info.cfi_sources,
        )

    def object_problems(self) -> tuple[PathProblem, ...]:
        """Binaries and debug files that were found but could not be read."""
        if self._objects is None:
            return ()
        return tuple(PathProblem(path, reason) for path, reason in self._objects.problems)

    def close(self) -> None:
        """Release what the supplier holds (the temporary folder of converted objects, if any)."""
        if self._objects is not None:
            self._objects.close()

    def __enter__(self) -> SymbolSupplier:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _header(self, path: str) -> ObjectIdentity | None:
        with self._lock:
            if path not in self._headers:
                from inspector.core.symbols.store_index import read_header  # single .sym paths only

                self._headers[path] = read_header(path)
            return self._headers[path]

    def _header_matches(self, path: str, module: ModuleIdentity) -> MatchedBy | None:
        """How a single `.sym` file's MODULE / INFO CODE_ID lines match the module, if they do."""
        header = self._header(path)
        return None if header is None else match(module, header)

    def _layout_file_agrees(self, path: str, module: ModuleIdentity) -> bool:
        """A file in the code-id layout is the module's unless its INFO CODE_ID line names another id."""
        header = self._header(path)
        return header is None or not header.code_id or header.code_id.upper() == module.code_id.upper()


def _symbol_match(
    module: ModuleIdentity, symbol_file: SymbolFile, by: MatchedBy | None
) -> SymbolMatch | None:
    """How the opened file was matched: as the lookup that found it says, else as its own lines say."""
    record, info = symbol_file.module, symbol_file.info
    identity = sym_identity(
        "" if record is None else record.debug_id,
        "" if record is None else record.debug_file,
        info.code_id,
        info.code_file,
    )
    by = by or match(module, identity)
    return None if by is None else SymbolMatch(by, identity)


class KeptSymbolSupplier(SymbolSupplier):
    """A supplier whose loads outlive one dump: for a batch of dumps that share modules.

    Each module's outcome (its open `SymbolFile`, or that it was not found) is kept by
    module identity, so a process that triages many dumps locates, maps and indexes each
    `.sym` file once. Give it to `process(..., supplier=)`, whose `Symbolizer` then leaves
    the files open. At most `max_open` files stay open: `trim()`, called between dumps
    (never while a walk may use a file), closes the least recently used beyond that, so a
    long batch over many different builds does not grow without end. `close()` closes all.
    """

    def __init__(
        self,
        symbol_paths: Iterable[str | os.PathLike[str]],
        *,
        cache: IndexCache | None = None,
        code_id_fallback: bool = True,
        max_open: int = 256,
        local_modules: bool = True,
    ) -> None:
        super().__init__(
            symbol_paths, cache=cache, code_id_fallback=code_id_fallback, local_modules=local_modules
        )
        self.max_open = max_open
        # insertion order is use order (a hit moves its entry to the end)
        self._kept: dict[tuple[str, str, str, str], ModuleSymbols] = {}
        self._kept_lock = _thread.allocate_lock()

    def load(self, module: ModuleIdentity, cancel: CancelToken = NEVER) -> ModuleSymbols:
        key = (module.code_file, module.code_id, module.debug_file, module.debug_id)
        with self._kept_lock:
            kept = self._kept.pop(key, None)
            if kept is not None:
                self._kept[key] = kept
                return kept
        result = super().load(module, cancel)
        with self._kept_lock:
            kept = self._kept.setdefault(key, result)
        if kept is not result and result.symbol_file is not None:  # another thread loaded it first
            result.symbol_file.close()
        return kept

    @property
    def open_files(self) -> int:
        with self._kept_lock:
            return sum(1 for kept in self._kept.values() if kept.symbol_file is not None)

    def trim(self) -> None:
        """Close the least recently used files beyond `max_open` (between dumps only)."""
        with self._kept_lock:
            open_keys = [key for key, kept in self._kept.items() if kept.symbol_file is not None]
            evicted = [self._kept.pop(key) for key in open_keys[: max(0, len(open_keys) - self.max_open)]]
        for kept in evicted:
            assert kept.symbol_file is not None
            kept.symbol_file.close()

    def close(self) -> None:
        with self._kept_lock:
            kept, self._kept = list(self._kept.values()), {}
        for result in kept:
            if result.symbol_file is not None:
                result.symbol_file.close()
        super().close()


def _help(module: ModuleIdentity) -> str:
    """What would give a module symbols: its identity and the files that would do."""
    return _help_text(module.debug_file, module.debug_id, module.code_file, module.code_id)


@memo(1024)  # the modules without symbols of one dump are those of the next
def _help_text(debug_file: str, debug_id: str, code_file: str, code_id: str) -> str:
    from inspector.core.symbols.objects.sources import build_id_of

    module = ObjectIdentity(debug_file, debug_id, code_file, code_id)
    name = leafname(module.debug_file or module.code_file) or "(no name)"
    ids = [f"debug id {module.debug_id}" if module.debug_id else "no debug id"]
    build_id = build_id_of(module)
    if build_id is not None:
        ids.append(f"build id {build_id}")
    elif module.code_id:
        ids.append(f"code id {module.code_id}")
    files = [
        f"{name}.sym" if not name.lower().endswith(".pdb") else replace_or_add_extension(name, "pdb", "sym")
    ]
    code = leafname(module.code_file)
    if code:
        files.append(code)
    if build_id is not None:
        files.append(f"{code or name}.debug, .build-id/{build_id[:2]}/{build_id[2:]}.debug")
    if name.lower().endswith(".pdb"):
        files.append(name)
    return f"{name} ({', '.join(ids)}): a symbol path with {' or '.join(files)} would give it symbols"


def _check_path(path: str) -> tuple[int, PathProblem | None]:
    """The symbol path's file type (0: none to ask about) and what is wrong with it, if anything."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return 0, PathProblem(path, "does not exist")
    except OSError as exc:
        return 0, PathProblem(path, exc.strerror or str(exc))
    except ValueError as exc:  # an embedded NUL
        return 0, PathProblem(path, str(exc))
    kind = stat.S_IFMT(st.st_mode)
    if kind == stat.S_IFDIR:
        if not os.access(path, os.R_OK | os.X_OK):
            return kind, PathProblem(path, "directory is not readable")
        return kind, None
    if kind == stat.S_IFREG:
        if not os.access(path, os.R_OK):
            return kind, PathProblem(path, "file is not readable")
        return kind, None
    return kind, PathProblem(path, f"not a file or directory (mode {st.st_mode:o})")
