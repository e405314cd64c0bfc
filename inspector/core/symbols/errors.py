"""Errors of the symbol package, all under `SymbolError`.

Only a few things raise: opening a `.sym` file that cannot be read at all, and
an index cache that fails validation (the cache layer catches those and
rebuilds). A damaged *line* never raises: it is counted in the file's
`DamageReport` and skipped.
"""

from __future__ import annotations

from inspector.core.errors import SymbolError


class SymbolFileUnreadable(SymbolError):
    """The `.sym` file could not be opened or mapped (missing, permissions, I/O error)."""

    code = "SymbolFileUnreadable"

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"cannot read symbol file {path}: {reason}")
        self.path = path
        self.reason = reason


class IndexCacheError(SymbolError):
    """An on-disk symbol index is unusable; the caller rebuilds it from the `.sym` file."""

    code = "IndexCacheError"


class WrongMagic(IndexCacheError):
    code = "WrongMagic"


class WrongVersion(IndexCacheError):
    code = "WrongVersion"


class WrongEndianness(IndexCacheError):
    code = "WrongEndianness"


class IdentityMismatch(IndexCacheError):
    """The cache was built from another file, or the file changed since (size, mtime, MODULE line)."""

    code = "IdentityMismatch"


class ChecksumMismatch(IndexCacheError):
    code = "ChecksumMismatch"


class MalformedIndex(IndexCacheError):
    """Sizes, section table, bounds or ordering are inconsistent."""

    code = "MalformedIndex"
