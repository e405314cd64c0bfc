"""Memory regions and the view over them: reads, lookups, MemoryList / Memory64List / MemoryInfoList."""

from __future__ import annotations

import mmap
import time
from pathlib import Path

from inspector.core.minidump import MemoryRegion, MemoryView, Minidump, StreamType
from inspector.core.types import Cpu
from tests.synth.minidump import SynthMinidump
from tests.synth.section import Section


def region(base: int, data: bytes, endian: str = "<") -> MemoryRegion:
    return MemoryRegion(base, len(data), memoryview(data), 0, endian)


def test_region_reads_little_endian_integers_inside_bounds_only() -> None:
    r = region(0x1000, bytes(range(16)))
    assert r.read_u8(0x1000) == 0 and r.read_u8(0x100F) == 15
    assert r.read_u16(0x1002) == 0x0302
    assert r.read_u32(0x1004) == 0x07060504
    assert r.read_u64(0x1008) == 0x0F0E0D0C0B0A0908
    assert r.read_u64(0x1009) is None  # would run one byte past the end
    assert r.read_u8(0x0FFF) is None and r.read_u8(0x1010) is None
    assert r.read_pointer(0x1000, 4) == 0x03020100
    assert r.read(0x100E, 2) == b"\x0e\x0f" and r.read(0x100E, 3) is None
    assert r.contains(0x1000, 16) and not r.contains(0x1000, 17)
    assert r.end == 0x1010


def test_region_view_is_zero_copy() -> None:
    data = bytearray(8)
    r = MemoryRegion(0x10, 8, memoryview(data), 0)
    view = r.view(0x12, 2)
    data[2] = 0xAB
    assert view is not None and view[0] == 0xAB


def test_big_endian_region() -> None:
    assert region(0, bytes(range(8)), ">").read_u32(0) == 0x00010203


def test_view_finds_the_region_by_binary_search() -> None:
    view = MemoryView([region(0x3000, b"c" * 16), region(0x1000, b"a" * 16), region(0x2000, b"b" * 16)])
    assert [r.base for r in view.regions] == [0x1000, 0x2000, 0x3000]
    assert view.region_for(0x2008) is view.regions[1]
    assert view.region_for(0x2010) is None and view.region_for(0x0FFF) is None
    assert view.read(0x300E, 2) == b"cc"
    assert view.read_u32(0x1000) == 0x61616161
    assert view.read_u64(0x100C) is None  # does not run on into another region
    assert view.read_u8(0x5000) is None and view.read_pointer(0x1000, 8) == 0x6161616161616161


def test_overlapping_and_empty_regions_follow_rust_minidump() -> None:
    view = MemoryView([region(0x1000, b"x" * 0x100), region(0x1080, b"y" * 0x100), region(0x2000, b"")])
    assert [(r.base, r.size) for r in view.regions] == [(0x1000, 0x100)]
    assert view.read_u8(0x1150) is None


def test_memory_list_regions_are_views_into_the_dump() -> None:
    stack = Section(start=0x7FFF0000).d64(0x1122334455667788).d32(7)
    dump = SynthMinidump().add_memory(stack).add_memory(0x401000, b"\x90\xc3").to_minidump()
    memory_list = dump.memory_list
    assert memory_list is not None and len(memory_list) == 2
    assert dump.memory.read_u64(0x7FFF0000) == 0x1122334455667788
    assert dump.memory.read_u32(0x7FFF0008) == 7
    assert dump.memory.read(0x401000, 2) == b"\x90\xc3"
    first = memory_list.regions[0]
    assert first.data.obj is dump.data.obj
    assert first.rva == memory_list.descriptors[0].rva


def test_memory64_regions_follow_each_other_from_the_base_rva() -> None:
    dump = SynthMinidump().add_memory64(0x1000, b"a" * 32).add_memory64(0x9000, b"b" * 8).to_minidump()
    lst = dump.memory64_list
    assert lst is not None and [(r.base, r.size) for r in lst.regions] == [(0x1000, 32), (0x9000, 8)]
    assert lst.regions[1].rva == lst.regions[0].rva + 32 == lst.base_rva + 32
    assert dump.memory.read(0x9000, 8) == b"b" * 8


