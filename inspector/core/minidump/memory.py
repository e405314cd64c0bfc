"""Memory captured in the dump: regions (views into the file, never copied) and a lookup over all of them.

`MemoryRegion.read*` answer None unless the whole read lies inside the
region; `MemoryView` finds the region for an address by binary search over
the region starts and reads inside that one region (a read that would cross
into a neighbouring region is None, as in rust-minidump, whose walker reads
one region at a time). Integers are read in the dump's byte order (little
endian for every real dump).
"""

from __future__ import annotations

import struct
from bisect import bisect_right

from inspector.core.record import Record, field

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (inspector.core.lazy)
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Sequence

_U8 = struct.Struct("<B").unpack_from
_LE = {
    2: struct.Struct("<H").unpack_from,
    4: struct.Struct("<I").unpack_from,
    8: struct.Struct("<Q").unpack_from,
}
_BE = {
    2: struct.Struct(">H").unpack_from,
    4: struct.Struct(">I").unpack_from,
    8: struct.Struct(">Q").unpack_from,
}


class MemoryRegion(Record, eq=False):
    """`size` bytes of the process's memory starting at `base`, as a view into the dump file.

    `rva` is the file offset of the bytes; `data` never holds more than the
    file has (a Memory64 region cut off by the end of the file is shorter
    than its descriptor says).
    """

    base: int
    size: int
    data: memoryview = field(repr=False)
    rva: int
    endian: str = "<"

    @property
    def end(self) -> int:
        """One past the last address."""
        return self.base + self.size

    def contains(self, address: int, size: int = 1) -> bool:
        return self.base <= address and address + size <= self.base + self.size

    def view(self, address: int, size: int) -> memoryview | None:
        """A zero-copy view of `size` bytes at `address`, or None if not fully inside."""
        offset = address - self.base
        if offset < 0 or size < 0 or offset + size > self.size:
            return None
        return self.data[offset : offset + size]

    def read(self, address: int, size: int) -> bytes | None:
        view = self.view(address, size)
        return None if view is None else bytes(view)

    def read_u8(self, address: int) -> int | None:
        offset = address - self.base
        if offset < 0 or offset >= self.size:
            return None
        value: int = _U8(self.data, offset)[0]
        return value

    def _read_int(self, address: int, width: int) -> int | None:
        offset = address - self.base
        if offset < 0 or offset + width > self.size:
            return None
        unpack = _LE[width] if self.endian == "<" else _BE[width]
        value: int = unpack(self.data, offset)[0]
        return value

    def read_u16(self, address: int) -> int | None:
        return self._read_int(address, 2)

    def read_u32(self, address: int) -> int | None:
        return self._read_int(address, 4)

    def read_u64(self, address: int) -> int | None:
        return self._read_int(address, 8)

    def read_pointer(self, address: int, width: int) -> int | None:
        """A 4- or 8-byte word (the CPU's pointer width)."""
        return self._read_int(address, width)


def _inclusive_range(region: MemoryRegion) -> tuple[int, int] | None:
    # rust-minidump: no range for an empty region or one that wraps past 2^64.
    if region.size == 0 or region.base + region.size > 1 << 64:
        return None
    return region.base, region.base + region.size - 1


def non_overlapping(regions: Iterable[MemoryRegion]) -> list[MemoryRegion]:
    """Regions sorted by address with rust-minidump's overlap rule applied.

    Sorted by (start, end); a region that starts at or before the end of the
    last kept region is dropped. Empty or wrapping regions are dropped.
    """
    ranged = []
    for i, region in enumerate(regions):
        r = _inclusive_range(region)
        if r is not None:
            ranged.append((r, i, region))
    ranged.sort(key=lambda item: (item[0], item[1]))
    kept: list[MemoryRegion] = []
    last_end = -1
    for (start, end), _, region in ranged:
        if kept and start <= last_end:
            continue
        kept.append(region)
        last_end = end
    return kept


class MemoryView:
    """Every memory region of the dump, for address lookups and reads."""

    __slots__ = ("_regions", "_starts")

    def __init__(self, regions: Iterable[MemoryRegion] = ()) -> None:
        self._regions = non_overlapping(regions)
        self._starts = [r.base for r in self._regions]

    @property
    def regions(self) -> Sequence[MemoryRegion]:
        """The regions, sorted by base address, without overlaps."""
        return self._regions

    def __len__(self) -> int:
        return len(self._regions)

    def __iter__(self) -> Iterator[MemoryRegion]:
        return iter(self._regions)

    def region_for(self, address: int) -> MemoryRegion | None:
        i = bisect_right(self._starts, address) - 1
        if i < 0:
            return None
        region = self._regions[i]
        return region if address < region.base + region.size else None

    def view(self, address: int, size: int) -> memoryview | None:
        region = self.region_for(address)
        return None if region is None else region.view(address, size)

    def read(self, address: int, size: int) -> bytes | None:
        region = self.region_for(address)
        return None if region is None else region.read(address, size)

    def read_u8(self, address: int) -> int | None:
        region = self.region_for(address)
        return None if region is None else region.read_u8(address)

    def read_u16(self, address: int) -> int | None:
        region = self.region_for(address)
        return None if region is None else region.read_u16(address)

    def read_u32(self, address: int) -> int | None:
        region = self.region_for(address)
        return None if region is None else region.read_u32(address)

    def read_u64(self, address: int) -> int | None:
        region = self.region_for(address)
        return None if region is None else region.read_u64(address)

    def read_pointer(self, address: int, width: int) -> int | None:
        region = self.region_for(address)
        return None if region is None else region.read_pointer(address, width)
