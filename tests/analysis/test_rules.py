"""rust-minidump 0.25's rules, expectations computed by hand: bit-flip confidence, guard pages, memory map."""

from __future__ import annotations

import pytest

from inspector.core.analysis.bitflip import (
    BitRange,
    MemoryOperation,
    confidence,
    f32,
    sorted_for_report,
    try_bit_flips,
)
from inspector.core.analysis.memory_info import MemoryInfoMap, RegionInfo
from inspector.core.analysis.model import BitFlip, BitFlipDetails
from inspector.core.minidump.linux import LinuxMaps, parse_maps_text
from inspector.core.minidump.memory_lists import MemoryInfo, MemoryInfoList


def details(
    *,
    non_canonical: bool = False,
    null: bool = False,
    low: bool = False,
    nearby: int = 0,
    poison: bool = False,
) -> BitFlipDetails:
    return BitFlipDetails(non_canonical, null, low, nearby, poison)


@pytest.mark.parametrize(
    ("flip", "expected"),
    [
        # 1 - (1 - 0.25)
        (details(), 0.25),
        # 1 - 0.75 * (1 - 0.55): two registers nearby (rust-minidump prints 0.6625000238418579)
        (details(nearby=2), 0.6625000238418579),
        # 1 - 0.75 * 0.5: one nearby register
        (details(nearby=1), 0.625),
        # four or more nearby registers count as four: 1 - 0.75 * 0.35
        (details(nearby=9), 1 - 0.75 * f32(1 - f32(0.65))),
        # null after a flip: 1 - 0.75 * 0.5
        (details(null=True), 0.625),
        # null, but the original was low (0.5 * 0.5): 1 - 0.75 * 0.75
        (details(null=True, low=True), 0.4375),
        # non-canonical and null: 1 - 0.75 * 0.1 * 0.5 (in f32: 0.9624999761581421)
        (details(non_canonical=True, null=True), 0.9624999761581421),
        # three nearby, poison: (1 - 0.75 * 0.4) * 0.5 (in f32: 0.3500000238418579, as the reference prints)
        (details(nearby=3, poison=True), 0.3500000238418579),
    ],
)
def test_confidence_formula(flip: BitFlipDetails, expected: float) -> None:
    assert confidence(flip) == pytest.approx(expected, abs=1e-7)
    assert confidence(flip) == f32(confidence(flip))  # an f32 value, printed with f32's digits


def test_confidence_digits_are_rust_minidumps() -> None:
    # the JSON prints the f32 widened to f64: these exact floats, not 0.6625 or 0.9625
    assert repr(confidence(details(nearby=2))) == "0.6625000238418579"
    assert repr(confidence(details(non_canonical=True, null=True))) == "0.9624999761581421"


def _map(*regions: tuple[int, int, str]) -> MemoryInfoMap:
    """Regions as (start, inclusive last, 'rwx' permissions)."""
    return MemoryInfoMap(RegionInfo(s, e, "r" in p, "w" in p, "x" in p) for s, e, p in regions)


def test_guard_page_needs_no_access_small_size_and_an_accessible_neighbour() -> None:
    memory = _map(
        (0x10000, 0x1FFFF, "rw"),
        (0x20000, 0x20FFF, ""),  # 4 KiB, no access, right after an accessible region
        (0x30000, 0x37FFF, ""),  # 32 KiB: size - 1 = 0x7fff < 0x8000, still small enough
        (0x38000, 0x38FFF, "r"),
        (0x50000, 0x58000, ""),  # 32 KiB + 1: too big
        (0x58001, 0x58FFF, "rw"),
        (0x60000, 0x60FFF, ""),  # no accessible neighbour (none touching)
        (0x70000, 0x70FFF, "r"),  # accessible itself
    )
    assert memory.is_likely_guard_page(0x20010)
    assert memory.is_likely_guard_page(0x30000)  # the neighbour after it counts too
    assert not memory.is_likely_guard_page(0x50000)
    assert not memory.is_likely_guard_page(0x60000)
    assert not memory.is_likely_guard_page(0x70000)
    assert not memory.is_likely_guard_page(0x90000)  # in no region at all


def test_guard_page_neighbour_after_must_be_accessible() -> None:
    memory = _map((0x20000, 0x20FFF, ""), (0x21000, 0x21FFF, ""))
    assert not memory.is_likely_guard_page(0x20000)


def test_linux_maps_quirks_of_rust_minidump() -> None:
    """End addresses are taken as inclusive, so of two touching mappings the second is dropped."""
    mappings, error = parse_maps_text(
        b"00400000-00401000 r-xp 00000000 08:01 1 /bin/app\n"
        b"00401000-00402000 rw-p 00000000 08:01 1 /bin/app\n"
        b"00402000-00403000 r--p 00000000 08:01 1 /bin/app\n"
    )
    assert error is None and mappings is not None
    memory = MemoryInfoMap(
        RegionInfo(m.start, m.end, m.is_readable, m.is_writable, m.is_executable) for m in mappings
    )
    first = memory.at(0x401000)  # the inclusive end: still the first mapping
    assert first is not None and first.executable
    assert memory.at(0x401800) is None  # the second one touches the first: dropped
    third = memory.at(0x402800)
    assert third is not None and third.readable and not third.writable


