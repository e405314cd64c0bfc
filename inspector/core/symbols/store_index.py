"""A symbol directory's `.sym` files by what they say they are, for modules without a debug id.

A module without a debug id cannot be found in the `<debug file>/<debug id>/` layout, and
symbol directories are often not laid out by code id either (a store written by
`dump_syms` and a script keeps files under the debug id the MODULE line names). So a
directory is indexed once: every `.sym` file under it (at any depth; folders whose name
starts with a dot, like the download cache's `.partial`, are skipped) is read up to the
end of its first INFO lines, and its MODULE and `INFO CODE_ID` lines (`ObjectIdentity`)
are kept by (code file leaf, CODE ID). `StoreIndex.candidates(module)` then returns the
files whose identity `identity.match`es the module.

The index is built on first use (a walk of the directory and a stat of each file) and
cached on disk beside the symbol indexes, as `<leaf>-<hash of the real path>.storeidx`
(JSON). On the next run the walk is repeated, but only the files that are new or whose
size or modification time changed are read again; files gone are dropped, and the cache
entry is rewritten when anything changed. A cache that cannot be read or written is
ignored (the index is then built in memory each run).
"""

from __future__ import annotations

import _thread
import json
import os
import zlib

from inspector.core.cancel import NEVER, CancelToken
from inspector.core.logs import get_logger
from inspector.core.symbols.cache import write_atomically
from inspector.core.symbols.identity import ObjectIdentity, leaf, match, sym_identity
from inspector.core.symbols.line_parser import parse_info
from inspector.core.symbols.symbol_file import MAX_MODULE_LINE, parse_module_line
from inspector.core.types import path_text

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (inspector.core.lazy)
if TYPE_CHECKING:
    from inspector.core.module_identity import ModuleIdentity

log = get_logger(__name__)

SUFFIX = ".storeidx"
FORMAT = "crash-inspector store index"
VERSION = 1
#: how much of a `.sym` file is read for its MODULE and INFO lines (INFO lines come right after MODULE)
HEADER_BYTES = 64 * 1024
#: directory entries and files between two looks at the cancel token (a folder may be huge)
CANCEL_STRIDE = 256

_Stat = tuple[int, int]  # size, mtime_ns


def read_header(path: str) -> ObjectIdentity | None:
    """A `.sym` file's MODULE and `INFO CODE_ID` lines as an identity; None without a MODULE line."""
    try:
        with open(path, "rb") as f:
            head = f.read(HEADER_BYTES)
    except OSError:
        return None
    lines = head.split(b"\n")
    module = parse_module_line(lines[0][:MAX_MODULE_LINE])
    if module is None:
        return None
    if len(head) == HEADER_BYTES:
        lines.pop()  # the last piece may be cut short
    code_id = code_file = None
    for line in lines[1:]:
        if not line.startswith(b"INFO "):
            break
        parsed = parse_info(line.rstrip(b"\r"))
        if not isinstance(parsed, str) and parsed.key == "CODE_ID":
            code_id, _, rest = parsed.value.partition(" ")
            code_file = rest.strip() or None
    return sym_identity(module.debug_id, module.debug_file, code_id, code_file)


def _key(code_file: str, code_id: str) -> tuple[str, str]:
    return leaf(code_file).lower(), code_id.upper()


