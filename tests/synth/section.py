"""A byte-section writer with labels resolved at `finish()` (the test_assembler idea of Breakpad's tests).

    stack = Section(start=0x7FFF0000)
    frame1_sp = Label()
    stack.d64(0).d64(0x401234).mark(frame1_sp).append_repeated(0, 16).d64(frame1_sp + 8)
    data = stack.finish()            # frame1_sp is 0x7FFF0010

A `Label` is a value that may be unknown while bytes are written: writing it
reserves the bytes, `mark` (or `Label.set`) gives it a value, `finish` patches
every use. Labels combine with integers and other labels (`label + 8`,
`end - start`). Appending one section to another carries its pending uses.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Literal

Endian = Literal["little", "big"]


class UnresolvedLabel(ValueError):
    """A label was used but never given a value."""


class Label:
    """A number known later. `Label(5)` is known now; `Label()` is set by `mark`/`set`."""

    __slots__ = ("_compute", "_name", "_value")

    def __init__(self, value: int | None = None, *, name: str = "") -> None:
        self._value = value
        self._name = name
        self._compute: Callable[[], int] | None = None

    @classmethod
    def _derived(cls, compute: Callable[[], int], name: str) -> Label:
        label = cls(name=name)
        label._compute = compute
        return label

    def set(self, value: int) -> None:
        if self._compute is not None:
            raise ValueError(f"cannot set the derived label {self._name}")
        if self._value is not None and self._value != value:
            raise ValueError(f"label {self._name or '?'} already set to {self._value:#x}, not {value:#x}")
        self._value = value

    @property
    def known(self) -> bool:
        try:
            self.value  # noqa: B018 - evaluating is the check
        except UnresolvedLabel:
            return False
        return True

    @property
    def value(self) -> int:
        if self._compute is not None:
            return self._compute()
        if self._value is None:
            raise UnresolvedLabel(f"label {self._name or '?'} was used but never set")
        return self._value

    def __add__(self, other: int | Label) -> Label:
        return Label._derived(lambda: self.value + _value(other), f"({self._name}+)")

    __radd__ = __add__

    def __sub__(self, other: int | Label) -> Label:
        return Label._derived(lambda: self.value - _value(other), f"({self._name}-)")

    def __rsub__(self, other: int) -> Label:
        return Label._derived(lambda: other - self.value, f"(-{self._name})")

    def __repr__(self) -> str:
        try:
            return f"Label({self.value:#x})"
        except UnresolvedLabel:
            return f"Label(<unset {self._name}>)"


def _value(item: int | Label) -> int:
    return item.value if isinstance(item, Label) else item


class Section:
    """Bytes being assembled; `start` is the address (or file offset) of its first byte."""

    def __init__(self, endian: Endian = "little", *, start: int = 0) -> None:
        self.endian: Endian = endian
        self.start = start
        self._data = bytearray()
        self._fixups: list[tuple[int, int, Label, Endian]] = []

    def __len__(self) -> int:
        return len(self._data)

    @property
    def size(self) -> int:
        return len(self._data)

    @property
    def here(self) -> Label:
        """A label with the address of the next byte to be written."""
        return Label(self.start + len(self._data))

    def mark(self, label: Label) -> Section:
        """Give `label` the address of the next byte."""
        label.set(self.start + len(self._data))
        return self

    def _put(self, size: int, value: int | Label, endian: Endian | None) -> Section:
        order = endian or self.endian
        if isinstance(value, Label):
            if value.known:
                value = value.value
            else:
                self._fixups.append((len(self._data), size, value, order))
                self._data += bytes(size)
                return self
        self._data += (value & ((1 << (8 * size)) - 1)).to_bytes(size, order)
        return self

    def d8(self, value: int | Label) -> Section:
        return self._put(1, value, None)

    def d16(self, value: int | Label, endian: Endian | None = None) -> Section:
        return self._put(2, value, endian)

    def d32(self, value: int | Label, endian: Endian | None = None) -> Section:
        return self._put(4, value, endian)

    def d64(self, value: int | Label, endian: Endian | None = None) -> Section:
        return self._put(8, value, endian)

    def dword(self, width: int, value: int | Label) -> Section:
        """A `width`-byte (1/2/4/8) integer: handy for pointer-sized stack words."""
        return self._put(width, value, None)

    def append(self, data: bytes | bytearray | memoryview | Section) -> Section:
        """Append raw bytes, or another section together with its pending label uses."""
        if isinstance(data, Section):
            base = len(self._data)
            self._fixups.extend((base + off, size, label, order) for off, size, label, order in data._fixups)
            self._data += data._data
        else:
            self._data += bytes(data)
        return self

    def append_repeated(self, byte: int, count: int) -> Section:
        self._data += bytes([byte & 0xFF]) * count
        return self

    def align(self, alignment: int, fill: int = 0) -> Section:
        """Pad with `fill` bytes until the next address is a multiple of `alignment`."""
        pad = -(self.start + len(self._data)) % alignment
        return self.append_repeated(fill, pad)

    def finish(self) -> bytes:
        """The bytes with every label use patched in; `UnresolvedLabel` if one was never set."""
        out = bytearray(self._data)
        for offset, size, label, order in self._fixups:
            out[offset : offset + size] = (label.value & ((1 << (8 * size)) - 1)).to_bytes(size, order)
        return bytes(out)


def pack(endian: Endian, fmt: str, *values: int) -> bytes:
    """struct.pack with the section's byte order."""
    return struct.pack(("<" if endian == "little" else ">") + fmt, *values)
