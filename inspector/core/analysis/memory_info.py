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
from operator import itemgetter

from inspector.core.minidump.memory_lists import MemoryInfoList
from inspector.core.record import Record

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (inspector.core.lazy)
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import Protocol, TypeVar

    T = TypeVar("T")

    from inspector.core.minidump.linux import LinuxMaps

    class _Permissions(Protocol):
        """What a region's source says it allows (a MemoryInfo, a LinuxMapping, a RegionInfo)."""

        @property
        def is_readable(self) -> bool: ...
        @property
        def is_writable(self) -> bool: ...
        @property
        def is_executable(self) -> bool: ...


GUARD_MEMORY_MAX_SIZE = 2 << 14  # rust-minidump: a likely guard page spans less than 32 KiB
_U64 = (1 << 64) - 1


class RegionInfo(Record):
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
    """The regions rust-minidump's range map keeps, sorted by address.

    Built for every crash analysed, from a list that can hold thousands of entries, of which a
    few are looked at: the entries are sorted and filtered as (start, last) spans, and a kept
    entry becomes a `RegionInfo` when a lookup returns it.
    """

    __slots__ = ("_lasts", "_made", "_sources", "_starts")

    def __init__(self, regions: Iterable[RegionInfo] = ()) -> None:
        self._starts, self._lasts, made = _kept([(r.start, r.last, r) for r in regions])
        self._made: list[RegionInfo | None] = list(made)
        self._sources: list[_Permissions] = []

    @classmethod
    def from_dump(cls, info_list: MemoryInfoList | None, maps: LinuxMaps | None) -> MemoryInfoMap:
        """The map rust-minidump builds: the info list if there is one, else the Linux maps, else empty."""
        memory = cls()
        spans: list[tuple[int, int, _Permissions]] = []
        if info_list is not None:
            spans = [
                (e.base_address, e.base_address + e.region_size - 1, e)
                for e in info_list.entries
                if e.region_size and e.base_address + e.region_size - 1 <= _U64
            ]
        elif maps is not None and maps.mappings is not None:
            spans = [(m.start, m.end, m) for m in maps.mappings if m.start <= m.end]
        memory._starts, memory._lasts, memory._sources = _kept(spans)
        memory._made = [None] * len(memory._sources)
        return memory

    def _region(self, i: int) -> RegionInfo:
        region = self._made[i]
        if region is None:
            source = self._sources[i]
            region = RegionInfo(
                self._starts[i], self._lasts[i], source.is_readable, source.is_writable, source.is_executable
            )
            self._made[i] = region
        return region

    @property
    def regions(self) -> Sequence[RegionInfo]:
        return [self._region(i) for i in range(len(self._starts))]

    def __bool__(self) -> bool:
        return bool(self._starts)

    def at(self, address: int) -> RegionInfo | None:
        i = bisect_right(self._starts, address) - 1
        if i < 0 or address > self._lasts[i]:
            return None
        return self._region(i)

    def is_likely_guard_page(self, address: int) -> bool:
        """rust-minidump's guard-page rule: the address is in a region with no access, smaller than
        32 KiB, right next to an accessible region (the one ending just before it, or the first one
        after it starting right after it)."""
        region = self.at(address)
        if region is None or region.accessible or region.last - region.start >= GUARD_MEMORY_MAX_SIZE:
            return False
        for i, (start, last) in enumerate(zip(self._starts, self._lasts, strict=True)):
            # Adjacency is tested with `end + 1` on inclusive ends, as rust-minidump does.
            if (last + 1) & _U64 == region.start and self._region(i).accessible:
                return True
            if (region.last + 1) & _U64 == start:
                return self._region(i).accessible
        return False


def _kept(spans: list[tuple[int, int, T]]) -> tuple[list[int], list[int], list[T]]:
    """rust-minidump's range map of (start, last, what) spans: sorted, and a span overlapping the
    last one kept dropped (values always differ: each is its own entry). Starts, lasts, whats."""
    spans.sort(key=_START_LAST)  # stable: of two equal spans the first listed is kept
    starts: list[int] = []
    lasts: list[int] = []
    kept: list[T] = []
    for start, last, what in spans:
        if lasts and start <= lasts[-1]:
            continue
        starts.append(start)
        lasts.append(last)
        kept.append(what)
    return starts, lasts, kept


_START_LAST = itemgetter(0, 1)
