"""MemoryList, Memory64List and MemoryInfoList streams."""

from __future__ import annotations

from inspector.core.minidump.errors import BadRva, StreamSizeMismatch
from inspector.core.minidump.memory import MemoryRegion
from inspector.core.minidump.reader import (
    StreamContext,
    fit_count,
    outside_problem,
    read_ex_list_header,
    read_list_header,
)
from inspector.core.record import Record

MEMORY_DESCRIPTOR_SIZE = 16
MEMORY_INFO_SIZE = 48

#: Known bits of MINIDUMP_MEMORY_INFO fields (rust-minidump drops the others before printing).
MEMORY_STATE_BITS = 0x13000
MEMORY_PROTECTION_BITS = 0x7FF
MEMORY_TYPE_BITS = 0x1060000

PAGE_READ_BITS = 0x02 | 0x04 | 0x20 | 0x40
PAGE_WRITE_BITS = 0x04 | 0x08 | 0x40 | 0x80
PAGE_EXECUTE_BITS = 0x10 | 0x20 | 0x40 | 0x80


class MemoryDescriptor(Record):
    """A MINIDUMP_MEMORY_DESCRIPTOR(64) as written (rva is None in a Memory64List)."""

    start: int
    data_size: int
    rva: int | None


class MemoryList(Record):
    """Regions of a MemoryList or Memory64List.

    `regions` are the usable ones, in file order; `descriptors` are all the
    entries read (a descriptor with RVA 0, size 0 or bytes outside the file has
    no region; rust-minidump leaves those out too).
    """

    regions: tuple[MemoryRegion, ...]
    descriptors: tuple[MemoryDescriptor, ...]
    base_rva: int | None = None

    def __len__(self) -> int:
        return len(self.regions)


class MemoryInfo(Record):
    """A MINIDUMP_MEMORY_INFO (Windows VirtualQuery result) for one address range."""

    base_address: int
    allocation_base: int
    allocation_protection: int
    region_size: int
    state: int
    protection: int
    type: int

    @property
    def end(self) -> int:
        return self.base_address + self.region_size

    @property
    def is_readable(self) -> bool:
        return bool(self.protection & PAGE_READ_BITS)

    @property
    def is_writable(self) -> bool:
        return bool(self.protection & PAGE_WRITE_BITS)

    @property
    def is_executable(self) -> bool:
        return bool(self.protection & PAGE_EXECUTE_BITS)


class MemoryInfoList(Record):
    entries: tuple[MemoryInfo, ...]

    def __len__(self) -> int:
        return len(self.entries)

    def info_at(self, address: int) -> MemoryInfo | None:
        for info in self.entries:
            if info.region_size and info.base_address <= address < info.end:
                return info
        return None


def parse_memory_list(ctx: StreamContext) -> MemoryList:
    source = ctx.source
    first, count = read_list_header(ctx, MEMORY_DESCRIPTOR_SIZE, "memory list")
    record = source.struct("QII")
    regions = []
    descriptors = []
    for i in range(count):
        start, size, rva = record.unpack_from(source.data, first + i * MEMORY_DESCRIPTOR_SIZE)
        descriptors.append(MemoryDescriptor(start, size, rva))
        if rva == 0 or size == 0:
            continue
        if not source.has(rva, size):  # (the message is written only then)
            at = first + i * MEMORY_DESCRIPTOR_SIZE
            ctx.report(
                outside_problem(source, rva, size, f"memory region[{i}] at {start:#x}", at), rejects=False
            )
        # a region cut off by the end of the file keeps the bytes that are there
        present = min(size, source.size - rva)
        if present > 0:
            regions.append(MemoryRegion(start, present, source.data[rva : rva + present], rva, source.endian))
    return MemoryList(tuple(regions), tuple(descriptors))


def parse_memory64_list(ctx: StreamContext) -> MemoryList:
    """Memory64List: the bytes of all regions follow each other from `base_rva`.

    A region cut short by the end of the file is kept with the bytes that exist
    (rust-minidump rejects the whole list), so a truncated full dump still
    shows most of its memory.
    """
    source = ctx.source
    cur = ctx.cursor()
    claimed, base_rva = cur.unpack("QQ", "memory64 list header")
    count = fit_count(claimed, ctx.size - 16, MEMORY_DESCRIPTOR_SIZE)
    if ctx.size != 16 + claimed * MEMORY_DESCRIPTOR_SIZE:
        ctx.report(
            StreamSizeMismatch(
                f"memory64 list claims {claimed} regions ({16 + claimed * 16} bytes) "
                f"but the stream has {ctx.size} bytes",
                offset=ctx.offset,
            )
        )
    record = source.struct("QQ")
    regions = []
    descriptors = []
    rva = base_rva
    for i in range(count):
        start, size = record.unpack_from(source.data, ctx.offset + 16 + i * MEMORY_DESCRIPTOR_SIZE)
        descriptors.append(MemoryDescriptor(start, size, None))
        present = max(0, min(size, source.size - rva))
        if present < size:
            ctx.report(
                BadRva(
                    f"memory64 region[{i}] at {start:#x}: {size:#x} bytes at {rva:#x}, "
                    f"only {present:#x} are in the file",
                    offset=rva,
                )
            )
        if present:
            regions.append(MemoryRegion(start, present, source.data[rva : rva + present], rva, source.endian))
        rva += size
    return MemoryList(tuple(regions), tuple(descriptors), base_rva)


def parse_memory_info_list(ctx: StreamContext) -> MemoryInfoList:
    source = ctx.source
    first, stride, count = read_ex_list_header(ctx, MEMORY_INFO_SIZE, "memory info list")
    if first - ctx.offset >= 16 and ctx.cursor().unpack("IIII", "memory info list header")[3]:
        # The entry count is a u64; rust-minidump reads its low half only, and so do we.
        ctx.note("memory info list entry count has non-zero high 32 bits; they are ignored")
    record = source.struct("QQIIQIIII")
    entries = []
    for i in range(count):
        base, alloc_base, alloc_prot, _, size, state, prot, typ, _ = record.unpack_from(
            source.data, first + i * stride
        )
        entries.append(
            MemoryInfo(
                base,
                alloc_base,
                alloc_prot & MEMORY_PROTECTION_BITS,
                size,
                state & MEMORY_STATE_BITS,
                prot & MEMORY_PROTECTION_BITS,
                typ & MEMORY_TYPE_BITS,
            )
        )
    return MemoryInfoList(tuple(entries))
