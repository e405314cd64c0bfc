"""Finding a module's binaries and debug files on this machine, by identity, and caching what they give.

Where objects are looked for (all matched by the module's debug id, or its code id when the
dump has no debug id — never by file name alone):

* the symbol paths: a file that is an object, or a folder searched recursively for objects
  (once; the listing with each object's identity is cached, keyed by the folder and the
  modification times of all its sub-folders, so adding or removing a file re-scans it: on
  disk beside the indexes, and for the rest of the process in memory, where checking it
  costs one `stat` per folder and per object found instead of a walk of the tree);
* module files on this machine (`local_modules`): the module's `code_file` path when it exists
  here (a bare name like `libc.so.6`, as Crashpad records shared libraries, is looked for in the
  system's library folders), and the distribution's debug file
  `/usr/lib/debug/.build-id/<xx>/<rest>.debug` named by the module's build id.

`ObjectSources.convert(module, objects)` turns what was found into a Breakpad text file (see
`breakpad_text`) kept in `<index cache>/objects/`, named after the objects' identities (path,
size, modification time); the next walk opens that file and its cached index in milliseconds.
"""

from __future__ import annotations

import _thread
import json
import os
import stat
import sys
import zlib
from collections.abc import Iterable, Sequence

from inspector.core.cancel import NEVER, CancelToken
from inspector.core.logs import get_logger
from inspector.core.record import Record
from inspector.core.symbols.cache import (
    KeptAnswers,
    absence_witness,
    present_witness,
    settled,
    write_atomically,
)
from inspector.core.symbols.identity import MatchedBy, ObjectIdentity, has_debug_id, leaf, match
from inspector.core.symbols.objects.errors import ObjectUnreadable
from inspector.core.types import path_text

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (inspector.core.lazy)
if TYPE_CHECKING:
    from typing import Any

    from inspector.core.module_identity import ModuleIdentity

log = get_logger(__name__)

#: how many files one symbol-path folder may hold before the scan stops (a mistaken `/`)
MAX_SCANNED_FILES = 200_000
#: names never opened while scanning: Breakpad text, our caches, sources and the like
_SKIP_SUFFIXES = (
    ".sym",
    ".symidx",
    ".json",
    ".txt",
    ".md",
    ".c",
    ".cc",
    ".cpp",
    ".h",
    ".hpp",
    ".py",
    ".o",
    ".a",
    ".d",
    ".url",
    ".dmp",
    ".log",
    ".part",
)
#: the listing files' format: 2 keeps the folder and its sub-folders' times (1 kept their SHA-256)
SCAN_VERSION = 2

#: the system's library folders, where a module recorded by its bare name is looked for
LIBRARY_DIRS = (
    "/lib/x86_64-linux-gnu",
    "/usr/lib/x86_64-linux-gnu",
    "/lib/aarch64-linux-gnu",
    "/usr/lib/aarch64-linux-gnu",
    "/lib64",
    "/usr/lib64",
    "/lib",
    "/usr/lib",
    "/usr/local/lib",
)
DEBUG_ROOT = "/usr/lib/debug"


def build_id_of(module: ModuleIdentity) -> str | None:
    """The module's GNU build id (lower-case hex), when its code id is one (ELF modules)."""
    code_id = (module.code_id or "").strip().lower()
    if len(code_id) < 8 or len(code_id) % 2 or code_id.strip("0123456789abcdef"):  # not all hex digits
        return None
    if module.code_file.lower().endswith((".dll", ".exe", ".sys", ".pdb")) or len(code_id) > 80:
        return None  # a PE code id (timestamp + size) is hex too, but no build id
    return code_id


class FoundObject(Record):
    """An object file that matches a module, and where it was found."""

    path: str
    origin: str  # "symbol path", "module file on this machine", "debuginfod", "symbol server"
    url: str | None = None
    #: how it matched the module (downloads: by the identity the server was asked for)
    matched_by: MatchedBy = MatchedBy.DEBUG_ID


class _Entry(Record):
    path: str
    size: int
    mtime_ns: int
    debug_id: str
    code_id: str


