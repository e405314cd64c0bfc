"""Errors of reading binaries and debug files (objects)."""

from __future__ import annotations

from inspector.core.symbols.errors import SymbolFileUnreadable


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
