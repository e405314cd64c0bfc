"""What a microdump says beyond a minidump's streams, and the microdump's views of the streams.

`MicrodumpInfo` (with `GpuInfo` and `FreeSpace`): the G, H, P and O lines' facts and where in
the log the microdump is. `MicrodumpSystemInfo`: a system info whose strings are the O line's
words. `MicrodumpModuleList`: the modules with Breakpad's microdump range map (truncate-upper
on Android, exclusive ranges elsewhere) and no main module. Read by `dump.Microdump`.
"""

from __future__ import annotations

from bisect import bisect_left

from inspector.core.minidump.modules import Module, ModuleList
from inspector.core.minidump.system import SystemInfo
from inspector.core.record import Record


class GpuInfo(Record):
    """The G line: GL version, vendor and renderer ('' each when the writer did not know)."""

    version: str = ""
    vendor: str = ""
    renderer: str = ""

    @property
    def known(self) -> bool:
        return bool(self.version or self.vendor or self.renderer)


class FreeSpace(Record):
    """The H line: free address space between the lowest mapping and the stack (32-bit writers)."""

    low: int
    high: int
    hole_count: int
    largest_hole: int
    hole_sum: int
    histogram: tuple[tuple[int, int], ...]


class MicrodumpInfo(Record):
    """What a microdump says beyond a minidump's streams, and where in the log it is.

    `index` / `count`: which of the log's microdumps this is (0-based) and how many the log
    holds; `first_line` / `last_line` its lines; `complete`: it has its END line.
    """

    index: int
    count: int
    first_line: int
    last_line: int
    complete: bool
    process_id: int | None
    product: str | None
    process_type: str | None
    os_id: str | None
    hardware_arch: str | None
    gpu: GpuInfo
    signal: int | None
    signal_name: str | None
    free_space: FreeSpace | None
    stack_pointer: int | None  # from the S 0 line
    stack_start: int | None
    stack_size: int | None


class MicrodumpSystemInfo(SystemInfo):
    """A system info whose strings are the O line's words, as Breakpad prints them."""

    os_text: str = ""
    version_text: str = ""
    arch_text: str = ""

    @property
    def os_name(self) -> str:
        return self.os_text

    @property
    def os_parts(self) -> tuple[str, str | None]:
        return self.version_text, None

    @property
    def cpu_arch(self) -> str:
        return self.arch_text

    @property
    def cpu_info(self) -> str | None:
        return None


class MicrodumpModuleList(ModuleList):
    """Modules with Breakpad's microdump range map: truncate-upper on Android, else exclusive ranges.

    Modules are stored in line order. With `shrink`, a module overlapping one stored before
    keeps only the part above it (or, when it lies below, the earlier one loses its part
    below the new one's end), as Breakpad's `RangeMap` with `kTruncateUpper`; without, a
    module overlapping one stored before is left out of lookups. No module is the main one.
    """

    shrink: bool = False

    def __post_init__(self) -> None:
        highs: list[int] = []
        ranges: list[tuple[int, int]] = []  # parallel to highs: (effective base, module index)
        for index, module in enumerate(self.modules):
            _store_range(highs, ranges, module.base, module.size, index, shrink=self.shrink)
        object.__setattr__(self, "_starts", [base for base, _ in ranges])
        object.__setattr__(self, "_ends", highs)
        object.__setattr__(self, "_order", [index for _, index in ranges])

    def lookup_ranges(self) -> dict[int, tuple[int, int]]:
        """Module index -> the (first, last) addresses lookups give it; modules left out are absent."""
        return {
            index: (start, end)
            for start, end, index in zip(self._starts, self._ends, self._order, strict=True)
        }

    @property
    def main_module_index(self) -> int | None:
        return None

    @property
    def main_module(self) -> Module | None:
        return None


def _store_range(
    highs: list[int], ranges: list[tuple[int, int]], base: int, size: int, index: int, *, shrink: bool
) -> bool:
    """Breakpad's `RangeMap::StoreRange` with `kTruncateUpper` (`shrink`) or `kExclusiveRanges`.

    `highs` are the stored ranges' inclusive ends, sorted; `ranges` their (base, index).
    Each retry removes one overlap, so the loop ends after at most as many rounds as ranges.
    """
    while True:
        if size <= 0 or base + size - 1 >= 1 << 64:
            return False
        high = base + size - 1
        at_base = bisect_left(highs, base)  # the first stored range ending at or above base
        at_high = bisect_left(highs, high)
        if at_base != at_high:  # a stored range ends inside this one: this one loses its lower part
            if not shrink:
                return False
            cut = highs[at_base] - base + 1
            base, size = base + cut, size - cut
            continue
        if at_high < len(highs) and ranges[at_high][0] <= high:  # a stored range overlaps the top
            if shrink and highs[at_high] > high:
                ranges[at_high] = (high + 1, ranges[at_high][1])  # that one loses its lower part
                continue
            return False
        highs.insert(at_high, high)
        ranges.insert(at_high, (base, index))
        return True