def object_identity(path: str, debug_id: str, code_id: str | None) -> ObjectIdentity:
    """What an object says it is, for `identity.match`.

    symbolic's Python API names no debug file (a PE's CodeView PDB name), so only the debug id
    decides for modules that have one; for a module without one (a PE without a CodeView
    record) the code id must match and the file must carry the module's code file name.
    """
    return ObjectIdentity("", debug_id, leaf(path), (code_id or "").upper())


def matched(module: ModuleIdentity, path: str, debug_id: str, code_id: str | None) -> MatchedBy | None:
    return match(module, object_identity(path, debug_id, code_id))


#: (path, size, mtime_ns) -> `ObjectSources.identity`, for the whole process: every dump of a batch
#: (the corpus, triage, the window's next dump) asks about the same system libraries, and reading
#: an ELF file's identity costs milliseconds (a fifth of a warm corpus pass read them again).
_IDENTITIES: dict[tuple[str, int, int], list[tuple[str, str]]] = {}
_IDENTITIES_LOCK = _thread.allocate_lock()


class _Scan(Record):
    """What one walk of a symbol folder found: the folders walked with their modification times
    (a folder's changes when an entry is added, removed or renamed) and the objects."""

    folders: list[tuple[str, int]]
    entries: list[_Entry]


#: symbol folder -> its last `_Scan`, for the whole process: every dump of a batch looks through
#: the same folders (46 of the corpus' 72 dumps share one), and walking one again for each dump
#: cost more than the rest of finding its modules' symbols. Used while `_unchanged` says so; a
#: scan of a folder changed within the last seconds is not kept (`cache.settled`: a change in
#: the same clock tick would leave its modification time as it was).
_SCANS: dict[str, _Scan] = {}
_SCANS_LOCK = _thread.allocate_lock()
#: folders kept at most (a long GUI session may meet many; the oldest is dropped)
MAX_KEPT_SCANS = 64

#: answers kept at most (the oldest goes first)
MAX_KEPT_ANSWERS = 4096
#: (library folders, debug root, module identity) -> what `find_local(on_machine=True)` found
#: (objects, paths looked at) and the witnesses of those paths, for the whole process: a module's
#: files on this machine (and their absence) are the same for every dump while none changes
_ON_MACHINE = KeptAnswers(MAX_KEPT_ANSWERS)


def named_by_pe(module: ModuleIdentity, objects: Sequence[FoundObject]) -> ModuleIdentity:
    """The module as its PE's CodeView record names it, when the dump names no debug id.

    Wine's dbghelp (and some other writers) record modules without a CodeView record: only the
    PE's code id (TimeDateStamp + SizeOfImage) identifies them, and no PDB can be matched to
    that. The PE itself, found by its code id and name, carries the record: the PDB's name and
    debug id. This is the exe → PDB step of Microsoft's symbol servers: ask for
    `<name>.exe/<TIMESTAMP><SIZE>/<name>.exe`, read its CodeView record, then ask for
    `<name>.pdb/<GUID><age>/<name>.pdb`; the PDB then belongs to the module by that debug id.
    The module is returned unchanged when it has a debug id or no PE of it names a PDB.
    """
    if has_debug_id(module) or not module.code_id:
        return module
    from inspector.core.symbols.objects.reading import pe_codeview

    for found in objects:
        codeview = pe_codeview(found.path)
        if codeview is not None and codeview.code_id == module.code_id.upper():
            return ObjectIdentity(codeview.pdb_name, codeview.debug_id, module.code_file, module.code_id)
    return module


