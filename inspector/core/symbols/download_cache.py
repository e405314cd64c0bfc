"""The on-disk store of downloaded symbol files, and of the lookups a server answered "not found".

Layout (a Breakpad symbol store, so the folder also works as a plain symbol path):

    <root>/<debug file leaf>/<DEBUG ID>/<name>.sym      by debug id
    <root>/<code file leaf>/<CODE ID>/<name>.sym        by code id (the fallback lookup)
    <root>/.partial/…                                   downloads in progress (same filesystem)
    <root>/.negative/<hash>                             "not on this server" answers, with their time

Every name in a path comes from the dump, so it is hostile until checked:
`unsafe_component_reason` rejects (never rewrites) empty names, `.`/`..`, both
separators, NUL and control characters, Windows' forbidden characters
(`<>:"|?*`, which also covers drive letters and alternate streams), trailing dots
and spaces (Windows drops them, so two names would meet), reserved device
names (`CON`, `nul.txt`, `COM1`, …), names longer than `MAX_COMPONENT_BYTES`,
and the cache's own folder names. On top of that, every path is checked to
resolve inside the root before anything is written.

A download is written to a temporary file under `.partial/` (or `partial_dir`,
`--symbols-tmp`; on another filesystem it is copied beside the target first) and
renamed into place only when complete, so another process (or the next walk) never
sees half a file. The URL it came from is appended as an `INFO URL <url>` line
(rust-minidump's convention), so a later cache hit still reports `symbol_url`.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from inspector.core.logs import get_logger
from inspector.core.record import Record

log = get_logger(__name__)

PARTIAL_DIR = ".partial"
#: beside a downloaded binary or debug file: the URL it came from
URL_SUFFIX = ".url"
NEGATIVE_DIR = ".negative"
#: NTFS and ext4 allow 255 per component; a little room is kept for the `.sym` and temporary suffixes.
MAX_COMPONENT_BYTES = 200
_FORBIDDEN = frozenset('<>:"|?*\\/')
_RESERVED = frozenset(
    {"CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$", "CLOCK$"}
    | {f"{dev}{n}" for dev in ("COM", "LPT") for n in (*"0123456789", "¹", "²", "³")}
)
_INTERNAL = frozenset({PARTIAL_DIR, NEGATIVE_DIR})


def unsafe_component_reason(name: str) -> str | None:
    """Why `name` cannot be one component of a cache path, or None when it can."""
    if not name:
        return "empty name"
    if name in (".", ".."):
        return f"the name is {name!r}"
    if "\x00" in name:
        return "NUL character in the name"
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in name):
        return "control character in the name"
    bad = next((c for c in name if c in _FORBIDDEN), None)
    if bad is not None:
        return f"{bad!r} in the name"
    try:
        size = len(name.encode("utf-8"))
    except UnicodeEncodeError:
        return "the name is not valid Unicode"
    if size > MAX_COMPONENT_BYTES:
        return f"name longer than {MAX_COMPONENT_BYTES} bytes"
    if name[-1] in ". ":
        return "the name ends with a dot or a space"
    if name.split(".", 1)[0].rstrip(" ").upper() in _RESERVED:
        return "reserved device name on Windows"
    if name.casefold() in _INTERNAL:
        return "the name of one of the cache's own folders"
    return None


class SymbolLookup(Record):
    """One way to ask for a module's file: the three path components and how they were made."""

    components: tuple[str, str, str]
    kind: str  # "debug id" or "code id"

    @property
    def relative(self) -> str:
        return "/".join(self.components)

    @property
    def unsafe_reason(self) -> str | None:
        for part in self.components:
            reason = unsafe_component_reason(part)
            if reason is not None:
                return f"{reason} ({part[:80]!r})"
        return None


class UnsafePath(ValueError):
    """A lookup would leave the cache folder (or names a path that cannot be created safely)."""


