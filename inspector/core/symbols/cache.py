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
"""

from __future__ import annotations

import collections
import contextlib
import mmap
import os
import sys
import threading
import zlib
from pathlib import Path

from inspector.core.logs import get_logger
from inspector.core.symbols.errors import IndexCacheError
from inspector.core.symbols.index_format import IndexImage, SymbolIdentity

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (inspector.core.lazy)
if TYPE_CHECKING:
    from typing import Any

log = get_logger(__name__)

SUFFIX = ".symidx"
#: The application name of our user folders (platformdirs' `appname`).
APP_NAME = "crash-inspector"


def user_cache_directory() -> Path:
    """`platformdirs.user_cache_dir("crash-inspector")`: where our indexes and downloads live.

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
            return Path(xdg, APP_NAME)
        if os.path.isabs(home):
            return Path(home, ".cache", APP_NAME)
    import platformdirs

    return Path(platformdirs.user_cache_dir(APP_NAME))


def default_cache_directory() -> Path:
    """`user_cache_directory()/symbol-index`."""
    return user_cache_directory() / "symbol-index"


def default_download_directory() -> Path:
    """`user_cache_directory()/symbols`: downloaded symbol files."""
    return user_cache_directory() / "symbols"


def write_atomically(path: Path, data: Any) -> OSError | None:
    """Write `data` (bytes-like) to a temporary file beside `path` and rename it over `path`.

    A reader never sees half a file and concurrent writers do not corrupt each other.
    Returns the error instead of raising it: every caller goes on without its cache.
    """
    import tempfile  # only the cold path writes

    tmp_name = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=".tmp-", suffix=path.suffix, dir=path.parent)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp_name, path)
        tmp_name = None
    except OSError as exc:
        return exc
    finally:
        if tmp_name is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp_name)
    return None


class IndexCache:
    """A directory of symbol indexes; `None` as directory means "no cache"."""

    def __init__(self, directory: str | os.PathLike[str] | None) -> None:
        self.directory = None if directory is None else Path(directory)
        self._warned = False
        self._lock = threading.Lock()
        #: what happened on recent loads and stores (newest last), for status displays and tests
        self.events: collections.deque[str] = collections.deque(maxlen=64)

    @classmethod
    def default(cls) -> IndexCache:
        return cls(default_cache_directory())

    @property
    def enabled(self) -> bool:
        return self.directory is not None

    def path_for(self, identity: SymbolIdentity) -> Path | None:
        if self.directory is None:
            return None
        raw = identity.encoded_path()
        leaf = "".join(c if c.isalnum() or c in "._-" else "_" for c in os.path.basename(identity.path))[:64]
        return self.directory / f"{leaf}-{zlib.crc32(raw):08x}{zlib.adler32(raw):08x}{SUFFIX}"

    def load(self, identity: SymbolIdentity) -> IndexImage | None:
        """A validated index for the `.sym` file, or None (absent, stale or damaged: rebuild it)."""
        path = self.path_for(identity)
        if path is None:
            return None
        try:
            with open(path, "rb") as f:
                size = os.fstat(f.fileno()).st_size
                if size == 0:
                    self._event("empty cache entry")
                    return None
                mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        except FileNotFoundError:
            self._event("no cache entry")
            return None
        except OSError as exc:
            self._warn(f"cannot read symbol index cache {path}: {exc}")
            return None
        try:
            image = IndexImage(mapped, identity, owner=mapped)
        except IndexCacheError as exc:
            self._event(f"cache entry rejected: {exc.code}: {exc}")
            log.info("rebuilding symbol index %s: %s", path, exc)
            mapped.close()
            return None
        if hasattr(mmap, "MADV_DONTNEED"):
            # validation touched every page; lookups will touch only a few of them again
            with contextlib.suppress(OSError):
                mapped.madvise(mmap.MADV_DONTNEED)
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

    def _warn(self, message: str) -> None:
        self._event(message)
        with self._lock:
            if self._warned:
                log.debug("%s", message)
                return
            self._warned = True
        log.warning("%s (continuing without the symbol index cache)", message)
