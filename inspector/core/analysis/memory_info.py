"""What the process could do with each address: rust-minidump 0.25's `UnifiedMemoryInfoList`.

The Windows MemoryInfoList stream when the dump has one, else Linux's /proc/self/maps
(`UnifiedMemoryInfoList::new`). Lookups reproduce rust-minidump's range map exactly,
including two of its quirks that change which addresses count as mapped:

* a maps line's end address is taken as *inclusive* (`MinidumpLinuxMapInfo::memory_range`),
  so `400000-401000` covers 0x401000 too;
* ranges are sorted and a range that starts at or before the end of the last one kept is
  dropped (`IntoRangeMapSafe`); with the inclusive ends, the second of two touching
  mappings is therefore dropped, the third kept, and so on.

The bit-flip and guard-page rules and the access-violation inconsistency read this map, so
they see what rust-minidump sees.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Sequence

from inspector.core.minidump.memory_lists import MemoryInfoList
from inspector.core.record import record

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (inspector.core.lazy)
if TYPE_CHECKING:
    from inspector.core.minidump.linux import LinuxMaps

GUARD_MEMORY_MAX_SIZE = 2 << 14  # rust-minidump: a likely guard page spans less than 32 KiB
_U64 = (1 << 64) - 1


@record
class RegionInfo:
    """One region: [start, last] inclusive, and what it allows."""

    start: int
    last: int
    readable: bool
    writable: bool
    executable: bool

    @property
    def accessible(self) -> bool:
        return self.readable or self.writable or self.executable


class MemoryInfoMap:
    """The regions rust-minidump's range map keeps, sorted by address."""

    __slots__ = ("_regions", "_starts")

    def __init__(self, regions: Iterable[RegionInfo] = ()) -> None:
        kept: list[RegionInfo] = []
        for region in sorted(regions, key=lambda r: (r.start, r.last)):
            if kept and region.start <= kept[-1].last:
                continue  # overlaps the last one kept (values always differ: each is its own entry)
            kept.append(region)
        self._regions = kept
        self._starts = [r.start for r in kept]

    @classmethod
    def from_dump(cls, info_list: MemoryInfoList | None, maps: LinuxMaps | None) -> MemoryInfoMap:
        """The map rust-minidump builds: the info list if there is one, else the Linux maps, else empty."""
        if info_list is not None:
            return cls(
                RegionInfo(
                    e.base_address,
                    e.base_address + e.region_size - 1,
                    e.is_readable,
                    e.is_writable,
                    e.is_executable,
                )
                for e in info_list.entries
                if e.region_size and e.base_address + e.region_size - 1 <= _U64
            )
        if maps is not None and maps.mappings is not None:
            return cls(
                RegionInfo(m.start, m.end, m.is_readable, m.is_writable, m.is_executable)
                for m in maps.mappings
                if m.start <= m.end
            )
        return cls()

    @property
    def regions(self) -> Sequence[RegionInfo]:
        return self._regions

    def __bool__(self) -> bool:
        return bool(self._regions)

    def at(self, address: int) -> RegionInfo | None:
        i = bisect_right(self._starts, address) - 1
        if i < 0:
            return None
        region = self._regions[i]
        return region if address <= region.last else None

    def is_likely_guard_page(self, address: int) -> bool:
        """rust-minidump's guard-page rule: the address is in a region with no access, smaller than
        32 KiB, right next to an accessible region (the one ending just before it, or the first one
        after it starting right after it)."""
        region = self.at(address)
        if region is None or region.accessible or region.last - region.start >= GUARD_MEMORY_MAX_SIZE:
            return False
        for other in self._regions:
            # Adjacency is tested with `end + 1` on inclusive ends, as rust-minidump does.
            if (other.last + 1) & _U64 == region.start and other.accessible:
                return True
            if (region.last + 1) & _U64 == other.start:
                return other.accessible
        return False