class DownloadCache:
    """A folder of downloaded `.sym` files plus the remembered "not found" answers."""

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        negative_ttl: float = 24 * 3600,
        partial_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        self.root = Path(root)
        self.negative_ttl = negative_ttl
        #: where downloads are written before the rename (minidump-stackwalk's `--symbols-tmp`)
        self.partial_dir = self.root / PARTIAL_DIR if partial_dir is None else Path(partial_dir)

    # ---- finding ---------------------------------------------------------------------------

    def path_for(self, lookup: SymbolLookup) -> Path:
        """Where the lookup's file lives in the cache; `UnsafePath` if any component is unsafe."""
        reason = lookup.unsafe_reason
        if reason is not None:
            raise UnsafePath(reason)
        return self.root.joinpath(*lookup.components)

    def find(self, lookup: SymbolLookup) -> Path | None:
        """The cached file for this lookup, or None (also for unsafe names: nothing to find)."""
        try:
            path = self.path_for(lookup)
        except UnsafePath:
            return None
        return path if path.is_file() else None

    # ---- storing ---------------------------------------------------------------------------

    @contextlib.contextmanager
    def writer(self, lookup: SymbolLookup) -> Iterator[PendingFile]:
        """A temporary file in the cache's filesystem; `commit` renames it into place.

        The temporary file is removed when the block exits without a commit
        (an exception, a cancelled or truncated download).
        """
        final = self._checked_target(lookup)
        self.partial_dir.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix="download-", suffix=".part", dir=self.partial_dir)
        handle = PendingFile(os.fdopen(fd, "w+b"), Path(name), final)
        try:
            yield handle
        finally:
            handle.discard()

    def commit(self, pending: PendingFile, url: str, *, object_file: bool = False) -> Path:
        """Append `INFO URL <url>` and rename the finished file into place (atomically).

        A binary or debug file (`object_file`) is kept as it came; its URL goes to `<file>.url`.
        """
        f = pending.file
        f.seek(0, os.SEEK_END)
        if object_file:
            pending.final.parent.mkdir(parents=True, exist_ok=True)
            self._check_inside(pending.final.parent)
            sidecar = pending.final.with_name(pending.final.name + URL_SUFFIX)
            sidecar.write_text(f"{_one_line(url)}\n", encoding="utf-8", errors="replace")
        elif f.tell() > 0:
            f.seek(-1, os.SEEK_END)
            if f.read(1) != b"\n":
                # rust-minidump appends straight after the body; a body without a final
                # newline would then lose its last line, so start a new one.
                f.write(b"\n")
        if not object_file:
            f.write(f"INFO URL {_one_line(url)}\n".encode())
        f.flush()
        with contextlib.suppress(OSError):
            os.fsync(f.fileno())
        f.close()
        pending.final.parent.mkdir(parents=True, exist_ok=True)
        self._check_inside(pending.final.parent)
        try:
            self._rename(pending.temp, pending.final)
        except PermissionError:
            # Windows: another process has the same file open; theirs is as good as ours.
            if not pending.final.is_file():
                raise
        pending.committed = True
        return pending.final

    def _rename(self, temp: Path, final: Path) -> None:
        try:
            os.replace(temp, final)
        except OSError as exc:
            if exc.errno != errno.EXDEV:
                raise
            # `--symbols-tmp` on another filesystem: copy next to the target first, so that the
            # file still appears whole or not at all
            own = self.root / PARTIAL_DIR
            own.mkdir(parents=True, exist_ok=True)
            fd, name = tempfile.mkstemp(prefix="download-", suffix=".part", dir=own)
            os.close(fd)
            try:
                shutil.copyfile(temp, name)
                os.replace(name, final)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(name)
                raise
            with contextlib.suppress(OSError):
                temp.unlink()

    def object_url(self, path: Path) -> str | None:
        """Where a cached binary or debug file was downloaded from (its `.url` file), if known."""
        try:
            return path.with_name(path.name + URL_SUFFIX).read_text(encoding="utf-8").strip() or None
        except OSError:
            return None

    def _checked_target(self, lookup: SymbolLookup) -> Path:
        final = self.path_for(lookup)
        self.root.mkdir(parents=True, exist_ok=True)
        self._check_inside(final.parent, must_exist=False)
        return final

    def _check_inside(self, path: Path, *, must_exist: bool = True) -> None:
        """Defence in depth: the path must resolve inside the root (a symlinked folder could lead out)."""
        root = os.path.realpath(self.root)
        target = os.path.realpath(path)
        if os.path.commonpath([root, target]) != root:
            raise UnsafePath(f"{path} resolves outside the symbol cache {self.root}")
        if must_exist and not os.path.isdir(target):
            raise UnsafePath(f"{path} is not a folder")

    # ---- negative answers -------------------------------------------------------------------

    def _negative_path(self, server: str, lookup: SymbolLookup) -> Path:
        # A digest as the name: the lookup's names are hostile, the digest is not.
        key = f"{server}\n{lookup.relative}".encode("utf-8", "surrogatepass")
        return self.root / NEGATIVE_DIR / hashlib.sha256(key).hexdigest()

    def recently_missing(self, server: str, lookup: SymbolLookup) -> bool:
        """True when `server` said "not found" for this lookup less than `negative_ttl` seconds ago."""
        if self.negative_ttl <= 0:
            return False
        try:
            age = time.time() - self._negative_path(server, lookup).stat().st_mtime
        except OSError:
            return False
        return 0 <= age < self.negative_ttl

    def remember_missing(self, server: str, lookup: SymbolLookup, url: str) -> None:
        if self.negative_ttl <= 0:
            return
        path = self._negative_path(server, lookup)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"{_one_line(url)}\n", encoding="utf-8", errors="replace")
        except OSError as exc:
            log.warning("cannot remember a missing symbol file in %s: %s", path.parent, exc)

    def clean_partials(self, older_than: float = 24 * 3600) -> None:
        """Remove temporary files a killed process left behind."""
        now = time.time()
        with contextlib.suppress(OSError):
            for entry in os.scandir(self.root / PARTIAL_DIR):
                with contextlib.suppress(OSError):
                    if now - entry.stat().st_mtime > older_than:
                        os.unlink(entry.path)


class PendingFile:
    """The temporary file a download is written to (`file`); committed or discarded by the cache."""

    def __init__(self, file: BinaryIO, temp: Path, final: Path) -> None:
        self.file = file
        self.temp = temp
        self.final = final
        self.committed = False

    def discard(self) -> None:
        if self.committed:
            return
        with contextlib.suppress(OSError):
            self.file.close()
        with contextlib.suppress(OSError):
            self.temp.unlink()


def _one_line(text: str) -> str:
    return "".join(c if c.isprintable() else f"%{ord(c) & 0xFF:02X}" for c in text)
