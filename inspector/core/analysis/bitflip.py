"""Possible bit flips: rust-minidump 0.25's `bitflip::try_bit_flips` and `BitFlipDetails::confidence`.

An address that faulted may be a valid one with one bit flipped (bad RAM, cosmic rays). For
the crash address (or the non-canonical address found in the instruction), and for each
register the crashing instruction addressed memory with, every single-bit variant that lands
in memory the crash's operation was allowed on is a candidate, scored by:

    confidence = 1 − ∏(1 − v)   over  v ∈ {0.25 (baseline);
                                          0.9 if the original address was non-canonical;
                                          0.5 if the candidate is null (× 0.5 if the original was low);
                                          0.5, 0.55, 0.6, 0.65 for 1, 2, 3, ≥4 registers near it}
    then × 0.5 if a register holds a poison pattern (a byte repeated: 0xe5e5…, 0xa5a5…).

rust-minidump does this in 32-bit floats; `confidence` reproduces its rounding step by step
so the JSON prints the same digits (0.6625000238418579).
"""

from __future__ import annotations

import struct

from inspector.core.analysis.memory_info import MemoryInfoMap, RegionInfo
from inspector.core.analysis.model import BitFlip, BitFlipDetails
from inspector.core.enums import Enum

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (inspector.core.lazy)
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

#: Registers within this distance of a candidate count as "nearby" (rust-minidump's 1 << 12).
NEARBY_REGISTER_DISTANCE = 1 << 12
#: Addresses at or below this are "low" (rust-minidump's `NEARBY_REGISTER_DISTANCE * 2`).
LOW_ADDRESS_CUTOFF = NEARBY_REGISTER_DISTANCE * 2

HIGH, MEDIUM, LOW = 0.90, 0.50, 0.25
BASELINE = LOW
NON_CANONICAL = HIGH
NULL = MEDIUM
NEARBY_REGISTER = (MEDIUM, MEDIUM + 0.05, MEDIUM + 0.1, MEDIUM + 0.15)
POISON = MEDIUM
ORIGINAL_LOW = MEDIUM

#: Low bytes of the poison patterns rust-minidump recognises (Mozilla's Poison.h, jemalloc's 0xa5 / 0xe5).
POISON_BYTES = frozenset(
    {
        0x2B,
        0x2D,
        0x2F,
        0x49,
        0x4B,
        0x4D,
        0x4F,
        0x6B,
        0x8B,
        0x9B,
        0x9F,
        0xA5,
        0xBB,
        0xCC,
        0xCD,
        0xCE,
        0xDB,
        0xE5,
    }
)

_F32 = struct.Struct("<f")


def f32(value: float) -> float:
    """`value` rounded to the nearest 32-bit float (exact for one +, −, × of two f32 values)."""
    result: float = _F32.unpack(_F32.pack(value))[0]
    return result


def confidence(details: BitFlipDetails) -> float:
    """rust-minidump's confidence for a candidate, in f32 arithmetic."""
    values = [f32(BASELINE)]
    if details.was_non_canonical:
        values.append(f32(NON_CANONICAL))
    if details.is_null:
        value = f32(NULL)
        if details.was_low:
            value = f32(value * f32(ORIGINAL_LOW))
        values.append(value)
    if details.nearby_registers > 0:
        values.append(f32(NEARBY_REGISTER[min(details.nearby_registers, len(NEARBY_REGISTER)) - 1]))
    product = f32(1.0)
    for value in values:
        product = f32(product * f32(1.0 - value))
    result = f32(1.0 - product)
    if details.poison_registers:
        result = f32(result * f32(POISON))
    return result


class BitRange(Enum):
    """Which bits to flip: the canonical 48 of amd64, the top 16 of a non-canonical address, or all."""

    AMD64_CANONICAL = range(48)
    AMD64_NON_CANONICAL = range(48, 64)
    ALL = range(64)


class MemoryOperation(Enum):
    """The crash's operation (known only for Windows access violations)."""

    UNDETERMINED = "undetermined"
    READ = "read"
    WRITE = "write"
    EXECUTE = "execute"

    def possibly_allowed(self, region: RegionInfo) -> bool:
        """Undetermined: any region will do."""
        if self is MemoryOperation.READ:
            return region.readable
        if self is MemoryOperation.WRITE:
            return region.writable
        if self is MemoryOperation.EXECUTE:
            return region.executable
        return True

    def allowed(self, region: RegionInfo) -> bool:
        """Undetermined: never known to be allowed."""
        return self is not MemoryOperation.UNDETERMINED and self.possibly_allowed(region)


def _is_repeated_byte(value: int, register_size: int) -> bool:
    low = value & 0xFF
    return value == low * int.from_bytes(b"\x01" * register_size, "little")


def details_for(
    candidate: int,
    original: int,
    *,
    was_non_canonical: bool,
    registers: Sequence[tuple[str, int]],
    register_size: int,
) -> BitFlipDetails:
    """The heuristics of one candidate (`PossibleBitFlip::calculate_heuristics`)."""
    is_null = candidate == 0
    nearby = 0
    poison = False
    count_nearby = candidate > LOW_ADDRESS_CUTOFF
    for _, value in registers:
        if count_nearby and abs(candidate - value) <= NEARBY_REGISTER_DISTANCE:
            nearby += 1
        if not poison and register_size in (2, 4, 8) and _is_repeated_byte(value, register_size):
            poison = (value & 0xFF) in POISON_BYTES
    return BitFlipDetails(
        was_non_canonical=was_non_canonical,
        is_null=is_null,
        was_low=is_null and original <= LOW_ADDRESS_CUTOFF,
        nearby_registers=nearby,
        poison_registers=poison,
    )


def try_bit_flips(
    address: int,
    source_register: str | None,
    bit_range: BitRange,
    *,
    registers: Sequence[tuple[str, int]] | None,
    register_size: int,
    memory: MemoryInfoMap,
    operation: MemoryOperation,
) -> list[BitFlip]:
    """The candidates for `address`; none when `address` itself is in memory the operation may use.

    `registers` are the exception context's valid registers (None without a context: no
    nearby or poison heuristics). A flip to null is always a candidate (a null check that went
    the wrong way), and is listed twice when null is mapped, as rust-minidump does.
    """
    region = memory.at(address)
    if region is not None and operation.possibly_allowed(region):
        return []
    out: list[BitFlip] = []

    def add(candidate: int) -> None:
        details = details_for(
            candidate,
            address,
            was_non_canonical=bit_range is BitRange.AMD64_NON_CANONICAL,
            registers=registers or (),
            register_size=register_size,
        )
        if registers is None:
            details = BitFlipDetails(details.was_non_canonical, details.is_null, details.was_low, 0, False)
        out.append(BitFlip(candidate, source_register, details, confidence(details)))

    for bit in bit_range.value:
        candidate = address ^ (1 << bit)
        if candidate == 0:
            add(candidate)
        found = memory.at(candidate)
        if found is not None and operation.possibly_allowed(found):
            add(candidate)
    return out


def sorted_for_report(flips: Iterable[BitFlip]) -> list[BitFlip]:
    """The human report's order: confidence descending, then address ascending."""
    return sorted(flips, key=lambda b: (-b.confidence, b.address))