class ObjectSources:
    """Objects in the symbol paths and on this machine, and the cache of their conversions."""

    def __init__(
        self,
        symbol_paths: Sequence[str | os.PathLike[str]],
        *,
        local_modules: bool,
        cache_dir: str | os.PathLike[str] | None,
        library_dirs: Sequence[str] = LIBRARY_DIRS,
        debug_root: str = DEBUG_ROOT,
    ) -> None:
        self.symbol_paths = tuple(path_text(p) for p in symbol_paths)
        self.local_modules = local_modules
        self.library_dirs = tuple(library_dirs)
        self.debug_root = debug_root
        self._temp: str | None = None
        if cache_dir is None:
            import tempfile  # shutil and tempfile: only without a cache (the stackwalk start-up)

            cache_dir = self._temp = tempfile.mkdtemp(prefix="crash-inspector-objects-")
        self.cache_dir = path_text(cache_dir)
        self._lock = _thread.allocate_lock()
        self._listing: list[_Entry] | None = None
        #: problems met while scanning or reading (path, reason), for `inspector_problems`
        self.problems: list[tuple[str, str]] = []

    # ---- finding ------------------------------------------------------------------------------

    def find_local(
        self, module: ModuleIdentity, cancel: CancelToken = NEVER, *, on_machine: bool = False
    ) -> tuple[list[FoundObject], list[str]]:
        """(objects matching the module, names looked for): in the symbol paths, or with
        `on_machine` the module's own files on this machine and /usr/lib/debug (when enabled)."""
        found: list[FoundObject] = []
        looked: list[str] = []
        if not on_machine:
            for entry in self._scan(cancel):
                by = matched(module, entry.path, entry.debug_id, entry.code_id)
                if by is not None:
                    found.append(FoundObject(entry.path, "symbol path", matched_by=by))
            named = named_by_pe(module, found) if found else module
            if named is not module:  # the PDB the module's PE names (see `named_by_pe`)
                for entry in self._scan(cancel):
                    if entry.path not in {f.path for f in found} and matched(
                        named, entry.path, entry.debug_id, entry.code_id
                    ):
                        found.append(FoundObject(entry.path, "symbol path", matched_by=MatchedBy.CODE_ID))
        elif self.local_modules:
            return self._on_machine(module)
        return found, looked

    def _on_machine(self, module: ModuleIdentity) -> tuple[list[FoundObject], list[str]]:
        """`find_local(on_machine=True)`: kept for the process with the witnesses of the files looked
        at (`_ON_MACHINE`), as every dump of a batch asks about the same modules."""
        key = (
            self.library_dirs,
            self.debug_root,
            module.debug_file,
            module.debug_id,
            module.code_file,
            module.code_id,
        )
        known: tuple[tuple[FoundObject, ...], tuple[str, ...]] | None = _ON_MACHINE.get(key)
        if known is not None:
            return list(known[0]), list(known[1])
        found: list[FoundObject] = []
        candidates = self._local_candidates(module)
        looked = [path for path, _ in candidates]
        seen: set[tuple[int, int]] = set()
        for candidate, st in candidates:
            if st is None:
                continue  # no file there
            if (st.st_dev, st.st_ino) in seen:
                continue  # /lib is /usr/lib on merged-/usr systems: one file, read once
            seen.add((st.st_dev, st.st_ino))
            identity = self.identity(candidate, quiet=True, st=st)
            by = next((b for d, c in identity if (b := matched(module, candidate, d, c))), None)
            if by is not None:
                found.append(FoundObject(candidate, "module file on this machine", matched_by=by))
        if _ON_MACHINE.asked_before(key):
            witnesses = {path: present_witness(path) or absence_witness(path) for path in looked}
            if all(witnesses.values()):
                kept = tuple(dict(w for w in witnesses.values() if w).items())
                _ON_MACHINE.keep(key, (tuple(found), tuple(looked)), kept)
        return found, looked

    def _local_candidates(self, module: ModuleIdentity) -> list[tuple[str, os.stat_result | None]]:
        """The module's possible files here, regular files first, with their `stat` (None: no
        regular file there, so nothing to read)."""
        out: list[str] = []
        code_file = module.code_file or ""
        if code_file.startswith("/") and "\x00" not in code_file:
            out.append(code_file)
        elif (
            code_file
            and "/" not in code_file
            and "\\" not in code_file
            and "\x00" not in code_file
            and sys.platform.startswith("linux")
        ):
            out.extend(os.path.join(d, code_file) for d in self.library_dirs)
        build_id = build_id_of(module)
        if build_id is not None:
            out.append(os.path.join(self.debug_root, ".build-id", build_id[:2], build_id[2:] + ".debug"))
        stats = [(path, _regular_file(path)) for path in out]
        return [c for c in stats if c[1] is not None] + [c for c in stats if c[1] is None]

    def identity(
        self, path: str, *, quiet: bool = False, st: os.stat_result | None = None
    ) -> list[tuple[str, str]]:
        """[(debug id, code id)] of every object in the file ([] when it is none); cached per file
        state (`st`: the file's `os.stat`, when the caller has it)."""
        if st is None:
            try:
                st = os.stat(path)
            except (OSError, ValueError):
                return []
        key = (path, st.st_size, st.st_mtime_ns)
        with _IDENTITIES_LOCK:
            if key in _IDENTITIES:
                return _IDENTITIES[key]
        from inspector.core.symbols.objects.elf_identity import elf_identity

        # an ELF file's build-id note gives what symbolic would, without importing symbolic (a
        # tenth of a warm corpus pass); everything else, and anything unusual, is symbolic's
        fast = elf_identity(path, st) if _symbolic_installed() else None
        if fast is not None:
            ids = [(fast[0], fast[1].upper())]
        else:
            from inspector.core.symbols.objects.reading import read_objects

            try:
                ids = [(info.debug_id, (info.code_id or "").upper()) for info, _ in read_objects(path)]
            except ObjectUnreadable as exc:
                if not quiet:
                    self._problem(path, exc.reason)
                ids = []
        with _IDENTITIES_LOCK:
            _IDENTITIES[key] = ids
        return ids

    def _problem(self, path: str, reason: str) -> None:
        with self._lock:
            if (path, reason) not in self.problems and len(self.problems) < 200:
                self.problems.append((path, reason))

    # ---- scanning the symbol paths ----------------------------------------------------------------

    def _scan(self, cancel: CancelToken) -> list[_Entry]:
        with self._lock:
            if self._listing is not None:
                return self._listing
        listing: list[_Entry] = []
        for path in self.symbol_paths:
            cancel.check()
            try:
                mode = os.stat(path).st_mode
            except (OSError, ValueError):
                continue
            if stat.S_ISDIR(mode):
                listing.extend(self._scan_folder(path, cancel))
            elif stat.S_ISREG(mode) and not path.endswith(".sym"):
                listing.extend(self._entries(path))
        with self._lock:
            self._listing = listing
        return listing

    def _entries(self, path: str) -> list[_Entry]:
        try:
            st = os.stat(path)
        except (OSError, ValueError):
            return []
        return [
            _Entry(path, st.st_size, st.st_mtime_ns, debug_id, code_id)
            for debug_id, code_id in self.identity(path, st=st)
        ]

    def _scan_folder(self, root: str, cancel: CancelToken) -> list[_Entry]:
        """Every object under `root`: this process's last scan of it while nothing in it changed,
        else the listing cached on disk when no sub-folder changed, else a scan."""
        with _SCANS_LOCK:
            kept = _SCANS.get(root)
        if kept is not None and _unchanged(kept):
            return kept.entries
        folders, files = _walk(root, cancel)
        entries = self._listing_of(root, folders, files, cancel)
        keep = all(settled(mtime_ns) for _, mtime_ns in folders) and all(settled(e.mtime_ns) for e in entries)
        with _SCANS_LOCK:
            _SCANS.pop(root, None)
            while keep and len(_SCANS) >= MAX_KEPT_SCANS:
                del _SCANS[next(iter(_SCANS))]
            if keep:
                _SCANS[root] = _Scan(folders, entries)
        return entries

    def _listing_of(
        self, root: str, folders: list[tuple[str, int]], files: list[str], cancel: CancelToken
    ) -> list[_Entry]:
        """The objects among `files` (walked under `root`), from the listing on disk when it is current."""
        listing_path = os.path.join(self.cache_dir, "scans", _listing_name(root))
        cached = _read_listing(listing_path, root, folders)
        if cached is not None:
            return cached
        from inspector.core.symbols.objects.reading import looks_like_object

        entries: list[_Entry] = []
        for i, file in enumerate(files):
            if i % 256 == 0:
                cancel.check()
            try:
                with open(file, "rb") as f:
                    head = f.read(64)
            except OSError:
                continue
            if looks_like_object(head):
                entries.extend(self._entries(file))
        _write_listing(listing_path, root, folders, entries)
        return entries

    # ---- converting --------------------------------------------------------------------------

    def converted_path(self, module: ModuleIdentity, objects: Sequence[FoundObject]) -> str:
        """Where the Breakpad text of these objects is kept (named after their identities)."""
        import hashlib  # a conversion's cache name only: a warm walk names its folders' listings by crc32

        from inspector.core.symbols.objects.convert import CONVERTER_VERSION

        parts: list[Any] = [CONVERTER_VERSION, module.debug_id, module.code_id, module.debug_file]
        for found in sorted(objects, key=lambda o: o.path):
            try:
                st = os.stat(found.path)
                parts.append([os.path.realpath(found.path), st.st_size, st.st_mtime_ns, found.url])
            except OSError:
                parts.append([found.path, None])
        digest = hashlib.sha256(json.dumps(parts).encode("utf-8", "surrogatepass")).hexdigest()[:32]
        name = "".join(
            c if c.isalnum() or c in "._-" else "_" for c in leaf(module.debug_file or module.code_file)
        )
        return os.path.join(self.cache_dir, "converted", f"{name[:64] or 'module'}-{digest}.sym")

    def convert(
        self, module: ModuleIdentity, objects: Sequence[FoundObject], cancel: CancelToken = NEVER
    ) -> tuple[str, tuple[str, ...], bool]:
        """(the Breakpad text file, the CFI's origins, whether it was converted now).

        Objects that turn out not to be readable are reported in `problems` and left out;
        `ObjectUnreadable` when none is left.
        """
        from inspector.core.symbols.objects.convert import convert_objects
        from inspector.core.symbols.objects.reading import read_objects

        module = named_by_pe(module, objects)
        target = self.converted_path(module, objects)
        if os.path.isfile(target):
            return target, (), False
        from pathlib import Path  # the conversion (the cold path) writes through `Path`s

        opened: list[tuple[Any, Any]] = []
        reasons: list[str] = []
        for found in objects:
            try:
                for info, obj in read_objects(path_text(found.path)):
                    if matched(module, found.path, info.debug_id, info.code_id) is not None:
                        opened.append((info, obj))
            except ObjectUnreadable as exc:
                reasons.append(f"{found.path}: {exc.reason}")
        if not opened:
            raise ObjectUnreadable(
                objects[0].path if objects else "(none)", "; ".join(reasons) or "no object matches"
            )
        urls = [f"URL {o.url}" for o in objects if o.url]
        os.makedirs(os.path.dirname(target), exist_ok=True)
        import tempfile

        fd, temp = tempfile.mkstemp(prefix=".tmp-", suffix=".sym", dir=os.path.dirname(target))
        os.close(fd)
        try:
            result = convert_objects(
                opened,
                Path(temp),
                debug_file=leaf(module.debug_file or module.code_file) or "unknown",
                debug_id=module.debug_id or opened[0][0].debug_id,
                code_id=module.code_id or opened[0][0].code_id,
                code_file=leaf(module.code_file) or None,
                extra_info=urls[:1],
                cancel=cancel,
            )
            os.replace(temp, target)
        except BaseException:
            try:
                os.unlink(temp)
            except OSError:
                pass
            raise
        finally:
            opened.clear()
        return target, result.cfi_sources, True

    def close(self) -> None:
        if self._temp is not None:
            import shutil

            shutil.rmtree(self._temp, ignore_errors=True)
            self._temp = None


