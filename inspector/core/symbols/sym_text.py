"""The pieces `SymbolFile` reads a `.sym` through: the index's arrays, the file's text, parsed blocks.

`IndexArrays` names the sorted arrays of an `IndexImage`; `covering` bisects them;
`TextReader` reads lines at offsets with `os.pread` (safe from several threads);
`FunctionBlock` and `CfiBlock` are a FUNC's line and INLINE records and a STACK CFI INIT's
delta rows, parsed when a lookup first needs them (`parse_function_block`, `parse_cfi_block`),
in rust-minidump's order; `ParsedText` keeps them, with the names and the file's own lines, for
every `SymbolFile` that reads the same text through the same index.
"""

from __future__ import annotations

import _thread
import os
from bisect import bisect_right

from inspector.core.record import Record
from inspector.core.symbols import line_parser
from inspector.core.symbols.index_format import IndexImage, Section
from inspector.core.symbols.postfix import compose_cfi_rules
from inspector.core.symbols.records import (
    CfiLookup,
    CfiRow,
    DamageKind,
    DamageReport,
    FunctionRecord,
    ModuleRecord,
    RecordCounts,
    SymbolInfo,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (inspector.core.lazy)
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import TypeVar

    _V = TypeVar("_V")

#: A damaged sub-line of a block: its line number in the block (the block's first line is 0),
#: its kind and the reason
Damaged = tuple[int, DamageKind, str]

U64_MAX = 0xFFFF_FFFF_FFFF_FFFF

_HEX_FIRST = frozenset(b"0123456789abcdefABCDEF")


class StaleIndex(Exception):
    """The text at an indexed offset is not the record the index promised."""


class Inlinee(Record):
    depth: int
    address: int
    size: int
    call_file_id: int  # -1: none (old syntax or Breakpad's -1)
    call_line: int
    origin_id: int


class FunctionBlock:
    """The line and INLINE records of one FUNC, in rust-minidump's order."""

    __slots__ = ("damaged", "inline_keys", "inlinees", "line_ends", "line_starts", "lines")

    def __init__(
        self,
        lines: list[tuple[int, int, int, int]],
        inlinees: list[Inlinee],
        damaged: tuple[Damaged, ...] = (),
    ) -> None:
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
        #: its damaged line and INLINE records (each file that reads the block counts them)
        self.damaged = damaged

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
    """A STACK CFI INIT row and its delta rows, and the lookups made in it so far."""

    __slots__ = ("_lookups", "damaged", "init", "row_addresses", "rows", "size")

    def __init__(
        self, init: CfiRow, size: int, rows: list[tuple[int, bytes]], damaged: tuple[Damaged, ...] = ()
    ) -> None:
        self.init = init
        self.size = size
        ordered = sorted(rows)  # rust-minidump: by (address, rule text)
        self.rows = tuple(CfiRow(address, line_parser.text(raw)) for address, raw in ordered)
        self.row_addresses = [address for address, _ in ordered]
        #: its damaged delta rows (each file that reads the block counts them)
        self.damaged = damaged
        #: the lookup for each number of delta rows in force: composing parses the rows' rule
        #: texts, and frames stand at the same few instructions of a function again and again
        self._lookups: dict[int, CfiLookup] = {}

    def lookup(self, address: int) -> CfiLookup:
        """The rules in force at `address` (inside the block); their mapping is shared: read it only."""
        applied = bisect_right(self.row_addresses, address)
        found = self._lookups.get(applied)
        if found is None:
            rules, error = compose_cfi_rules([self.init.rules, *(row.rules for row in self.rows[:applied])])
            found = self._lookups[applied] = CfiLookup(self.init, self.size, self.rows, applied, rules, error)
        return found


def parse_function_block(raw: bytes, offset: int) -> FunctionBlock:
    """The FUNC block `raw` (its FUNC line, then its line and INLINE records), read at `offset`."""
    inlinees: list[Inlinee] = []
    damaged: list[Damaged] = []
    head, _, body = raw.partition(b"\n")
    if not head.startswith(b"FUNC"):
        raise StaleIndex(f"no FUNC record at offset {offset}")
    # the line records all at once when none is damaged (the common case), else one by one below
    parsed_lines = line_parser.line_records(body)
    lines = [] if parsed_lines is None else [x for x in parsed_lines if _kept_line(x[0], x[1])]
    numbered = (
        enumerate(body.split(b"\n"), start=1) if parsed_lines is None else line_parser.inline_lines(body)
    )
    for k, row in numbered:
        if not row or (row[0] not in _HEX_FIRST and not row.startswith(b"INLINE")):
            continue  # empty, or counted when the file was indexed
        if row.startswith((b"INLINE ", b"INLINE\t")):
            parsed_inline = line_parser.parse_inline(row)
            if isinstance(parsed_inline, str):
                damaged.append((k, DamageKind.BAD_INLINE, parsed_inline))
                continue
            call_file = -1 if parsed_inline.call_file_id is None else parsed_inline.call_file_id
            for address, size in parsed_inline.ranges:
                inlinees.append(
                    Inlinee(
                        parsed_inline.depth,
                        address,
                        size,
                        call_file,
                        parsed_inline.call_line,
                        parsed_inline.origin_id,
                    )
                )
            continue
        if row.startswith(b"INLINE") or parsed_lines is not None:
            continue  # INLINE_ORIGIN (indexed globally), a damaged keyword (counted), a line record
        parsed = line_parser.parse_line_record(row)
        if isinstance(parsed, str):
            damaged.append((k, DamageKind.BAD_LINE, parsed))
            continue
        if _kept_line(parsed[0], parsed[1]):
            lines.append(parsed)
    return FunctionBlock(lines, inlinees, tuple(damaged))


def parse_cfi_block(raw: bytes, offset: int) -> CfiBlock:
    """The STACK CFI INIT block `raw` (its INIT line, then its delta rows), read at `offset`."""
    rows_raw = raw.split(b"\n")
    init = line_parser.parse_stack_cfi_init(rows_raw[0].rstrip(b"\r"))
    if isinstance(init, str):
        raise StaleIndex(f"no STACK CFI INIT record at offset {offset}")
    rows: list[tuple[int, bytes]] = []
    damaged: list[Damaged] = []
    for k, row in enumerate(rows_raw[1:], start=1):
        if not row.startswith((b"STACK CFI ", b"STACK CFI\t")):
            continue  # empty, or counted when the file was indexed
        parsed = line_parser.parse_stack_cfi_raw(row)
        if isinstance(parsed, str):
            damaged.append((k, DamageKind.BAD_STACK_CFI, parsed))
            continue
        rows.append(parsed)
    return CfiBlock(CfiRow(init[0], init[2]), init[1], rows, tuple(damaged))


def _kept_line(address: int, size: int) -> bool:
    """rust-minidump drops empty (and overflowing) line records."""
    return size != 0 and address + size - 1 <= U64_MAX


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
        a = image.array  # (views of its buffer: the image itself is not kept)
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


class ParsedText:
    """What lookups have read of one `.sym` file through one index, for every `SymbolFile` doing so.

    The index's arrays, the file's MODULE and INFO lines, its damage report as indexed, and the
    blocks, FUNC records and names parsed so far (each cache holds at most `capacity`). All of it
    follows from the text and the index alone, so a `SymbolFile` opened on the same unchanged
    file through the same kept index image (`IndexCache`) takes it over instead of parsing again:
    the next dump of a batch or of the window. What a file *found* while parsing (damaged
    sub-lines) is each `SymbolFile`'s own (`SymbolFile.damage`): the blocks carry theirs for
    that. The caches tolerate concurrent fills (two threads may parse the same block). As for the
    index itself, a file rewritten with its size, modification time and first line kept is taken
    for the same file; one whose text is then found not to match the index no longer shares it.
    """

    __slots__ = (
        "capacity",
        "cfi",
        "counts",
        "damage",
        "files",
        "functions",
        "index",
        "info",
        "module",
        "origins",
        "records",
        "shown",
    )

    def __init__(
        self,
        image: IndexImage,
        module: ModuleRecord | None,
        info: SymbolInfo,
        shown: Callable[[str], str] | None,
        capacity: int,
    ) -> None:
        # (the image is not kept: a shared image keeps its parsed text, `IndexImage.derived`)
        self.index = IndexArrays(image)
        self.module = module
        self.info = info
        #: how a FUNC / PUBLIC / INLINE_ORIGIN name is shown (None: as written)
        self.shown = shown
        self.damage: DamageReport = image.damage()
        self.counts: RecordCounts = image.counts()
        self.capacity = capacity
        #: by FUNC / STACK CFI INIT index: the parsed blocks, and the FUNC records (names as shown)
        self.functions: dict[int, FunctionBlock] = {}
        self.cfi: dict[int, CfiBlock] = {}
        self.records: dict[int, FunctionRecord] = {}
        #: by FILE / INLINE_ORIGIN id: the names (None: no such record)
        self.files: dict[int, str | None] = {}
        self.origins: dict[int, str | None] = {}

    def remember(self, cache: dict[int, _V], key: int, value: _V) -> _V:
        """Keep `value` in one of the caches (the oldest entry goes when it is full); returns it."""
        if len(cache) >= self.capacity:
            try:
                del cache[next(iter(cache))]
            except (KeyError, StopIteration, RuntimeError):
                pass  # another thread changed it meanwhile
        cache[key] = value
        return value


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
