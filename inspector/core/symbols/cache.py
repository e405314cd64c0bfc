"""The on-disk store of symbol indexes (one file per `.sym` path).

`IndexCache(directory)` keeps `<directory>/<leaf name>-<64-bit hash of the .sym's real path>.symidx`.
An entry is used only when it validates completely against the `.sym` file
as it is now (`IndexImage`: magic, version, byte order, identity = real path
+ size + mtime_ns + first line, sizes, checksum, section bounds); otherwise it
is rebuilt and replaced. Entries are written to a temporary file in the same
directory and renamed over the old one, so a reader never sees half a file and
concurrent writers do not corrupt each other.

Every I/O failure (read-only or missing directory, disk full, permissions)
turns the cache off for that operation with one logged warning per cache
instance: symbols still load, only slower next time.

A process that opens many dumps (a batch, the GUI) opens the same `.sym` files again and
again: small entries, once validated, are kept in memory for the whole process (`_KEPT`,
bounded) and used again while the entry file is the same one (device, inode, size, mtime),
the `.sym` file has the identity it was validated for, and the entry had settled (was older
than `SETTLED_NS`) when it was kept — so that a change made in the same clock tick as the
entry's last write cannot go unseen. A kept image is shared read-only by every `SymbolFile`
that opens it (closing one leaves it to the others) and is held in memory in full, where a
mapped one holds only the pages lookups touched: `KEEP_TOTAL_BYTES` bounds the cache, and an
image dropped from it lives on only while a file still uses it.

The other caches the symbol side keeps for the process (where a module's file is, its files on
this machine, a `.sym` file's identity by path) use the helpers here: `settled`, and witnesses of
the files and folders an answer depended on (`present_witness`, `absence_witness` — a missing
file is witnessed by the folder that would hold it — and `witnesses_hold`).
"""

from __future__ import annotations

import _thread
import mmap
import os
import sys
import time
import zlib

from inspector.core.logs import get_logger
from inspector.core.memo import memo
from inspector.core.symbols.errors import IndexCacheError
from inspector.core.symbols.index_format import IndexImage, SymbolIdentity
from inspector.core.types import path_text

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (inspector.core.lazy)
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

log = get_logger(__name__)

SUFFIX = ".symidx"
#: The application name of our user folders (platformdirs' `appname`).
APP_NAME = "crash-inspector"
#: entries up to this size are read into memory and kept for the process; larger ones are mapped
#: for each file that uses them, as are entries written a moment ago
KEEP_MAX_BYTES = 1 << 20
#: the most bytes of entries kept at once (the least recently used go first)
KEEP_TOTAL_BYTES = 32 << 20
#: how old a file's modification time must be before its state is trusted by (size, mtime): a
#: later change then gets another mtime even on file systems with a 2-second resolution (FAT)
SETTLED_NS = 2_000_000_000


def settled(mtime_ns: int) -> bool:
    """The file was last changed long enough ago that any further change will show in its mtime."""
    return time.time_ns() - mtime_ns > SETTLED_NS


#: A path and its (device, inode, size, mtime): while `os.stat` says the same, an answer that
#: depended on what the path was (a file's text, a folder's entries) still holds
Witness = tuple[str, tuple[int, int, int, int]]


def _file_key(st: os.stat_result) -> tuple[int, int, int, int]:
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