def test_memory_view_spans_memory64_and_memory_lists() -> None:
    dump = SynthMinidump().add_memory64(0x1000, b"6" * 8).add_memory(0x2000, b"m" * 8).to_minidump()
    assert dump.memory.read(0x1000, 1) == b"6" and dump.memory.read(0x2000, 1) == b"m"


def test_truncated_full_dump_keeps_the_memory_that_is_there() -> None:
    data = SynthMinidump().add_memory64(0x1000, b"a" * 64).add_memory64(0x2000, b"b" * 64).finish()
    dump = Minidump.from_bytes(data[:-80])
    lst = dump.memory64_list
    assert lst is not None
    assert [(r.base, r.size) for r in lst.regions] == [(0x1000, 48)]
    assert dump.memory.read(0x1000, 48) == b"a" * 48 and dump.memory.read_u8(0x1030) is None
    assert len(dump.stream_problems(StreamType.Memory64ListStream)) == 2


def test_memory_descriptor_outside_the_file_is_skipped() -> None:
    synth = SynthMinidump().add_memory(0x1000, b"a" * 16).add_memory(0x2000, b"b" * 16)
    data = bytearray(synth.finish())
    rva, _ = synth.stream_locations[StreamType.MemoryListStream]
    data[rva + 4 + 16 + 12 : rva + 4 + 16 + 16] = (0xFFFFFF00).to_bytes(4, "little")  # 2nd region's RVA
    dump = Minidump.from_bytes(bytes(data))
    assert dump.memory_list is not None and [r.base for r in dump.memory_list.regions] == [0x1000]
    assert len(dump.memory_list.descriptors) == 2
    assert not dump.strictly_rejected(StreamType.MemoryListStream)


def test_memory_info_list() -> None:
    dump = (
        SynthMinidump(cpu=Cpu.AMD64)
        .add_memory_info([(0x10000, 0x1000, 0x1000, 0x04, 0x20000), (0x20000, 0x2000, 0x2000, 0x1, 0)])
        .to_minidump()
    )
    infos = dump.memory_info_list
    assert infos is not None and len(infos) == 2
    first = infos.entries[0]
    assert (first.base_address, first.region_size, first.state, first.protection, first.type) == (
        0x10000,
        0x1000,
        0x1000,
        0x04,
        0x20000,
    )
    assert first.is_readable and first.is_writable and not first.is_executable
    assert infos.info_at(0x20FFF) is infos.entries[1] and infos.info_at(0x30000) is None


def test_a_gigabyte_full_memory_dump_opens_without_reading_its_memory(tmp_path: Path) -> None:
    """A sparse 1 GiB Memory64 region: opening and reading one word must not touch the rest."""
    gib = 1 << 30
    synth = SynthMinidump().add_memory64(0x10_0000_0000, b"")
    data = bytearray(synth.finish())
    rva, _ = synth.stream_locations[StreamType.Memory64ListStream]
    base_rva = int.from_bytes(data[rva + 8 : rva + 16], "little")
    data[rva + 24 : rva + 32] = gib.to_bytes(8, "little")  # the region's data_size
    path = tmp_path / "full.dmp"
    with path.open("wb") as f:
        f.write(data)
        f.truncate(base_rva + gib)
        f.seek(base_rva + 0x1000)
        f.write((0x1122334455667788).to_bytes(8, "little"))
    started = time.perf_counter()
    with Minidump.open(path) as dump:
        dump.parse_all()
        [region] = dump.memory.regions
        assert (region.base, region.size) == (0x10_0000_0000, gib)
        assert isinstance(region.data.obj, mmap.mmap)
        assert dump.memory.read_u64(0x10_0000_1000) == 0x1122334455667788
        assert dump.memory.read_u64(0x10_0000_0000 + gib - 8) == 0
    assert time.perf_counter() - started < 2.0
