"""Read the tables of a SymCache (format version 9) that `symbolic` built from an object.

symbolic's Python API only *looks up* an address in a SymCache; it cannot list the functions,
their extents or the symbol-table entries, which the Breakpad records need (FUNC ranges for
`has_symbol_at` during stack scanning, PUBLIC symbols that extend to the next one, inline
records). The SymCache is a flat, documented table format (symbolic-symcache `raw/v9.rs`), so we
read its five arrays directly — this is a reader of symbolic's own cache file, not of DWARF or
PDB, which symbolic has already interpreted when it built the cache.

Layout (little-endian, each table aligned to 8 bytes from the start of the buffer):

    "SYMC"  u32 version (9)
    header  debug id (32 bytes), arch, #files, #functions, #source locations, #ranges,
            #string bytes (u32 each), 16 reserved bytes
    files             #files × (comp dir, directory, name, 3 source-server strings)  u32 × 6
    functions         #functions × (name, comp dir, entry pc, language)               u32 × 4
    source locations  #locations × (file, line, function, inlined into)              u32 × 4
                      (the call sites first; the last #ranges belong to the ranges, in order)
    ranges            #ranges × start address                                         u32
    strings           LEB128 length + UTF-8 bytes, referenced by offset

`u32::MAX` means "none". A range extends to the next range's start; the all-MAX source location
ends the range before it (the gap after a function).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from inspector.core.symbols.objects.errors import ObjectUnreadable

if TYPE_CHECKING:
    import numpy as np

MAGIC = b"SYMC"
SUPPORTED_VERSION = 9
NONE = 0xFFFF_FFFF
_HEADER = 72


def _align8(offset: int) -> int:
    return (offset + 7) & ~7


@dataclass(frozen=True, slots=True, eq=False)
class SymCacheTables:
    """The arrays of one SymCache (numpy, read-only views of the buffer)."""

    file_comp_dir: np.ndarray[Any, Any]
    file_directory: np.ndarray[Any, Any]
    file_name: np.ndarray[Any, Any]
    function_name: np.ndarray[Any, Any]
    function_entry: np.ndarray[Any, Any]
    function_language: np.ndarray[Any, Any]
    location_file: np.ndarray[Any, Any]
    location_line: np.ndarray[Any, Any]
    location_function: np.ndarray[Any, Any]
    location_inlined_into: np.ndarray[Any, Any]
    range_start: np.ndarray[Any, Any]
    strings: bytes

    @property
    def call_locations(self) -> int:
        """How many source locations are call sites (the rest belong to the ranges, one each)."""
        return len(self.location_file) - len(self.range_start)

    def string(self, offset: int) -> str | None:
        """The string at `offset`, or None (none, or out of bounds)."""
        if offset == NONE or offset >= len(self.strings):
            return None
        length = 0
        shift = 0
        i = offset
        data = self.strings
        while True:
            if i >= len(data) or shift > 28:
                return None
            byte = data[i]
            length |= (byte & 0x7F) << shift
            i += 1
            if byte < 0x80:
                break
            shift += 7
        if i + length > len(data):
            return None
        return data[i : i + length].decode("utf-8", "replace")

    def strings_at(self, offsets: np.ndarray[Any, Any]) -> list[str]:
        """The strings at many offsets at once ('' for none): a stripped library's 342K symbol
        names in one numpy pass and one slicing loop, where `string` per name costs seconds."""
        import numpy as np

        data = self.strings
        size = len(data)
        raw = np.frombuffer(data, dtype=np.uint8) if size else np.zeros(1, dtype=np.uint8)
        at = np.asarray(offsets, dtype=np.int64)
        valid = (at >= 0) & (at + 1 < size)
        safe = np.where(valid, at, 0)
        b0 = raw[safe].astype(np.int64)
        b1 = raw[np.minimum(safe + 1, max(size - 1, 0))].astype(np.int64)
        one = b0 < 0x80
        two = ~one & (b1 < 0x80)
        length = np.where(one, b0, (b0 & 0x7F) | (b1 << 7))
        start = safe + np.where(one, 1, 2)
        end = start + length
        ok = valid & (one | two) & (end <= size)
        out: list[str] = []
        append = out.append
        for s, e, good, offset in zip(start.tolist(), end.tolist(), ok.tolist(), at.tolist(), strict=True):
            if good:
                append(data[s:e].decode("utf-8", "replace"))
            else:  # a name of 16 KiB or more (3-byte length), or none: the slow way
                append(self.string(offset) or "")
        return out


def read_symcache(buffer: bytes, *, origin: str) -> SymCacheTables:
    """The tables of a version-9 SymCache; `ObjectUnreadable` (naming `origin`) when it is not one."""
    import numpy as np

    if len(buffer) < 8 + _HEADER or buffer[:4] != MAGIC:
        raise ObjectUnreadable(origin, "symbolic made no usable symbol cache (bad magic)")
    version = int.from_bytes(buffer[4:8], "little")
    if version != SUPPORTED_VERSION:
        raise ObjectUnreadable(
            origin,
            f"symbolic wrote a version {version} symbol cache; this version reads {SUPPORTED_VERSION} "
            "(install a symbolic release of the 13.x series)",
        )
    header = np.frombuffer(buffer, dtype="<u4", count=6, offset=8 + 32 + 4)
    n_files, n_functions, n_locations, n_ranges, n_strings = (int(x) for x in header[:5])
    offset = _align8(8 + _HEADER)

    def table(count: int, width: int) -> np.ndarray[Any, Any]:
        nonlocal offset
        size = count * width * 4
        if offset + size > len(buffer):
            raise ObjectUnreadable(origin, "symbol cache is shorter than its header says")
        array = np.frombuffer(buffer, dtype="<u4", count=count * width, offset=offset).reshape(count, width)
        offset = _align8(offset + size)
        return array

    files = table(n_files, 6)
    functions = table(n_functions, 4)
    locations = table(n_locations, 4)
    if n_ranges > n_locations:
        raise ObjectUnreadable(origin, "symbol cache has more ranges than source locations")
    ranges = table(n_ranges, 1)[:, 0]
    if offset + n_strings > len(buffer):
        raise ObjectUnreadable(origin, "symbol cache is shorter than its strings")
    strings = bytes(buffer[offset : offset + n_strings])
    return SymCacheTables(
        file_comp_dir=files[:, 0],
        file_directory=files[:, 1],
        file_name=files[:, 2],
        function_name=functions[:, 0],
        function_entry=functions[:, 2],
        function_language=functions[:, 3],
        location_file=locations[:, 0],
        location_line=locations[:, 1],
        location_function=locations[:, 2],
        location_inlined_into=locations[:, 3],
        range_start=ranges,
        strings=strings,
    )