def present_witness(path: str) -> Witness | None:
    """The witness of a file or folder as it is now; None when it is missing, or changed so recently
    that a further change might not show in its modification time (`settled`)."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (path, _file_key(st)) if settled(st.st_mtime_ns) else None


def absence_witness(path: str) -> Witness | None:
    """The witness that `path` does not exist: the deepest folder on the way to it that exists and has
    no entry for the next step (creating one changes the folder's modification time). None when
    `path` exists, when an entry is in the way (a dangling symbolic link, a file where a folder
    would be) or the folder cannot be read, or when the folder has not `settled`."""
    head, tail = os.path.split(path)
    while tail:
        folder = head or os.curdir
        try:
            st = os.stat(folder)
        except (FileNotFoundError, NotADirectoryError):
            head, tail = os.path.split(head)
            continue
        except (OSError, ValueError):
            return None
        try:
            os.lstat(os.path.join(folder, tail))
            return None  # something is there
        except FileNotFoundError:
            pass
        except (OSError, ValueError):
            return None
        return (folder, _file_key(st)) if settled(st.st_mtime_ns) else None
    return None


def witnesses_hold(witnesses: tuple[Witness, ...]) -> bool:
    """Every witnessed file and folder is as it was."""
    try:
        for path, key in witnesses:
            if _file_key(os.stat(path)) != key:
                return False
    except (OSError, ValueError):
        return False
    return True


class KeptAnswers:
    """Answers that depended on files and folders, kept for the process while their witnesses hold
    (`witnesses_hold`): every dump of a batch asks where the same modules' files are.

    An answer is kept from the second time its question is asked (`asked_before`): working out
    its witnesses (a `stat` of each path, and of the folders above a missing one) costs about
    what the answer did, and most questions of one dump are not asked again.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit  # answers kept at most (the oldest goes first), and questions remembered
        self._lock = _thread.allocate_lock()
        self._answers: dict[object, tuple[Any, tuple[Witness, ...]]] = {}
        self._asked: set[object] = set()

    def get(self, key: object) -> Any:
        """The answer kept for `key` while what it depended on is unchanged, else None."""
        known = self._answers.get(key)
        return known[0] if known is not None and witnesses_hold(known[1]) else None

    def asked_before(self, key: object) -> bool:
        """Whether `key` was asked before (its answer is worth keeping); remembers that it is now."""
        with self._lock:
            if key in self._asked or key in self._answers:
                return True
            if len(self._asked) >= self.limit:
                self._asked.clear()
            self._asked.add(key)
            return False

    def keep(self, key: object, answer: Any, witnesses: tuple[Witness, ...]) -> None:
        with self._lock:
            self._answers.pop(key, None)
            while len(self._answers) >= self.limit:
                del self._answers[next(iter(self._answers))]
            self._answers[key] = (answer, witnesses)
            self._asked.discard(key)


class _KeptImages:
    """Validated index images by entry path, for the whole process (see the module docstring)."""

    def __init__(self) -> None:
        self._lock = _thread.allocate_lock()
        #: path -> (the entry's (st_dev, st_ino, st_size, st_mtime_ns), the `.sym` identity, the
        #: image); insertion order is use order
        self._images: dict[str, tuple[tuple[int, int, int, int], SymbolIdentity, IndexImage]] = {}
        self.bytes = 0

    def __len__(self) -> int:
        return len(self._images)

    def get(self, path: str, identity: SymbolIdentity) -> IndexImage | None:
        """The image kept for this entry, while the entry and the `.sym` file are what it was made from."""
        with self._lock:
            kept = self._images.get(path)
        if kept is None:
            return None
        try:
            st = os.stat(path)
        except OSError:
            return None
        if _file_key(st) != kept[0] or kept[1] != identity:
            return None
        with self._lock:
            if self._images.get(path) is kept:
                self._images[path] = self._images.pop(path)  # the most recently used
        return kept[2]

    def keep(self, path: str, st: os.stat_result, identity: SymbolIdentity, image: IndexImage) -> None:
        with self._lock:
            old = self._images.pop(path, None)
            if old is not None:
                self.bytes -= old[0][2]
            while self._images and self.bytes + st.st_size > KEEP_TOTAL_BYTES:
                # the least recently used; files that use it keep it alive until they are closed
                self.bytes -= self._images.pop(next(iter(self._images)))[0][2]
            self._images[path] = (_file_key(st), identity, image)
            self.bytes += st.st_size


@memo(4096)  # every dump of a batch opens the same files
def _entry_name(path: str) -> str:
    """The name of the index entry of the `.sym` file at `path` (a real path)."""
    raw = path.encode("utf-8", "surrogateescape")
    leaf = "".join(c if c.isalnum() or c in "._-" else "_" for c in os.path.basename(path))[:64]
    return f"{leaf}-{zlib.crc32(raw):08x}{zlib.adler32(raw):08x}{SUFFIX}"


_KEPT = _KeptImages()


def user_cache_directory() -> Path:
    """`platformdirs.user_cache_dir("crash-inspector")`: where our indexes and downloads live."""
    from pathlib import Path  # the GUI's folders; the engine uses `_user_cache_text`

    return Path(_user_cache_text())


def _user_cache_text() -> str:
    """`user_cache_directory()` as a string.

    On Linux and the BSDs with an absolute `$XDG_CACHE_HOME` or `$HOME` (nearly always) the folder
    is decided here by platformdirs' own XDG rule: importing platformdirs (with tempfile, shutil,
    random, bz2 and lzma) cost a headless `stackwalk` process about a quarter of its engine import.
    Every other case (macOS, Windows, Android, unusual environments) is platformdirs'.
    """
    android = hasattr(sys, "getandroidapilevel") or os.environ.get("ANDROID_DATA") == "/data"
    if sys.platform.startswith(("linux", "freebsd", "openbsd", "netbsd")) and not android:
        xdg = os.environ.get("XDG_CACHE_HOME", "")
        home = os.environ.get("HOME", "")
        if os.path.isabs(xdg):
            return path_text(os.path.join(xdg, APP_NAME))
        if os.path.isabs(home):
            return path_text(os.path.join(home, ".cache", APP_NAME))
    import platformdirs

    return path_text(platformdirs.user_cache_dir(APP_NAME))


def default_cache_directory() -> Path:
    """`user_cache_directory()/symbol-index`."""
    return user_cache_directory() / "symbol-index"


def default_download_directory() -> Path:
    """`user_cache_directory()/symbols`: downloaded symbol files."""
    return user_cache_directory() / "symbols"


def write_atomically(path: str, data: Any) -> OSError | None:
    """Write `data` (bytes-like) to a temporary file beside `path` and rename it over `path`.

    A reader never sees half a file and concurrent writers do not corrupt each other.
    Returns the error instead of raising it: every caller goes on without its cache.
    """
    import tempfile  # only the cold path writes

    tmp_name = None
    try:
        folder = os.path.dirname(path)
        os.makedirs(folder, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=".tmp-", suffix=os.path.splitext(path)[1], dir=folder)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp_name, path)
        tmp_name = None
    except OSError as exc:
        return exc
    finally:
        if tmp_name is not None:
            try:
                os.unlink(tmp_name)
            except OSError:
                pass
    return None


