"""Cold path: build the symbol index of a `.sym` file in one vectorised pass (numpy).

This module and its vectorised helpers (`index_arrays`) are the only ones of the package
that import numpy; `SymbolFile` imports them lazily, only when no valid cached index exists.

The pass reads the file (an mmap; pages already scanned are handed back with
MADV_DONTNEED so the pass does not grow the RSS by the file's size) in chunks
of 4 MB, small enough for the per-line loads to hit the caches, large enough that
the per-chunk Python work stays small; chunks are scanned on several threads where
there are CPUs for them (libtorch_cpu.so.sym, 235 MB, 2 CPUs: 2 MB chunks on one
thread 0.40 s, on two 0.35 s; 4 MB chunks on two 0.29 s). A chunk owns the lines
that start in it, so chunks are independent of each other:

1. newline positions (`flatnonzero(chunk == 10)`) give every line's start;
2. each line is classified by its first 16 bytes, loaded as two little-endian
   words and compared with each keyword (plus its space or tab) under a
   mask; a line starting with a hex digit is a line record, an empty line is
   skipped, anything else is unrecognised;
3. every sub-line (line record, INLINE, STACK CFI row) is checked to belong to
   a block of the right kind — their fields are parsed only when a lookup needs
   the block;
4. the numeric fields of the records the index keeps (FUNC, PUBLIC, STACK CFI
   INIT, STACK WIN, FILE, INLINE_ORIGIN) are parsed for all of a chunk's lines
   of a kind at once with SWAR arithmetic on unaligned 8-byte loads: find the
   separating space, check the hex digits, and pack eight digits into a
   32-bit value with three shift-or steps. A line whose spelling is not the
   regular one (tabs, several spaces, too many digits, a line at the very end
   of the file) goes to the scalar grammar in `line_parser`, which decides
   whether it is valid or damaged.

Afterwards rust-minidump's rules are applied with whole-array operations:
ranges sorted by (start, end, file order), zero-size and overflowing ranges
dropped, a range overlapping the previous kept one dropped; STACK WIN's
truncation repair in file order; one PUBLIC per address (the greatest
(name, parameter size), which is the one rust-minidump's reverse scan finds);
the last FILE / INLINE_ORIGIN of an id.
"""

from __future__ import annotations

import mmap
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple, TypeVar

import numpy as np
import numpy.typing as npt

from inspector.core.cancel import NEVER, CancelToken
from inspector.core.ordered import in_order
from inspector.core.symbols import line_parser
from inspector.core.symbols.index_arrays import (
    I64,
    U8,
    U64,
    block_ends,
    extended,
    fields,
    first_of_overlaps,
    line_at,
    raw,
    rows_by_value,
    skip_m_flag,
    sort_order,
    word_view,
)
from inspector.core.symbols.index_format import Section, SymbolIdentity, pack_image, summary_json
from inspector.core.symbols.records import MAX_EXAMPLES_PER_KIND, DamageKind

_T = TypeVar("_T")

CHUNK_BYTES = 1 << 22
#: Most threads scanning the chunks of one file at once (`_Builder.run`)
SCAN_THREADS = 4
MAX_INFO_LINES = 64
#: A record line closer than this to the end of the file is parsed by the scalar grammar,
#: so that the 8-byte loads of the vectorised parser never run past the buffer.
TAIL_BYTES = 256

# line classes
BLANK, GARBAGE, MODULE, INFO, FILE, FUNC, PUBLIC, CFI_INIT, CFI, WIN, ORIGIN, INLINE, LINE = range(13)
_HEAD = np.zeros(16, dtype=bool)
_HEAD[[MODULE, INFO, FILE, FUNC, PUBLIC, CFI_INIT, WIN]] = True
_SUB = np.zeros(16, dtype=bool)
_SUB[[LINE, INLINE, CFI]] = True
_INDEXED = {FUNC: "func", PUBLIC: "pub", CFI_INIT: "init", WIN: "win", FILE: "file", ORIGIN: "origin"}
#: (sub-line class, the head class it must follow, damage kind, reason)
_SUB_LINE_RULES = (
    (LINE, FUNC, DamageKind.ORPHAN_LINE, "line record outside a FUNC"),
    (INLINE, FUNC, DamageKind.ORPHAN_INLINE, "INLINE outside a FUNC"),
    (CFI, CFI_INIT, DamageKind.ORPHAN_STACK_CFI, "STACK CFI row outside a STACK CFI INIT block"),
)