def test_memory_map_from_dump_streams_keeps_what_the_regions_would() -> None:
    """from_dump makes a region only when asked; what it keeps is what the eager map keeps."""
    mappings, error = parse_maps_text(
        b"00402000-00403000 r--p 00000000 08:01 1 /bin/app\n"
        b"00400000-00401000 r-xp 00000000 08:01 1 /bin/app\n"
        b"00400000-00401000 rw-p 00000000 08:01 1 /bin/app\n"  # the same span: the first one stays
        b"00405000-00404000 rw-p 00000000 08:01 1 /bin/backwards\n"  # start after end: left out
    )
    assert error is None and mappings is not None
    from_maps = MemoryInfoMap.from_dump(None, LinuxMaps(b"", mappings))
    eager = MemoryInfoMap(
        RegionInfo(m.start, m.end, m.is_readable, m.is_writable, m.is_executable)
        for m in mappings
        if m.start <= m.end
    )
    assert from_maps.regions == eager.regions and len(from_maps.regions) == 2
    found = from_maps.at(0x400800)
    assert found is not None and found.executable and found is from_maps.regions[0]
    infos = MemoryInfoList(
        (
            MemoryInfo(0x2000, 0x2000, 0, 0x1000, 0x1000, 0x04, 0x20000),  # rw
            MemoryInfo(0x1000, 0x1000, 0, 0x1000, 0x1000, 0x01, 0x20000),  # no access
            MemoryInfo(0x3000, 0x3000, 0, 0, 0x10000, 0x02, 0x20000),  # no size: left out
        )
    )
    from_infos = MemoryInfoMap.from_dump(infos, LinuxMaps(b"", mappings))  # the info list wins
    assert [(r.start, r.last, r.readable, r.writable) for r in from_infos.regions] == [
        (0x1000, 0x1FFF, False, False),
        (0x2000, 0x2FFF, True, True),
    ]
    assert from_infos.is_likely_guard_page(0x1800)
    assert not MemoryInfoMap.from_dump(None, None)


def flips_of(
    address: int,
    memory: MemoryInfoMap,
    *,
    register: str | None = None,
    bits: BitRange = BitRange.AMD64_CANONICAL,
    registers: list[tuple[str, int]] | None = None,
    operation: MemoryOperation = MemoryOperation.UNDETERMINED,
) -> list[BitFlip]:
    return try_bit_flips(
        address, register, bits, registers=registers, register_size=8, memory=memory, operation=operation
    )


def test_bit_flips_only_land_in_memory_the_operation_may_use() -> None:
    memory = _map((0x400000, 0x400FFF, "rx"), (0x600000, 0x600FFF, "rw"))
    # the crash address 0x400f93 with bit 22 flipped is 0xf93; from 0xf93 only the bit-22 flip lands
    flips = flips_of(0xF93, memory, registers=[("rax", 0xF93), ("rbx", 0x400100), ("rcx", 0x400200)])
    assert [f.address for f in flips] == [0x400F93]
    assert flips[0].details.nearby_registers == 2  # rbx and rcx are within 4 KiB
    assert flips[0].confidence == pytest.approx(0.6625, abs=1e-6)
    # a write cannot land in the read-only code: no candidate
    assert not flips_of(0xF93, memory, operation=MemoryOperation.WRITE)
    # an address in usable memory is no flip at all
    assert not flips_of(0x400010, memory)


def test_flip_to_null_is_always_a_candidate_and_twice_when_null_is_mapped() -> None:
    unmapped = flips_of(0x1000, _map(), register="rdi", registers=[])
    assert [(f.address, f.source_register, f.details.is_null, f.details.was_low) for f in unmapped] == [
        (0, "rdi", True, True)
    ]
    assert unmapped[0].confidence == 0.4375
    mapped = flips_of(0x1000, _map((0, 0xFFF, "r")), registers=[])
    assert [f.address for f in mapped] == [0, 0]


def test_non_canonical_flips_only_the_top_sixteen_bits() -> None:
    memory = _map((0x7F0000001000, 0x7F0000001FFF, "rw"))
    flips = flips_of(0x807F0000001008, memory, bits=BitRange.AMD64_NON_CANONICAL, registers=[])
    assert [f.address for f in flips] == [0x7F0000001008]
    assert flips[0].details.was_non_canonical
    assert flips[0].confidence == pytest.approx(1 - 0.75 * 0.1, abs=1e-6)


def test_poison_patterns_halve_the_confidence() -> None:
    flips = flips_of(0x0000_0004_0000_0010, _map((0x10, 0x1F, "rw")), registers=[("rax", 0xE5E5E5E5E5E5E5E5)])
    assert [f.address for f in flips] == [0x10]
    assert flips[0].details.poison_registers
    assert flips[0].confidence == 0.125  # 0.25 * 0.5


def test_report_order_is_confidence_then_address() -> None:
    flips = [BitFlip(0x30, None, details(), 0.25), BitFlip(0x10, None, details(), 0.625)]
    flips.append(BitFlip(0x20, "rax", details(), 0.25))
    assert [f.address for f in sorted_for_report(flips)] == [0x10, 0x20, 0x30]
