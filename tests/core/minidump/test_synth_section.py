"""The test byte writer: integers, endianness, labels set before or after use, nesting."""

from __future__ import annotations

import pytest

from tests.synth.section import Label, Section, UnresolvedLabel


def test_integers_are_written_little_endian_by_default() -> None:
    s = Section().d8(0x01).d16(0x0203).d32(0x04050607).d64(0x08090A0B0C0D0E0F)
    assert s.finish() == bytes.fromhex("01 0302 07060504 0f0e0d0c0b0a0908")


def test_big_endian_section_and_per_value_override() -> None:
    s = Section("big").d16(0x0102).d32(0x03040506, endian="little")
    assert s.finish() == bytes.fromhex("0102 06050403")


def test_forward_referenced_label_is_patched_at_finish() -> None:
    target = Label()
    s = Section(start=0x1000).d32(target).append_repeated(0xAA, 4).mark(target).d8(7)
    assert target.value == 0x1008
    assert s.finish() == bytes.fromhex("08100000 aaaaaaaa 07")


def test_label_arithmetic_and_differences() -> None:
    start, end = Label(), Label()
    s = Section().mark(start).d32(end - start).d32(start + 0x10).append(b"xyz").mark(end)
    assert s.finish()[:8] == bytes.fromhex("0b000000 10000000")


def test_appending_a_section_carries_its_pending_labels() -> None:
    late = Label()
    inner = Section().d64(late)
    outer = Section().d8(0xFF).append(inner)
    late.set(0x1122334455667788)
    assert outer.finish() == bytes.fromhex("ff 8877665544332211")


def test_unset_label_fails_at_finish() -> None:
    with pytest.raises(UnresolvedLabel):
        Section().d32(Label(name="never")).finish()


def test_a_label_cannot_get_two_values() -> None:
    label = Label(5)
    with pytest.raises(ValueError, match="already set"):
        label.set(6)


def test_align_pads_relative_to_the_start_address() -> None:
    s = Section(start=0x1003).d8(1).align(4)
    assert len(s) == 1 and s.here.value == 0x1004
    assert Section(start=0x1000).d8(1).align(8, fill=0xCC).finish() == b"\x01" + b"\xcc" * 7


def test_dword_writes_pointer_sized_words() -> None:
    assert Section().dword(4, 1).dword(8, 2).finish() == bytes.fromhex("01000000 0200000000000000")