_HEX = np.full(256, 255, dtype=np.uint8)
for _i, _c in enumerate(b"0123456789"):
    _HEX[_c] = _i
for _i, _c in enumerate(b"abcdef"):
    _HEX[_c] = _HEX[_c - 32] = 10 + _i
_IS_HEX = _HEX != 255


class _Keyword(NamedTuple):
    """A keyword and its separator as masked values of the first two little-endian words of a line."""

    text: bytes
    mask0: np.uint64
    word0: np.uint64  # keyword + " "
    word0_tab: np.uint64  # keyword + "\t"
    mask1: np.uint64
    word1: np.uint64
    word1_tab: np.uint64


def _keyword(text: bytes) -> _Keyword:
    def word(raw: bytes) -> np.uint64:
        return np.uint64(int.from_bytes(raw, "little"))

    spaced, tabbed = (text + b" ").ljust(16, b"\0"), (text + b"\t").ljust(16, b"\0")
    mask = (b"\xff" * (len(text) + 1)).ljust(16, b"\0")
    return _Keyword(
        text,
        word(mask[:8]),
        word(spaced[:8]),
        word(tabbed[:8]),
        word(mask[8:]),
        word(spaced[8:]),
        word(tabbed[8:]),
    )


# keywords (followed by a space or a tab) by first letter; "STACK CFI INIT" before "STACK CFI"
_KEYWORD_GROUPS = tuple(
    tuple((_keyword(text), code) for text, code in group)
    for group in (
        ((b"STACK CFI INIT", CFI_INIT), (b"STACK CFI", CFI), (b"STACK WIN", WIN)),
        ((b"PUBLIC", PUBLIC),),
        ((b"FUNC", FUNC), (b"FILE", FILE)),
        ((b"INLINE_ORIGIN", ORIGIN), (b"INLINE", INLINE), (b"INFO", INFO)),
        ((b"MODULE", MODULE),),
    )
)
_FIRST_BYTE_GROUP = np.zeros(256, dtype=np.int8)
for _g, _group in enumerate(_KEYWORD_GROUPS, start=1):
    _FIRST_BYTE_GROUP[_group[0][0].text[0]] = _g


def build_index(data: Any, identity: SymbolIdentity, cancel: CancelToken = NEVER) -> bytearray:
    """Index `data` (an mmap or bytes of the whole `.sym` file) and return the index image."""
    builder = _Builder(data, identity.size, cancel)
    builder.run()
    return builder.image(identity)


#: columns kept per record kind (besides "off", the file offset of the record line)
_COLUMNS = {
    "func": ("addr", "size"),
    "pub": ("addr",),
    "init": ("addr", "size"),
    "win": ("type", "addr", "size"),
    "file": ("id",),
    "origin": ("id",),
}


def _empty_columns() -> dict[str, list[npt.NDArray[Any]]]:
    """`<kind>_<column>` → the parts of that column, for every kind and column (and "off")."""
    return {f"{kind}_{column}": [] for kind, columns in _COLUMNS.items() for column in (*columns, "off")}


class _Chunk(NamedTuple):
    """The lines starting in one chunk: `starts`/`ends` are file offsets (end = the newline).

    `ext` holds the chunk's bytes with margins (`ext[offset + shift]` is the
    file byte at `offset`): bytes of the neighbouring lines, zeros beyond the
    file, so that 16-byte loads at a line start never need bounds checks.
    """

    ext: U8
    shift: int
    base: int
    starts: I64
    ends: I64