#: whether `symbolic` can be imported: found once per process (`_symbolic_installed`)
_SYMBOLIC: list[bool] = []


def _symbolic_installed() -> bool:
    """Whether `symbolic` can be imported, found without importing it.

    Without it no object is read (`read_objects` says what to install, for every file of a
    symbol folder), so no identity is read without it either: one would only lead to a
    conversion that cannot happen.
    """
    if not _SYMBOLIC:
        module = sys.modules.get("symbolic", False)
        if module is not False:
            found = module is not None  # None: imports of it are blocked
        else:  # not imported yet: ask the import system's finders, as `import symbolic` would
            found = any(
                finder.find_spec("symbolic", None) is not None
                for finder in sys.meta_path
                if hasattr(finder, "find_spec")
            )
        _SYMBOLIC.append(found)
    return _SYMBOLIC[0]


def _regular_file(path: str) -> os.stat_result | None:
    """The file's `stat` when it is a regular file, else None (missing, or anything else)."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return st if stat.S_ISREG(st.st_mode) else None


def _unchanged(scan: _Scan) -> bool:
    """No folder of the scan has changed (no entry added, removed or renamed) and no object it
    found was rewritten (the on-disk listing's check too)."""
    try:
        for folder, mtime_ns in scan.folders:
            if os.stat(folder).st_mtime_ns != mtime_ns:
                return False
        for entry in scan.entries:
            st = os.stat(entry.path)
            if st.st_size != entry.size or st.st_mtime_ns != entry.mtime_ns:
                return False
    except OSError:
        return False
    return True


def _walk(root: str, cancel: CancelToken) -> tuple[list[tuple[str, int]], list[str]]:
    """(every folder with its modification time, every candidate file) under `root`."""
    folders: list[tuple[str, int]] = []
    files: list[str] = []
    stack = [root]
    seen: set[tuple[int, int]] = set()
    while stack and len(files) < MAX_SCANNED_FILES:
        folder = stack.pop()
        try:
            st = os.stat(folder)
        except OSError:
            continue
        if (st.st_dev, st.st_ino) in seen:
            continue  # a symlink loop
        seen.add((st.st_dev, st.st_ino))
        folders.append((folder, st.st_mtime_ns))
        if len(folders) % 256 == 0:
            cancel.check()
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            if entry.name.startswith("."):
                continue  # .partial, .negative, .git, …
            try:
                if entry.is_dir():
                    stack.append(entry.path)
                elif entry.is_file() and not entry.name.lower().endswith(_SKIP_SUFFIXES):
                    files.append(entry.path)
            except OSError:
                continue
    return folders, files


def _listing_name(root: str) -> str:
    """The name of the folder's listing file: a cheap checksum of its path (the listing holds the
    path itself, which `_read_listing` compares, so two folders sharing a name only cost a scan)."""
    raw = root.encode("utf-8", "surrogatepass")
    return f"{zlib.crc32(raw):08x}{zlib.adler32(raw):08x}.json"


def _read_listing(path: str, root: str, folders: list[tuple[str, int]]) -> list[_Entry] | None:
    """The listing kept at `path` when it is of `root` as walked now (the same folders with the
    same modification times) and its objects are unchanged, else None."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.loads(f.read())
        if (
            not isinstance(data, dict)
            or data.get("version") != SCAN_VERSION
            or data.get("root") != root
            or data.get("folders") != [[folder, mtime_ns] for folder, mtime_ns in folders]
        ):
            return None
        entries = [_Entry(*row) for row in data["objects"]]
    except (OSError, ValueError, TypeError, KeyError):
        return None
    # a file changed in place (same folder times) is read again rather than trusted
    for entry in entries:
        try:
            st = os.stat(entry.path)
        except (OSError, TypeError, ValueError):
            return None
        if (st.st_size, st.st_mtime_ns) != (entry.size, entry.mtime_ns):
            return None
    return entries


def _write_listing(path: str, root: str, folders: list[tuple[str, int]], entries: Iterable[_Entry]) -> None:
    rows = [[e.path, e.size, e.mtime_ns, e.debug_id, e.code_id] for e in entries]
    listing = {"version": SCAN_VERSION, "root": root, "folders": folders, "objects": rows}
    error = write_atomically(path, json.dumps(listing).encode("utf-8"))
    if error is not None:
        log.info("cannot keep the object listing %s: %s", path, error)


def describe_source(found: Sequence[FoundObject], symbol_file: Any) -> str:
    """Where a module's symbols came from, for the Modules pane and the reports.

    What the objects held ("DWARF in the binary", "a .debug file", "symbol table only") and
    where they were ("module file on this machine", "debuginfod <url>", "symbol server <url>").
    """
    counts = symbol_file.counts
    has_functions = counts.functions > 0
    separate = any(
        f.path.endswith(".debug") or "/.build-id/" in f.path or f.path.endswith(".pdb") for f in found
    )
    if has_functions:
        what = "a .debug file" if separate else "DWARF in the binary"
        if any(f.path.lower().endswith(".pdb") for f in found):
            what = "a PDB file"
    else:
        what = "symbol table only"
    where = sorted({f.url if f.url else f.origin for f in found})
    origin = next((f.origin for f in found if f.url), None)
    shown = [f"{origin} {w}" if origin and w.startswith("http") else w for w in where]
    return f"{what} ({', '.join(shown)})"
