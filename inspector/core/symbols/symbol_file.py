"""One Breakpad `.sym` file: a lazy index over its text, with rust-minidump's lookup rules.

`SymbolFile.open(path, cache=...)` opens the file and gets its index: from the
`IndexCache` when a valid entry exists (no numpy, O(1) apart from the checksum),
else by one vectorised pass (`index_build`, numpy), which is then stored.
Nothing else is parsed up front. A lookup bisects the sorted u64 arrays of the
index and then parses only what it touches, read from the `.sym` with `os.pread`:
the record line itself, and for line/inline queries the FUNC's block of line
and INLINE records, for CFI the INIT block's delta rows (both kept in a small
per-file cache of parsed blocks).

All addresses are module-relative (`int`). The lookups and their rules:

* `find_function(a)` — the FUNC whose range holds `a`. Ranges follow
  rust-minidump: sorted by (start, end, file order), zero-size ones dropped,
  one overlapping the previous kept one dropped (lowest start wins).
* `find_public(a)` — the PUBLIC at the greatest address <= `a` (among several
  at one address the greatest (name, parameter size)), unless a FUNC starting
  at or below `a` starts at or after it (a PUBLIC cannot extend past a FUNC).
* `find_line(a)` — the line record (of the FUNC holding `a`) covering `a`.
* `find_inlines(a)` — the inline chain at `a`, innermost first.
* `symbolize(a)` — exactly what rust-minidump's `fill_symbol` fills (see
  `FrameSymbol`), or None when neither a FUNC nor a PUBLIC applies.
* `has_symbol_at(a)` — "a FUNC or PUBLIC with a non-empty name resolves here"
  (rust-minidump's scan check); cheap: two bisections and one line read.
* `find_cfi(a)` — the STACK CFI INIT block holding `a`, all its delta rows,
  how many are in force and the composed rules (`CfiLookup`).
* `find_stack_win(a)` — the STACK WIN record holding `a`, FRAME_DATA (type 4)
  before FPO (type 0), with the size in force after rust-minidump's repair.

A `SymbolFile` is safe to share between threads: the index is immutable and
the parsed-block caches tolerate concurrent fills. If the text no longer
matches the index (the file was rewritten without changing size or mtime),
the index is rebuilt from the text and the lookup retried.
"""

from __future__ import annotations

import _thread
import mmap
import os
import stat
from bisect import bisect_right, insort
from collections.abc import Callable, Sequence