class _Scan:
    """What one chunk of the file holds (chunks are scanned independently of each other).

    A chunk is a byte range and owns the lines that start in it. Line numbers
    here are 0-based within the chunk; the merge adds the lines before it.
    Sub-lines before the chunk's first head line (`leading_*`) are judged by
    the merge, which knows the last head line of the earlier chunks.
    """

    def __init__(self, builder: _Builder) -> None:
        self.b = builder
        self.lines = 0
        self.heads: I64 = np.zeros(0, dtype=np.int64)
        self.last_head = -1  # class of the chunk's last head line, -1 when it has none
        self.leading_rows: I64 = np.zeros(0, dtype=np.int64)
        self.leading_classes: npt.NDArray[np.int8] = np.zeros(0, dtype=np.int8)
        self.damage: dict[DamageKind, int] = {}
        self.examples: dict[DamageKind, list[tuple[int, str]]] = {}
        self.columns = _empty_columns()
        self.info_offsets: list[int] = []
        self.missing_final_newline = False
        self.old_inline_syntax = False

    def scan(self, lo: int) -> _Scan:
        b = self.b
        a, size = b.a, b.size
        hi = min(lo + CHUNK_BYTES, size)
        # the lines starting in [lo, hi) start after the newlines in [lo - 1, hi - 1)
        if lo == 0:
            starts = np.concatenate(([0], np.flatnonzero(a[: hi - 1] == 10) + 1)).astype(np.int64)
        else:
            starts = np.flatnonzero(a[lo - 1 : hi - 1] == 10)
            starts += lo
        if len(starts) == 0:
            return self  # the middle of a line longer than a chunk
        ends = np.empty_like(starts)
        ends[:-1] = starts[1:] - 1
        last_end = b.data.find(b"\n", int(starts[-1]))  # at or after hi - 1: may be in a later chunk
        if last_end < 0:
            self.missing_final_newline = True
            last_end = size
        ends[-1] = last_end
        self.lines = len(starts)
        ext, shift = extended(a, lo, hi, size)
        self._classify(_Chunk(ext, shift - lo, lo, starts, ends))
        return self

    def _classify(self, ch: _Chunk) -> None:
        a = self.b.a
        starts, ends = ch.starts, ch.ends
        length = ends - starts
        # the first 16 bytes of every line as two little-endian words (bytes of the next lines
        # where a line is shorter; unaligned loads through a stride-1 view)
        words = word_view(ch.ext)
        w0 = words[starts + ch.shift]
        w1 = words[starts + (ch.shift + 8)]
        b0 = (w0 & np.uint64(0xFF)).astype(np.uint8)
        cls = np.where(_IS_HEX[b0], np.int8(LINE), np.int8(GARBAGE))
        cls[length == 0] = BLANK
        group = _FIRST_BYTE_GROUP[b0]
        by_group, group_bounds = rows_by_value(group, len(_KEYWORD_GROUPS) + 1)
        for g, keywords in enumerate(_KEYWORD_GROUPS, start=1):
            idx = by_group[group_bounds[g] : group_bounds[g + 1]]
            if len(idx) == 0:
                continue
            x0, x1 = w0[idx], w1[idx]
            undecided = np.ones(len(idx), dtype=bool)
            for kw, code in keywords:
                m0 = x0 & kw.mask0
                hit = (m0 == kw.word0) | (m0 == kw.word0_tab)
                if kw.mask1:
                    m1 = x1 & kw.mask1
                    hit &= (m1 == kw.word1) | (m1 == kw.word1_tab)
                hit &= undecided
                cls[idx[hit]] = code
                undecided &= ~hit
        for i in np.flatnonzero(b0 == 13).tolist():
            if cls[i] == GARBAGE and not bytes(a[starts[i] : ends[i]]).strip(b"\r"):
                cls[i] = BLANK  # only '\r's: an empty line (`\r*\n`)
        present = np.bincount(cls, minlength=16)
        empty = np.zeros(0, dtype=np.int64)

        def rows(code: int) -> I64:
            found: I64 = np.flatnonzero(cls == code) if present[code] else empty
            return found

        # a sub-line belongs to the last head line before it
        is_head = _HEAD[cls]
        heads = np.flatnonzero(is_head)
        if present[LINE] + present[INLINE] + present[CFI]:
            heads_before = np.cumsum(is_head, dtype=np.int32)
            head_classes = np.concatenate(([np.int8(-1)], cls[heads]))
            leading = []
            for code, expected, kind, reason in _SUB_LINE_RULES:
                subs = rows(code)
                if len(subs) == 0:
                    continue
                owner_index = heads_before[subs]
                leading.append(subs[owner_index == 0])
                inside = owner_index > 0
                wrong = head_classes[owner_index[inside]] != expected
                if wrong.any():
                    self._damage_at(subs[inside][wrong], kind, reason)
            if leading:
                self.leading_rows = np.sort(np.concatenate(leading))
                self.leading_classes = cls[self.leading_rows]
        if len(heads):
            self.last_head = int(cls[heads[-1]])
            self.heads = starts[heads]

        if ch.base == 0 and cls[0] != MODULE:
            self._note(DamageKind.NO_MODULE_LINE, 1, "the first line is not a MODULE record")
        self._damage_at(rows(GARBAGE), DamageKind.UNKNOWN_RECORD, "unrecognised line", ch)
        for i in rows(MODULE).tolist():
            if ch.base == 0 and i == 0:
                parsed = line_parser.parse_module(bytes(a[starts[0] : ends[0]]))
                if isinstance(parsed, str):
                    self._note(DamageKind.BAD_MODULE, 1, parsed)
            else:
                self._note(DamageKind.MODULE_NOT_FIRST, i + 1, "MODULE line after the first line")
        self.info_offsets = starts[rows(INFO)[:MAX_INFO_LINES]].tolist()
        limit = self.b.size - TAIL_BYTES
        for code, record_kind in _INDEXED.items():
            idx = rows(code)
            if len(idx) == 0:
                continue
            offsets, line_numbers = starts[idx], idx
            near_end = offsets > limit
            if near_end.any():
                self._scalar(record_kind, offsets[near_end], line_numbers[near_end])
                offsets, line_numbers = offsets[~near_end], line_numbers[~near_end]
            if len(offsets):
                getattr(self, f"_parse_{record_kind}")(offsets, line_numbers)

    # ---- the records the index keeps ---------------------------------------

    def _parse_func(self, off: I64, ln: I64) -> None:
        fs = skip_m_flag(self.b.words, off + 5)
        ok, (addr, size, _param), _ = fields(self.b.words, fs, (16, 8, 8))
        self._keep("func", off[ok], addr=addr[ok], size=size[ok])
        self._scalar("func", off[~ok], ln[~ok])

    def _parse_pub(self, off: I64, ln: I64) -> None:
        fs = skip_m_flag(self.b.words, off + 7)
        ok, (addr, _param), _ = fields(self.b.words, fs, (16, 8))
        self._keep("pub", off[ok], addr=addr[ok])
        self._scalar("pub", off[~ok], ln[~ok])

    def _parse_init(self, off: I64, ln: I64) -> None:
        ok, (addr, size), _ = fields(self.b.words, off + 15, (16, 8))
        self._keep("init", off[ok], addr=addr[ok], size=size[ok])
        self._scalar("init", off[~ok], ln[~ok])

    def _parse_win(self, off: I64, ln: I64) -> None:
        ok, values, _ = fields(self.b.words, off + 10, (1, 16, 8, 8, 8, 8, 8, 8, 8, -1))
        wtype, addr, size, has_program = values[0], values[1], values[2], values[9]
        consistent = (wtype == 4) == (has_program == 1)
        self._damage_at(ln[ok & ~consistent], DamageKind.STACK_WIN_TYPE_MISMATCH, "type and flag disagree")
        keep = ok & consistent
        self._keep("win", off[keep], type=wtype[keep], addr=addr[keep], size=size[keep])
        self._scalar("win", off[~ok], ln[~ok])

    def _parse_file(self, off: I64, ln: I64) -> None:
        ok, (file_id,), _ = fields(self.b.words, off + 5, (-10,))
        self._keep("file", off[ok], id=file_id[ok])
        self._scalar("file", off[~ok], ln[~ok])

    def _parse_origin(self, off: I64, ln: I64) -> None:
        ok, (origin_id,), rest = fields(self.b.words, off + 14, (-10,))
        # A digit or '-' right after "<id> " may start an old-syntax file id (and a newline means
        # an empty name): the scalar grammar decides those lines, as it does all irregular ones.
        nxt = (self.b.words[rest] & np.uint64(0xFF)).astype(np.uint8)
        ok &= (_HEX[nxt] > 9) & (nxt != ord("-")) & (nxt != 10) & (nxt != 13) & (nxt != 32) & (nxt != 9)
        self._keep("origin", off[ok], id=origin_id[ok])
        self._scalar("origin", off[~ok], ln[~ok])

    def _scalar(self, kind: str, offsets: I64, line_numbers: I64) -> None:
        """Lines the vectorised parser could not read: the grammar decides; damaged ones are counted."""
        for offset, line_number in zip(offsets.tolist(), line_numbers.tolist(), strict=True):
            raw = line_at(self.b.data, offset, self.b.size)
            for r in self._valid(kind, raw, line_number + 1):
                if kind == "func":
                    self._keep1(kind, offset, addr=r.address, size=r.size)
                elif kind == "pub":
                    self._keep1(kind, offset, addr=r.address)
                elif kind == "init":
                    self._keep1(kind, offset, addr=r[0], size=r[1])
                elif kind == "win":
                    if r.consistent:
                        self._keep1(kind, offset, type=int(r.type_char, 16), addr=r.address, size=r.size)
                    else:
                        self._note(
                            DamageKind.STACK_WIN_TYPE_MISMATCH, line_number + 1, "type and flag disagree"
                        )
                elif kind == "file":
                    self._keep1(kind, offset, id=r[0])
                else:
                    self.old_inline_syntax |= r.old_syntax
                    self._keep1(kind, offset, id=r.origin_id)

    def _valid(self, kind: str, raw: bytes, line_number: int) -> Iterator[Any]:
        parse, damage = _SCALAR[kind]
        parsed = parse(raw)
        if isinstance(parsed, str):
            self._note(damage, line_number, parsed)
        else:
            yield parsed

    # ---- accumulation helpers ----------------------------------------------

    def _keep(self, kind: str, offsets: I64, **columns: npt.NDArray[Any]) -> None:
        if len(offsets) == 0:
            return
        self.columns[f"{kind}_off"].append(offsets.astype(np.uint64))
        for name, values in columns.items():
            self.columns[f"{kind}_{name}"].append(values.astype(np.uint64))

    def _keep1(self, kind: str, offset: int, **columns: int) -> None:
        self.columns[f"{kind}_off"].append(np.array([offset], dtype=np.uint64))
        for name, value in columns.items():
            self.columns[f"{kind}_{name}"].append(np.array([value], dtype=np.uint64))

    def _note(self, kind: DamageKind, line_number: int, reason: str) -> None:
        self.damage[kind] = self.damage.get(kind, 0) + 1
        self._example(kind, line_number, reason)

    def _example(self, kind: DamageKind, line_number: int, reason: str) -> None:
        examples = self.examples.setdefault(kind, [])
        if len(examples) < MAX_EXAMPLES_PER_KIND:
            examples.append((line_number, reason))

    def _damage_at(self, rows: I64, kind: DamageKind, reason: str, quote: _Chunk | None = None) -> None:
        """Count chunk lines `rows` as damaged; `quote` names their first bytes in the examples."""
        if len(rows) == 0:
            return
        self.damage[kind] = self.damage.get(kind, 0) + len(rows)
        for i in rows[:MAX_EXAMPLES_PER_KIND].tolist():
            text = reason
            if quote is not None:
                raw = bytes(self.b.a[quote.starts[i] : min(quote.ends[i], quote.starts[i] + 24)])
                text = f"{reason}: {raw.decode('utf-8', 'replace')!r}"
            self._example(kind, i + 1, text)


