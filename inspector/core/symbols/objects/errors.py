"""Errors of reading binaries and debug files (objects), and the sizes of the files read at all."""

from __future__ import annotations

from inspector.core.symbols.errors import SymbolFileUnreadable

#: files smaller than this cannot be an object with anything useful in it
MIN_OBJECT_SIZE = 64
#: larger files are refused: the biggest real debug files (a browser's) are a few GiB, and a file
#: beyond this is more likely a sparse or damaged one that would only cost time and address space
MAX_OBJECT_SIZE = 8 << 30


class ObjectUnreadable(SymbolFileUnreadable):
    """An object (ELF, Mach-O, PE, PDB, …) could not be read, or gave nothing usable."""

    code = "ObjectUnreadable"

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(path, reason)
        self.args = (f"cannot read {path}: {reason}",)

    def __str__(self) -> str:
        return f"cannot read {self.path}: {self.reason}"


class ObjectSupportMissing(ObjectUnreadable):
    """The `symbolic` package is not installed (or has no wheel for this platform)."""

    code = "ObjectSupportMissing"