#: how many of its latest events an `IndexCache` keeps
_KEPT_EVENTS = 64


class IndexCache:
    """A directory of symbol indexes; `None` as directory means "no cache"."""

    def __init__(self, directory: str | os.PathLike[str] | None) -> None:
        self.directory = None if directory is None else path_text(directory)
        self._warned = False
        self._lock = _thread.allocate_lock()
        #: what happened on recent loads and stores (newest last), for status displays and tests
        self.events: list[str] = []

    @classmethod
    def default(cls) -> IndexCache:
        return cls(os.path.join(_user_cache_text(), "symbol-index"))

    @property
    def enabled(self) -> bool:
        return self.directory is not None

    def path_for(self, identity: SymbolIdentity) -> str | None:
        if self.directory is None:
            return None
        return os.path.join(self.directory, _entry_name(identity.path))

    def load(self, identity: SymbolIdentity) -> IndexImage | None:
        """A validated index for the `.sym` file, or None (absent, stale or damaged: rebuild it)."""
        path = self.path_for(identity)
        if path is None:
            return None
        image = _KEPT.get(path, identity)
        if image is not None:
            self._event("loaded from cache")
            return image
        mapped = None
        data: bytes | mmap.mmap
        try:
            with open(path, "rb") as f:
                st = os.fstat(f.fileno())
                if st.st_size == 0:
                    self._event("empty cache entry")
                    return None
                # kept: read into memory (a mapping would hold a descriptor, and on Windows stop the
                # entry from being replaced); else mapped, so that only the pages lookups touch stay
                keep = st.st_size <= KEEP_MAX_BYTES and settled(st.st_mtime_ns)
                if keep:
                    data = f.read()
                else:
                    data = mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        except FileNotFoundError:
            self._event("no cache entry")
            return None
        except OSError as exc:
            self._warn(f"cannot read symbol index cache {path}: {exc}")
            return None
        try:
            image = IndexImage(data, identity, owner=mapped, shared=keep)
        except IndexCacheError as exc:
            self._event(f"cache entry rejected: {exc.code}: {exc}")
            log.info("rebuilding symbol index %s: %s", path, exc)
            if mapped is not None:
                mapped.close()
            return None
        if keep:
            _KEPT.keep(path, st, identity, image)
        elif mapped is not None and hasattr(mmap, "MADV_DONTNEED"):
            # validation touched every page; lookups will touch only a few of them again
            try:
                mapped.madvise(mmap.MADV_DONTNEED)
            except OSError:
                pass
        self._event("loaded from cache")
        return image

    def store(self, identity: SymbolIdentity, image: Any) -> bool:
        """Write an index image atomically; False (with a warning) when the cache cannot be written."""
        path = self.path_for(identity)
        if path is None:
            return False
        error = write_atomically(path, image)
        if error is not None:
            self._warn(f"cannot write symbol index cache {path}: {error}")
            return False
        self._event("stored")
        return True

    @property
    def last_event(self) -> str:
        return self.events[-1] if self.events else ""

    def _event(self, message: str) -> None:
        self.events.append(message)
        if len(self.events) > _KEPT_EVENTS:
            del self.events[0]

    def _warn(self, message: str) -> None:
        self._event(message)
        with self._lock:
            if self._warned:
                log.debug("%s", message)
                return
            self._warned = True
        log.warning("%s (continuing without the symbol index cache)", message)