from inspector.core.cancel import NEVER, CancelToken
from inspector.core.errors import SymbolError
from inspector.core.logs import get_logger
from inspector.core.record import replace
from inspector.core.symbols import line_parser
from inspector.core.symbols.cache import IndexCache, path_text
from inspector.core.symbols.errors import SymbolFileUnreadable
from inspector.core.symbols.index_format import IndexImage, SymbolIdentity
from inspector.core.symbols.postfix import compose_cfi_rules
from inspector.core.symbols.records import (
    MAX_EXAMPLES_PER_KIND,
    CfiLookup,
    CfiRow,
    DamagedLine,
    DamageKind,
    DamageReport,
    FrameSymbol,
    FunctionRecord,
    InlineCall,
    InlineFrameSymbol,
    ModuleRecord,
    PublicRecord,
    RecordCounts,
    SourceLine,
    StackWinRecord,
    StackWinType,
    SymbolInfo,
)
from inspector.core.symbols.sym_text import (
    CfiBlock,
    FunctionBlock,
    IndexArrays,
    Inlinee,
    TextReader,
    covering,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (inspector.core.lazy)
if TYPE_CHECKING:
    from typing import Any, BinaryIO, TypeVar

    _T = TypeVar("_T")

log = get_logger(__name__)

#: Parsed FUNC / CFI blocks kept per file (a stackwalk touches a few dozen).
BLOCK_CACHE_SIZE = 512
#: Bytes read for the MODULE line (here and by the supplier matching a single `.sym` path).
MAX_MODULE_LINE = 4096
U64_MAX = 0xFFFF_FFFF_FFFF_FFFF

_HEX_FIRST = frozenset(b"0123456789abcdefABCDEF")


class _StaleIndex(Exception):
    """The text at an indexed offset is not the record the index promised."""


def parse_module_line(line: bytes) -> ModuleRecord | None:
    """The MODULE record in a `.sym` file's first line (without its newline), or None."""
    line = line.rstrip(b"\r")
    if not line.startswith(b"MODULE"):
        return None
    parsed = line_parser.parse_module(line)
    return None if isinstance(parsed, str) else parsed


class SymbolFile:
    """A `.sym` file opened for lookups. Use `SymbolFile.open`; call `close()` (or use `with`) when done."""

    def __init__(
        self,
        path: str,
        file: BinaryIO,
        reader: TextReader,
        identity: SymbolIdentity,
        image: IndexImage,
        *,
        cache: IndexCache | None,
        index_source: str,
    ) -> None:
        self.path = path
        self._file = file
        self._reader = reader
        self._size = reader.size
        self._identity = identity
        self._cache = cache
        self._lock = _thread.allocate_lock()
        self._index = IndexArrays(image)
        #: "cache" (a valid cached index was used) or "built" (indexed now; "+stored" when cached)
        self.index_source = index_source
        self._base_damage = image.damage()
        self._counts = image.counts()
        self._lazy_counts: dict[DamageKind, int] = {}
        self._lazy_examples: list[DamagedLine] = []
        #: offsets of the blocks whose damaged sub-lines are in `_lazy_counts` (a block is parsed
        #: again after `check_all` or an eviction from the block cache: count it only once)
        self._lazy_counted: set[int] = set()
        #: (offset, 1-based line number) of lines counted before, sorted by offset
        self._line_marks: list[tuple[int, int]] = [(0, 1)]
        self._functions: dict[int, FunctionBlock] = {}
        self._cfi: dict[int, CfiBlock] = {}
        self._files: dict[int, str | None] = {}
        self._origins: dict[int, str | None] = {}
        self.module = parse_module_line(identity.module_line)
        self.info = self._read_info()
        #: how a FUNC / PUBLIC / INLINE_ORIGIN name is shown (files made from objects keep C++
        #: names mangled and demangle the ones looked up: `objects.demangle.display_name`)
        self._shown: Callable[[str], str] | None = None
        if self.info.mangled_names:
            from inspector.core.symbols.objects.demangle import display_name

            self._shown = display_name

    # ---- opening --------------------------------------------------------------

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        *,
        cache: IndexCache | None = None,
        cancel: CancelToken = NEVER,
    ) -> SymbolFile:
        """Open `path` and get its index (cached or built). Raises `SymbolFileUnreadable`.

        Lookups read the file with `os.pread`, not through a mapping, so that
        only the index pages they touch count towards the process's memory.
        """
        path = path_text(path)
        try:
            mode = os.stat(path).st_mode
        except OSError:
            mode = None  # missing or not accessible: opening it says so
        if mode is not None and not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
            # opening a named pipe for reading would wait for a writer, for ever
            raise SymbolFileUnreadable(str(path), "not a regular file (a pipe, socket or device)")
        try:
            f = open(path, "rb")  # noqa: SIM115 - kept open for the lookups
        except OSError as exc:
            raise SymbolFileUnreadable(str(path), exc.strerror or str(exc)) from None
        try:
            st = os.fstat(f.fileno())
            reader = TextReader(f.fileno(), st.st_size)
            identity = SymbolIdentity(
                os.path.realpath(path), st.st_size, st.st_mtime_ns, reader.line_at(0, limit=MAX_MODULE_LINE)
            )
            image = cache.load(identity) if cache is not None else None
            source = "cache"
            if image is None:
                image, stored = _build(f.fileno(), identity, cache, cancel)
                source = "built+stored" if stored else "built"
        except OSError as exc:
            f.close()
            raise SymbolFileUnreadable(str(path), str(exc)) from None
        except BaseException:
            f.close()
            raise
        return cls(
            path,
            f,
            reader,
            identity,
            image,
            cache=cache,
            index_source=source,
        )

    def close(self) -> None:
        self._functions.clear()
        self._cfi.clear()
        self._index.image.release()
        self._file.close()

    def __enter__(self) -> SymbolFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- what the file says about itself ---------------------------------------

    @property
    def counts(self) -> RecordCounts:
        return self._counts

    @property
    def damage(self) -> DamageReport:
        """Damage found so far: at indexing time, plus sub-lines of blocks parsed since."""
        with self._lock:
            if not self._lazy_counts:
                return self._base_damage
            counts = dict(self._base_damage.counts)
            for kind, n in self._lazy_counts.items():
                counts[kind] = counts.get(kind, 0) + n
            examples = tuple(
                sorted((*self._base_damage.examples, *self._lazy_examples), key=lambda d: d.line_number)
            )
        base = self._base_damage
        return DamageReport(
            counts, examples, base.missing_final_newline, base.old_inline_syntax, base.repairs
        )

    def check_all(self) -> DamageReport:
        """Parse every FUNC and STACK CFI block (slow on big files) and return the complete damage report."""
        ix = self._index
        for i in range(len(ix.f_start)):
            self._function_block(i, keep=False)
        for i in range(len(ix.c_start)):
            self._cfi_block(i, keep=False)
        return self.damage

    def _read_info(self) -> SymbolInfo:
        values: dict[str, str] = {}
        code_file = None
        cfi_sources: list[str] = []
        for offset in self._index.info_off:
            parsed = line_parser.parse_info(self._line(offset))
            if isinstance(parsed, str):
                continue
            if parsed.key == "CFI_SOURCE":
                cfi_sources.append(parsed.value)
            values[parsed.key] = parsed.value
            if parsed.key == "CODE_ID":
                code_id, _, rest = parsed.value.partition(" ")
                values["CODE_ID"] = code_id
                code_file = rest.strip() or None
        return SymbolInfo(
            values.get("CODE_ID"),
            code_file,
            values.get("GENERATOR"),
            values.get("URL"),
            tuple(cfi_sources),
            values.get("NAMES") == "mangled",
        )

    # ---- lookups --------------------------------------------------------------------

    def find_function(self, address: int) -> FunctionRecord | None:
        return self._guarded(lambda: self._function(address))

    def find_public(self, address: int) -> PublicRecord | None:
        return self._guarded(lambda: self._public(address))

    def find_line(self, address: int) -> SourceLine | None:
        return self._guarded(lambda: self._find_line(address))

    def find_inlines(self, address: int) -> tuple[InlineCall, ...]:
        return self._guarded(lambda: self._find_inlines(address))

    def symbolize(self, address: int) -> FrameSymbol | None:
        return self._guarded(lambda: self._symbolize(address))

    def has_symbol_at(self, address: int) -> bool:
        return self._guarded(lambda: self._has_symbol_at(address))

    def find_cfi(self, address: int) -> CfiLookup | None:
        return self._guarded(lambda: self._find_cfi(address))

    def find_stack_win(self, address: int) -> StackWinRecord | None:
        return self._guarded(lambda: self._find_stack_win(address))

    # ---- implementation --------------------------------------------------------------

    def _guarded(self, lookup: Callable[[], _T]) -> _T:
        try:
            return lookup()
        except _StaleIndex as exc:
            log.warning("symbol index of %s does not match the file (%s); re-indexing", self.path, exc)
            self._reindex()
            return lookup()

    def _reindex(self) -> None:
        with self._lock:
            image, _ = _build(self._file.fileno(), self._identity, self._cache, NEVER)
            old = self._index
            self._index = IndexArrays(image)
            self._functions.clear()
            self._cfi.clear()
            self._files.clear()
            self._origins.clear()
            self._line_marks = [(0, 1)]  # the text changed: lines counted before may have moved
            self._base_damage = image.damage()
            self._counts = image.counts()
        del old  # other threads may still be reading it; it goes when the last one is done

    def _line(self, offset: int) -> bytes:
        if offset >= self._size:
            raise _StaleIndex(f"offset {offset} past the end of the file")
        return self._reader.line_at(offset).rstrip(b"\r")

    def _record(self, offset: int, parse: Callable[[bytes], _T | str]) -> _T:
        parsed = parse(self._line(offset))
        if isinstance(parsed, str):
            raise _StaleIndex(f"the record at offset {offset} does not parse: {parsed}")
        return parsed

    def _function_index(self, address: int) -> int:
        ix = self._index
        return covering(ix.f_start, ix.f_end, address)

    def _function(self, address: int) -> FunctionRecord | None:
        i = self._function_index(address)
        return None if i < 0 else self._func_record(i)

    def _func_record(self, i: int) -> FunctionRecord:
        record = self._record(self._index.f_off[i], line_parser.parse_func)
        return record if self._shown is None else replace(record, name=self._shown(record.name))

    def _public(self, address: int) -> PublicRecord | None:
        ix = self._index
        j = bisect_right(ix.p_addr, address) - 1
        if j < 0:
            return None
        public_address = ix.p_addr[j]
        f = bisect_right(ix.f_start, address) - 1
        if f >= 0 and ix.f_start[f] >= public_address:
            return None  # a FUNC between the PUBLIC and the address ends the PUBLIC
        record = self._record(ix.p_off[j], line_parser.parse_public)
        return record if self._shown is None else replace(record, name=self._shown(record.name))

    def _has_symbol_at(self, address: int) -> bool:
        i = self._function_index(address)
        if i >= 0:
            return bool(self._record(self._index.f_off[i], line_parser.parse_func).name)
        public = self._public(address)
        return public is not None and bool(public.name)

    def _function_block(self, i: int, *, keep: bool = True) -> FunctionBlock:
        block = self._functions.get(i)
        if block is not None:
            return block
        ix = self._index
        start, end = ix.f_off[i], ix.f_block[i]
        raw = self._reader.read(start, end)
        inlinees: list[Inlinee] = []
        damaged: list[tuple[int, DamageKind, str]] = []  # (line index in the block, kind, reason)
        head, _, body = raw.partition(b"\n")
        if not head.startswith(b"FUNC"):
            raise _StaleIndex(f"no FUNC record at offset {start}")
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
        block = FunctionBlock(lines, inlinees)
        if damaged:
            self._note_lazy_damage(start, damaged)
        if keep:
            self._remember(self._functions, i, block)
        return block

    def _cfi_block(self, i: int, *, keep: bool = True) -> CfiBlock:
        block = self._cfi.get(i)
        if block is not None:
            return block
        ix = self._index
        start, end = ix.c_off[i], ix.c_block[i]
        raw = self._reader.read(start, end)
        rows_raw = raw.split(b"\n")
        init = line_parser.parse_stack_cfi_init(rows_raw[0].rstrip(b"\r"))
        if isinstance(init, str):
            raise _StaleIndex(f"no STACK CFI INIT record at offset {start}")
        rows: list[tuple[int, bytes]] = []
        damaged: list[tuple[int, DamageKind, str]] = []
        for k, row in enumerate(rows_raw[1:], start=1):
            if not row.startswith((b"STACK CFI ", b"STACK CFI\t")):
                continue  # empty, or counted when the file was indexed
            parsed = line_parser.parse_stack_cfi_raw(row)
            if isinstance(parsed, str):
                damaged.append((k, DamageKind.BAD_STACK_CFI, parsed))
                continue
            rows.append(parsed)
        block = CfiBlock(CfiRow(init[0], init[2]), init[1], rows)
        if damaged:
            self._note_lazy_damage(start, damaged)
        if keep:
            self._remember(self._cfi, i, block)
        return block

    def _remember(self, cache: dict[int, Any], key: int, value: Any) -> None:
        if len(cache) >= BLOCK_CACHE_SIZE:
            try:
                del cache[next(iter(cache))]
            except (KeyError, StopIteration, RuntimeError):
                pass
        cache[key] = value

    def _note_lazy_damage(self, block_offset: int, damaged: list[tuple[int, DamageKind, str]]) -> None:
        with self._lock:
            if block_offset in self._lazy_counted:
                return  # this block was parsed before (and evicted, or not kept)
        first_line = self._line_number(block_offset)
        with self._lock:
            if block_offset in self._lazy_counted:
                return  # another thread parsed it meanwhile
            self._lazy_counted.add(block_offset)
            for k, kind, reason in damaged:
                self._lazy_counts[kind] = self._lazy_counts.get(kind, 0) + 1
                if sum(1 for d in self._lazy_examples if d.kind is kind) < MAX_EXAMPLES_PER_KIND:
                    self._lazy_examples.append(DamagedLine(first_line + k, kind, reason))

    def _line_number(self, offset: int) -> int:
        """1-based line number of the line starting at `offset` (counts newlines; only for reports).

        Counting starts at the nearest line counted before, not at the top of the file: a file
        damaged in every block (all parsed by `check_all`, in file order) would otherwise be
        read from the start once per block.
        """
        with self._lock:
            start, number = self._line_marks[bisect_right(self._line_marks, (offset, 1 << 62)) - 1]
        step = 1 << 24
        for lo in range(start, offset, step):
            number += self._reader.read(lo, min(offset, lo + step)).count(b"\n")
        with self._lock:
            insort(self._line_marks, (offset, number))
        return number

    def _find_line(self, address: int) -> SourceLine | None:
        i = self._function_index(address)
        if i < 0:
            return None
        hit = self._function_block(i).line_at(address)
        if hit is None:
            return None
        line_address, size, line, file_id = hit
        return SourceLine(line_address, size, line, file_id, self._file_name(file_id))

    def _find_inlines(self, address: int) -> tuple[InlineCall, ...]:
        i = self._function_index(address)
        if i < 0:
            return ()
        block = self._function_block(i)
        chain = []
        depth = 0
        while (inlinee := block.inlinee_at(depth, address)) is not None:
            call_file_id = None if inlinee.call_file_id < 0 else inlinee.call_file_id
            chain.append(
                InlineCall(
                    depth,
                    inlinee.address,
                    inlinee.size,
                    inlinee.origin_id,
                    self._origin_name(inlinee.origin_id),
                    call_file_id,
                    None if call_file_id is None else self._file_name(call_file_id),
                    inlinee.call_line,
                )
            )
            depth += 1
        return tuple(reversed(chain))

    def _symbolize(self, address: int) -> FrameSymbol | None:
        """rust-minidump's SymbolFile::fill_symbol, then minidump-unwind's reversal of the inlines."""
        i = self._function_index(address)
        if i < 0:
            public = self._public(address)
            if public is None:
                return None
            return FrameSymbol(
                public.name, public.address, public.parameter_size, from_public=True, multiple=public.multiple
            )
        func = self._func_record(i)
        win = self._find_stack_win(address)
        parameter_size = win.parameter_size if win is not None else func.parameter_size
        block = self._function_block(i)
        innermost = block.line_at(address)

        def call_site_file(file_id: int) -> str | None:
            # old INLINE syntax (-1): no call-site file; Breakpad shows the line record's file
            if file_id < 0:
                return None if innermost is None else self._file_name(innermost[3])
            return self._file_name(file_id)

        source_file = source_line = source_base = None
        inlines: list[InlineFrameSymbol] = []
        outer = block.inlinee_at(0, address)
        if outer is not None:
            outer_file = call_site_file(outer.call_file_id)
            if outer_file is not None:
                source_file, source_line, source_base = outer_file, outer.call_line, outer.address
            origin = outer.origin_id
            depth = 1
            while (inlinee := block.inlinee_at(depth, address)) is not None:
                name = self._origin_name(origin)
                if name is not None:
                    inlines.append(
                        InlineFrameSymbol(name, call_site_file(inlinee.call_file_id), inlinee.call_line)
                    )
                origin = inlinee.origin_id
                depth += 1
            name = self._origin_name(origin)
            if name is not None:
                if innermost is None:
                    inlines.append(InlineFrameSymbol(name, None, None))
                else:
                    file = self._file_name(innermost[3])
                    inlines.append(InlineFrameSymbol(name, file, innermost[2] or None))
        elif innermost is not None:
            file = self._file_name(innermost[3])
            if file is not None:
                source_file, source_line, source_base = file, innermost[2], innermost[0]
        inlines.reverse()
        return FrameSymbol(
            func.name,
            func.address,
            parameter_size,
            source_file,
            source_line,
            source_base,
            tuple(inlines),
            multiple=func.multiple,
        )

    def _find_cfi(self, address: int) -> CfiLookup | None:
        ix = self._index
        i = covering(ix.c_start, ix.c_end, address)
        if i < 0:
            return None
        block = self._cfi_block(i)
        applied = bisect_right(block.row_addresses, address)
        rules, error = compose_cfi_rules([block.init.rules, *(row.rules for row in block.rows[:applied])])
        return CfiLookup(block.init, block.size, block.rows, applied, rules, error)

    def _find_stack_win(self, address: int) -> StackWinRecord | None:
        ix = self._index
        for starts, ends, offsets in (
            (ix.w4_start, ix.w4_end, ix.w4_off),
            (ix.w0_start, ix.w0_end, ix.w0_off),
        ):
            i = covering(starts, ends, address)
            if i >= 0:
                w = self._record(offsets[i], line_parser.parse_stack_win)
                win_type = w.win_type
                if win_type is None or w.address != starts[i]:
                    raise _StaleIndex(f"STACK WIN at offset {offsets[i]} is not the indexed record")
                return StackWinRecord(
                    win_type,
                    w.address,
                    ends[i] - starts[i],
                    w.size,
                    w.prologue_size,
                    w.epilogue_size,
                    w.parameter_size,
                    w.saved_register_size,
                    w.local_size,
                    w.max_stack_size,
                    w.has_program_string,
                    w.rest if win_type is StackWinType.FRAME_DATA else None,
                    win_type is StackWinType.FPO and w.rest == "1",
                )
        return None

    def _file_name(self, file_id: int) -> str | None:
        ix = self._index
        return self._name(
            file_id,
            self._files,
            ix.file_id,
            ix.file_off,
            parse=line_parser.parse_file,
            name_of=lambda f: f[1],
        )

    def _origin_name(self, origin_id: int) -> str | None:
        ix = self._index
        return self._name(
            origin_id,
            self._origins,
            ix.origin_id,
            ix.origin_off,
            parse=line_parser.parse_inline_origin,
            name_of=lambda o: o.name if self._shown is None else self._shown(o.name),
        )

    def _name(
        self,
        wanted: int,
        names: dict[int, str | None],
        ids: Sequence[int],
        offsets: Sequence[int],
        *,
        parse: Callable[[bytes], _T | str],
        name_of: Callable[[_T], str],
    ) -> str | None:
        """The name in the FILE / INLINE_ORIGIN record numbered `wanted` (None: there is none).

        `ids` are the sorted record numbers, `offsets` their lines; `names` remembers the answers.
        """
        if wanted in names:
            return names[wanted]
        i = bisect_right(ids, wanted) - 1
        name = None
        if i >= 0 and ids[i] == wanted:
            name = name_of(self._record(offsets[i], parse))
        names[wanted] = name
        return name


def _build(
    fd: int, identity: SymbolIdentity, cache: IndexCache | None, cancel: CancelToken
) -> tuple[IndexImage, bool]:
    from inspector.core.symbols.index_build import build_index  # numpy: cold path only

    if identity.size:
        with mmap.mmap(fd, 0, access=mmap.ACCESS_READ) as data:
            raw = build_index(data, identity, cancel)
    else:
        raw = build_index(b"", identity, cancel)
    stored = cache.store(identity, raw) if cache is not None else False
    try:
        return IndexImage(raw, identity, verify_checksum=False), stored
    except SymbolError as exc:  # the builder wrote something the reader rejects: a bug
        raise SymbolError(f"internal error: fresh symbol index of {identity.path} is invalid: {exc}") from exc


def _kept_line(address: int, size: int) -> bool:
    """rust-minidump drops empty (and overflowing) line records."""
    return size != 0 and address + size - 1 <= U64_MAX
