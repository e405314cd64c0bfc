"""The pieces `SymbolFile` reads a `.sym` through: the index's arrays, the file's text, parsed blocks.

`IndexArrays` names the sorted arrays of an `IndexImage`; `covering` bisects them;
`TextReader` reads lines at offsets with `os.pread` (safe from several threads);
`FunctionBlock` and `CfiBlock` are a FUNC's line and INLINE records and a STACK CFI INIT's
delta rows, parsed when a lookup first needs them, in rust-minidump's order.
"""

from __future__ import annotations

import _thread
import os
from bisect import bisect_right
from collections.abc import Sequence

from inspector.core.record import record
from inspector.core.symbols import line_parser
from inspector.core.symbols.index_format import IndexImage, Section
from inspector.core.symbols.records import CfiRow


@record
class Inlinee:
    depth: int
    address: int
    size: int
    call_file_id: int  # -1: none (old syntax or Breakpad's -1)
    call_line: int
    origin_id: int


class FunctionBlock:
    """The line and INLINE records of one FUNC, in rust-minidump's order."""

    __slots__ = ("inline_keys", "inlinees", "line_ends", "line_starts", "lines")

    def __init__(self, lines: list[tuple[int, int, int, int]], inlinees: list[Inlinee]) -> None:
        # lines: (address, size, line, file id), zero-size ones already removed
        kept: list[tuple[int, int, int, int]] = []
        last_end = -1
        for line in sorted(lines, key=lambda x: (x[0], x[0] + x[1])):
            if line[0] < last_end:
                continue  # overlaps the previous kept line record (rust-minidump drops it)
            kept.append(line)
            last_end = line[0] + line[1]
        self.lines = kept
        self.line_starts = [x[0] for x in kept]
        self.line_ends = [x[0] + x[1] for x in kept]
        self.inlinees = sorted(
            inlinees, key=lambda i: (i.depth, i.address, i.size, i.call_file_id, i.call_line, i.origin_id)
        )
        self.inline_keys = [(i.depth, i.address) for i in self.inlinees]

    def line_at(self, address: int) -> tuple[int, int, int, int] | None:
        i = bisect_right(self.line_starts, address) - 1
        if i >= 0 and address < self.line_ends[i]:
            return self.lines[i]
        return None

    def inlinee_at(self, depth: int, address: int) -> Inlinee | None:
        """rust-minidump's get_inlinee_at_depth: the last inlinee with (depth, start) <= (depth, address)."""
        i = bisect_right(self.inline_keys, (depth, address)) - 1
        if i < 0:
            return None
        inlinee = self.inlinees[i]
        if inlinee.depth != depth or address >= inlinee.address + inlinee.size:
            return None
        return inlinee


class CfiBlock:
    __slots__ = ("init", "row_addresses", "rows", "size")

    def __init__(self, init: CfiRow, size: int, rows: list[tuple[int, bytes]]) -> None:
        self.init = init
        self.size = size
        ordered = sorted(rows)  # rust-minidump: by (address, rule text)
        self.rows = tuple(CfiRow(address, line_parser.text(raw)) for address, raw in ordered)
        self.row_addresses = [address for address, _ in ordered]


class IndexArrays:
    """The arrays of one IndexImage, by name."""

    __slots__ = (
        "c_block",
        "c_end",
        "c_off",
        "c_start",
        "f_block",
        "f_end",
        "f_off",
        "f_start",
        "file_id",
        "file_off",
        "image",
        "info_off",
        "origin_id",
        "origin_off",
        "p_addr",
        "p_off",
        "w0_end",
        "w0_off",
        "w0_start",
        "w4_end",
        "w4_off",
        "w4_start",
    )

    def __init__(self, image: IndexImage) -> None:
        a = image.array
        self.image = image
        self.f_start, self.f_end, self.f_off, self.f_block = (
            a(Section.FUNC_START),
            a(Section.FUNC_END),
            a(Section.FUNC_OFFSET),
            a(Section.FUNC_BLOCK_END),
        )
        self.p_addr, self.p_off = a(Section.PUBLIC_ADDRESS), a(Section.PUBLIC_OFFSET)
        self.c_start, self.c_end, self.c_off, self.c_block = (
            a(Section.CFI_START),
            a(Section.CFI_END),
            a(Section.CFI_OFFSET),
            a(Section.CFI_BLOCK_END),
        )
        self.w4_start, self.w4_end, self.w4_off = (
            a(Section.WIN4_START),
            a(Section.WIN4_END),
            a(Section.WIN4_OFFSET),
        )
        self.w0_start, self.w0_end, self.w0_off = (
            a(Section.WIN0_START),
            a(Section.WIN0_END),
            a(Section.WIN0_OFFSET),
        )
        self.file_id, self.file_off = a(Section.FILE_ID), a(Section.FILE_OFFSET)
        self.origin_id, self.origin_off = a(Section.ORIGIN_ID), a(Section.ORIGIN_OFFSET)
        self.info_off = a(Section.INFO_OFFSET)


def covering(starts: Sequence[int], ends: Sequence[int], address: int) -> int:
    """Index of the range holding `address` in sorted non-overlapping [start, end) ranges, or -1."""
    i = bisect_right(starts, address) - 1
    if i >= 0 and address < ends[i]:
        return i
    return -1


class TextReader:
    """Positioned reads of the `.sym` file, safe from several threads.

    `os.pread` has no shared file position; where it does not exist (Windows)
    a lock serialises seek + read.
    """

    __slots__ = ("fd", "lock", "size")

    def __init__(self, fd: int, size: int) -> None:
        self.fd = fd
        self.size = size
        self.lock = _thread.allocate_lock()

    def _pread(self, n: int, offset: int) -> bytes:
        if hasattr(os, "pread"):
            return os.pread(self.fd, n, offset)
        with self.lock:  # pragma: no cover - platforms without pread
            os.lseek(self.fd, offset, os.SEEK_SET)
            return os.read(self.fd, n)

    def read(self, start: int, end: int) -> bytes:
        end = min(end, self.size)
        if end <= start:
            return b""
        data = self._pread(end - start, start)
        while len(data) < end - start:  # a short read (or the file shrank)
            more = self._pread(end - start - len(data), start + len(data))
            if not more:
                break
            data += more
        return data

    def line_at(self, offset: int, *, limit: int | None = None) -> bytes:
        """The line starting at `offset`, without its newline (at most `limit` bytes)."""
        want = 256
        while True:
            if limit is not None:
                want = min(want, limit)
            data = self.read(offset, offset + want)
            end = data.find(b"\n")
            if end >= 0:
                return data[:end]
            if len(data) < want or (limit is not None and want >= limit):
                return data
            want *= 4