class _Builder:
    def __init__(self, data: Any, size: int, cancel: CancelToken) -> None:
        self.data = data
        self.size = size
        self.cancel = cancel
        self.a: U8 = np.frombuffer(data, dtype=np.uint8, count=size) if size else np.zeros(0, np.uint8)
        self.words = word_view(self.a)
        self.lines = 0
        self.owner = -1  # class of the last head line merged so far
        self.damage: dict[DamageKind, int] = {}
        self.examples: dict[DamageKind, list[tuple[int, str]]] = {}
        self.repairs: dict[str, int] = {}
        self.missing_final_newline = False
        self.old_inline_syntax = False
        self.info_offsets: list[int] = []
        self.heads: list[I64] = []
        self.acc = _empty_columns()

    def run(self) -> None:
        """Scan the chunks and merge them in file order.

        The chunks are independent (a scan needs nothing from the one before) and a scan is
        mostly numpy work, which releases the GIL: with several CPUs they are scanned on up to
        `SCAN_THREADS` threads, at most a few chunks ahead of the merge, which takes them in file
        order (see the module docstring for the figures). A scan waits at the cancel token as
        the merge did (the window's courtesy pauses included).
        """
        if self.size == 0:
            self.damage[DamageKind.EMPTY_FILE] = 1
            self.examples[DamageKind.EMPTY_FILE] = [(1, "the file is empty")]
            return
        madvise = (
            self.data.madvise if isinstance(self.data, mmap.mmap) and hasattr(mmap, "MADV_DONTNEED") else None
        )
        released = 0
        starts = range(0, self.size, CHUNK_BYTES)
        threads = min(SCAN_THREADS, len(starts))
        for lo, scan in in_order(self._scan, starts, threads=threads, name="symbol-index"):
            self._merge(scan)
            done = (min(lo + CHUNK_BYTES, self.size) - CHUNK_BYTES) & ~(mmap.PAGESIZE - 1)
            if madvise is not None and done - released >= 8 * CHUNK_BYTES:
                # keep the pass from inflating RSS by the file's size (the pages stay in the page cache);
                # the last chunk stays mapped for the line that may run on from it, and the chunks
                # being scanned all lie after the merged one
                madvise(mmap.MADV_DONTNEED, released, done - released)
                released = done

    def _scan(self, lo: int) -> _Scan:
        self.cancel.check()
        return _Scan(self).scan(lo)

    def _merge(self, scan: _Scan) -> None:
        base = self.lines
        if len(scan.leading_rows):
            # sub-lines before the chunk's first head line belong to the last head of earlier chunks
            for code, expected, kind, reason in _SUB_LINE_RULES:
                if self.owner != expected:
                    self._count(kind, scan.leading_rows[scan.leading_classes == code] + base, reason)
        for kind, n in scan.damage.items():
            self.damage[kind] = self.damage.get(kind, 0) + n
        for kind, items in scan.examples.items():
            mine = self.examples.setdefault(kind, [])
            mine.extend(
                (line + base, reason) for line, reason in items[: max(0, MAX_EXAMPLES_PER_KIND - len(mine))]
            )
        for name, parts in scan.columns.items():
            self.acc[name].extend(parts)
        if len(scan.heads):
            self.heads.append(scan.heads)
        if scan.last_head >= 0:
            self.owner = scan.last_head
        self.info_offsets.extend(scan.info_offsets[: max(0, MAX_INFO_LINES - len(self.info_offsets))])
        self.missing_final_newline |= scan.missing_final_newline
        self.old_inline_syntax |= scan.old_inline_syntax
        self.lines += scan.lines

    def _count(self, kind: DamageKind, rows: I64, reason: str) -> None:
        """Damage at 0-based file line numbers `rows`."""
        if len(rows) == 0:
            return
        self.damage[kind] = self.damage.get(kind, 0) + len(rows)
        examples = self.examples.setdefault(kind, [])
        examples.extend(
            (row + 1, reason) for row in rows[: max(0, MAX_EXAMPLES_PER_KIND - len(examples))].tolist()
        )
        examples.sort()

    def _column(self, name: str) -> U64:
        parts = self.acc[name]
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.uint64)

    def _repair(self, what: str, n: int) -> None:
        if n:
            self.repairs[what] = self.repairs.get(what, 0) + n

    # ---- rust-minidump's rules over whole arrays -----------------------------

    def image(self, identity: SymbolIdentity) -> bytearray:
        heads = np.concatenate(self.heads).astype(np.uint64) if self.heads else np.zeros(0, dtype=np.uint64)
        f_start, f_end, f_off = self._ranges(
            "FUNC", self._column("func_addr"), self._column("func_size"), self._column("func_off")
        )
        c_start, c_end, c_off = self._ranges(
            "STACK CFI INIT", self._column("init_addr"), self._column("init_size"), self._column("init_off")
        )
        p_addr, p_off = self._publics_by_address()
        w = self._stack_win_maps()
        file_id, file_off = self._last_by_id("FILE", self._column("file_id"), self._column("file_off"))
        origin_id, origin_off = self._last_by_id(
            "INLINE_ORIGIN", self._column("origin_id"), self._column("origin_off")
        )
        examples = sorted(
            [line, kind.name, reason] for kind, items in self.examples.items() for line, reason in items
        )
        summary = {
            "lines": self.lines,
            "damage": {k.name: v for k, v in self.damage.items() if v},
            "examples": examples,
            "missing_final_newline": self.missing_final_newline,
            "old_inline_syntax": self.old_inline_syntax,
            "repairs": self.repairs,
        }
        sections: list[tuple[int, int, Any]] = [
            (Section.FUNC_START, 8, raw(f_start)),
            (Section.FUNC_END, 8, raw(f_end)),
            (Section.FUNC_OFFSET, 8, raw(f_off)),
            (Section.FUNC_BLOCK_END, 8, raw(block_ends(heads, f_off, self.size))),
            (Section.PUBLIC_ADDRESS, 8, raw(p_addr)),
            (Section.PUBLIC_OFFSET, 8, raw(p_off)),
            (Section.CFI_START, 8, raw(c_start)),
            (Section.CFI_END, 8, raw(c_end)),
            (Section.CFI_OFFSET, 8, raw(c_off)),
            (Section.CFI_BLOCK_END, 8, raw(block_ends(heads, c_off, self.size))),
            (Section.WIN4_START, 8, raw(w[4][0])),
            (Section.WIN4_END, 8, raw(w[4][1])),
            (Section.WIN4_OFFSET, 8, raw(w[4][2])),
            (Section.WIN0_START, 8, raw(w[0][0])),
            (Section.WIN0_END, 8, raw(w[0][1])),
            (Section.WIN0_OFFSET, 8, raw(w[0][2])),
            (Section.FILE_ID, 8, raw(file_id)),
            (Section.FILE_OFFSET, 8, raw(file_off)),
            (Section.ORIGIN_ID, 8, raw(origin_id)),
            (Section.ORIGIN_OFFSET, 8, raw(origin_off)),
            (Section.INFO_OFFSET, 8, raw(np.array(self.info_offsets, dtype=np.uint64))),
            (Section.SUMMARY, 1, summary_json(summary)),
        ]
        return pack_image(identity, sections)

    def _ranges(
        self,
        what: str,
        start: U64,
        size: U64,
        off: U64,
        before_sort: Callable[[U64, U64, U64], tuple[U64, U64, U64]] | None = None,
    ) -> tuple[U64, U64, U64]:
        """rust-minidump's `into_rangemap_safe`: sort by (start, end), drop empty and overlapping ranges.

        `before_sort` sees (start, end, offset) of the non-empty ranges, still in the given order.
        """
        end = start + size  # wraps on overflow
        valid = (size > 0) & (end > start)
        self._repair(f"{what} with zero size or overflowing range dropped", int(len(start) - valid.sum()))
        start, end, off = start[valid], end[valid], off[valid]
        if before_sort is not None:
            start, end, off = before_sort(start, end, off)
        order = sort_order(start, end, off)
        if order is not None:
            start, end, off = start[order], end[order], off[order]
        keep = first_of_overlaps(start, end)
        self._repair(f"{what} overlapping an earlier range dropped", int(len(keep) - keep.sum()))
        return start[keep], end[keep], off[keep]

    def _publics_by_address(self) -> tuple[U64, U64]:
        addr, off = self._column("pub_addr"), self._column("pub_off")
        order = sort_order(addr, off)
        if order is not None:
            addr, off = addr[order], off[order]
        if len(addr) < 2:
            return addr, off
        same = addr[1:] == addr[:-1]
        if not same.any():
            return addr, off
        # several PUBLICs at one address: rust-minidump sorts them by (address, name, parameter size)
        # and its reverse scan takes the last one
        last_of_group = np.ones(len(addr), dtype=bool)
        last_of_group[:-1] = ~same
        chosen = off.copy()
        group_starts = np.flatnonzero(np.concatenate(([True], ~same)))
        group_ends = np.append(group_starts[1:], len(addr))
        for g0, g1 in zip(group_starts.tolist(), group_ends.tolist(), strict=True):
            if g1 - g0 < 2:
                continue
            best_key: tuple[bytes, int] | None = None
            best_off = int(off[g0])
            for o in off[g0:g1].tolist():
                key = line_parser.public_sort_key(line_at(self.data, o, self.size))
                if key is not None and (best_key is None or key >= best_key):
                    best_key, best_off = key, o
            chosen[g1 - 1] = best_off
        self._repair("PUBLIC sharing an address with another", int(len(addr) - last_of_group.sum()))
        return addr[last_of_group], chosen[last_of_group]

    def _stack_win_maps(self) -> dict[int, tuple[U64, U64, U64]]:
        wtype, addr, size, off = (self._column(f"win_{k}") for k in ("type", "addr", "size", "off"))
        order = np.argsort(off, kind="stable")  # file order
        wtype, addr, size, off = wtype[order], addr[order], size[order], off[order]
        self._repair(
            "STACK WIN of a type other than 0 and 4 ignored", int(((wtype != 0) & (wtype != 4)).sum())
        )
        result = {}
        for t in (4, 0):
            sel = wtype == t
            # the truncation repair works in file order, before the ranges are sorted
            result[t] = self._ranges(
                "STACK WIN", addr[sel], size[sel], off[sel], before_sort=self._stack_win_truncate
            )
        return result

    def _stack_win_truncate(self, a: U64, e: U64, o: U64) -> tuple[U64, U64, U64]:
        """rust-minidump's insert_win_stack_info, in file order: a record overlapping the one before
        and starting after it truncates that one; one starting at or before it is dropped (unless
        it has the very same range)."""
        if len(a) < 2:
            return a, e, o
        inter = (a[1:] < e[:-1]) & (a[:-1] < e[1:])
        later = a[1:] > a[:-1]
        identical = (a[1:] == a[:-1]) & (e[1:] == e[:-1])
        if not (inter & ~later & ~identical).any():
            cut = inter & later
            e = e.copy()
            e[:-1][cut] = a[1:][cut]
            self._repair("STACK WIN truncated by the next record", int(cut.sum()))
            return a, e, o
        pushed: list[list[int]] = []
        truncated = dropped = 0
        for ai, ei, oi in zip(a.tolist(), e.tolist(), o.tolist(), strict=True):
            if pushed:
                last = pushed[-1]
                if ai < last[1] and last[0] < ei:
                    if ai > last[0]:
                        last[1] = ai
                        truncated += 1
                    elif (last[0], last[1]) != (ai, ei):
                        dropped += 1
                        continue
            pushed.append([ai, ei, oi])
        self._repair("STACK WIN truncated by the next record", truncated)
        self._repair("STACK WIN overlapping the record before dropped", dropped)
        cols = np.array(pushed, dtype=np.uint64).reshape(-1, 3)
        return cols[:, 0].copy(), cols[:, 1].copy(), cols[:, 2].copy()

    def _last_by_id(self, what: str, ids: U64, off: U64) -> tuple[U64, U64]:
        """rust-minidump keeps FILE and INLINE_ORIGIN in a HashMap: the last record of an id wins."""
        order = np.argsort(off, kind="stable")[::-1]
        ids_r, off_r = ids[order], off[order]
        unique, first = np.unique(ids_r, return_index=True)
        self._repair(f"{what} with a repeated id (the last one is used)", int(len(ids) - len(unique)))
        return unique.astype(np.uint64), off_r[first]


_SCALAR: dict[str, tuple[Callable[[bytes], Any], DamageKind]] = {
    "func": (line_parser.parse_func, DamageKind.BAD_FUNC),
    "pub": (line_parser.parse_public, DamageKind.BAD_PUBLIC),
    "init": (line_parser.parse_stack_cfi_init, DamageKind.BAD_STACK_CFI_INIT),
    "win": (line_parser.parse_stack_win, DamageKind.BAD_STACK_WIN),
    "file": (line_parser.parse_file, DamageKind.BAD_FILE),
    "origin": (line_parser.parse_inline_origin, DamageKind.BAD_INLINE_ORIGIN),
}