class StoreIndex:
    """The `.sym` files under `root` by (code file leaf, CODE ID); built on first use, cached on disk."""

    def __init__(self, root: str | os.PathLike[str], cache_dir: str | os.PathLike[str] | None) -> None:
        self.root = path_text(root)
        self.cache_dir = None if cache_dir is None else path_text(cache_dir)
        self._lock = _thread.allocate_lock()
        self._by_code: dict[tuple[str, str], list[tuple[str, ObjectIdentity]]] | None = None
        #: what the last build did, for tests and status displays
        self.files_read = 0
        self.from_cache = 0

    def candidates(
        self, module: ModuleIdentity, cancel: CancelToken = NEVER
    ) -> list[tuple[str, ObjectIdentity]]:
        """The files whose MODULE / INFO CODE_ID lines match the module by code id, in path order.

        The first call builds the index; `cancel` stops that (raising `Cancelled`), and the
        next call starts again.
        """
        if not module.code_id or not module.code_file:
            return []
        with self._lock:
            if self._by_code is None:
                self._by_code = self._build(cancel)
            found = self._by_code.get(_key(module.code_file, module.code_id), [])
        return [(path, identity) for path, identity in found if match(module, identity) is not None]

    # ---- building ----------------------------------------------------------------------------

    def _build(self, cancel: CancelToken) -> dict[tuple[str, str], list[tuple[str, ObjectIdentity]]]:
        cached = self._load_cache()
        entries: dict[str, tuple[_Stat, ObjectIdentity | None]] = {}
        for n, (relative, stat) in enumerate(self._walk(cancel)):
            if n % CANCEL_STRIDE == 0 and cancel.cancelled:
                cancel.check()
            old = cached.get(relative)
            if old is not None and old[0] == stat:
                entries[relative] = old
                self.from_cache += 1
            else:
                entries[relative] = (stat, read_header(self._full(relative)))
                self.files_read += 1
        if entries != cached:
            self._store_cache(entries)
        by_code: dict[tuple[str, str], list[tuple[str, ObjectIdentity]]] = {}
        for relative in sorted(entries):
            identity = entries[relative][1]
            if identity is not None and identity.code_id and identity.code_file:
                key = _key(identity.code_file, identity.code_id)
                by_code.setdefault(key, []).append((self._full(relative), identity))
        return by_code

    def _full(self, relative: str) -> str:
        """The path of a file of the index (its key has `/` separators on every system)."""
        return os.path.join(self.root, *relative.split("/"))

    def _walk(self, cancel: CancelToken) -> list[tuple[str, _Stat]]:
        """(path relative to the root with `/` separators, (size, mtime_ns)) of every `.sym` file."""
        out: list[tuple[str, _Stat]] = []
        pending = [""]
        seen = 0
        while pending:
            relative_dir = pending.pop()
            try:
                with os.scandir(os.path.join(self.root, relative_dir)) as it:
                    entries = list(it)
            except OSError:
                continue
            for entry in entries:
                seen += 1
                if seen % CANCEL_STRIDE == 0 and cancel.cancelled:
                    cancel.check()
                if entry.name.startswith("."):
                    continue
                relative = f"{relative_dir}/{entry.name}" if relative_dir else entry.name
                try:
                    if entry.is_dir(follow_symlinks=False):
                        pending.append(relative)
                    elif entry.name.lower().endswith(".sym") and entry.is_file():
                        st = entry.stat()
                        out.append((relative, (st.st_size, st.st_mtime_ns)))
                except OSError:
                    continue
        return out

    # ---- the on-disk cache -------------------------------------------------------------------

    def cache_path(self) -> str | None:
        if self.cache_dir is None:
            return None
        real = os.path.realpath(self.root).encode("utf-8", "surrogateescape")
        leaf = "" if self.root == "." else os.path.basename(self.root)  # as `Path.name`
        name = "".join(c if c.isalnum() or c in "._-" else "_" for c in leaf)[:64] or "root"
        return os.path.join(self.cache_dir, f"{name}-{zlib.crc32(real):08x}{zlib.adler32(real):08x}{SUFFIX}")

    def _load_cache(self) -> dict[str, tuple[_Stat, ObjectIdentity | None]]:
        path = self.cache_path()
        if path is None:
            return {}
        try:
            with open(path, encoding="utf-8") as f:
                document = json.loads(f.read())
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            log.info("rebuilding store index %s: %s", path, exc)
            return {}
        try:
            if document["format"] != FORMAT or document["version"] != VERSION:
                return {}
            if document["root"] != os.path.realpath(self.root):
                return {}  # two roots with one hash: not ours
            out: dict[str, tuple[_Stat, ObjectIdentity | None]] = {}
            for relative, size, mtime_ns, header in document["files"]:
                identity = None if header is None else ObjectIdentity(*(str(part) for part in header))
                out[str(relative)] = ((int(size), int(mtime_ns)), identity)
            return out
        except (KeyError, TypeError, ValueError) as exc:
            log.info("rebuilding store index %s: %s", path, exc)
            return {}

    def _store_cache(self, entries: dict[str, tuple[_Stat, ObjectIdentity | None]]) -> None:
        path = self.cache_path()
        if path is None:
            return
        files = [
            [
                relative,
                size,
                mtime_ns,
                None
                if identity is None
                else [identity.debug_file, identity.debug_id, identity.code_file, identity.code_id],
            ]
            for relative, ((size, mtime_ns), identity) in sorted(entries.items())
        ]
        document = {"format": FORMAT, "version": VERSION, "root": os.path.realpath(self.root), "files": files}
        error = write_atomically(path, json.dumps(document, separators=(",", ":")).encode("utf-8"))
        if error is not None:
            log.info("cannot write store index %s: %s", path, error)
