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

from inspector.core.cancel import NEVER, CancelToken
from inspector.core.errors import SymbolError
from inspector.core.logs import get_logger
from inspector.core.record import replace
from inspector.core.symbols import line_parser
from inspector.core.symbols.cache import IndexCache, settled
from inspector.core.symbols.errors import SymbolFileUnreadable
from inspector.core.symbols.index_format import IndexImage, Section, SymbolIdentity
from inspector.core.symbols.records import (
    MAX_EXAMPLES_PER_KIND,
    CfiLookup,
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
    Damaged,
    FunctionBlock,
    ParsedText,
    StaleIndex,
    TextReader,
    covering,
    parse_cfi_block,
    parse_function_block,
)
from inspector.core.types import path_text

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (inspector.core.lazy)
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import BinaryIO, TypeVar

    _T = TypeVar("_T")
    _B = TypeVar("_B", FunctionBlock, CfiBlock)

log = get_logger(__name__)

#: Parsed FUNC / CFI blocks (and FUNC records, FILE and INLINE_ORIGIN names) kept per file (a
#: stackwalk touches a few dozen)
BLOCK_CACHE_SIZE = 512
#: Bytes read for the MODULE line (here and by the supplier matching a single `.sym` path).
MAX_MODULE_LINE = 4096


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
        #: "cache" (a valid cached index was used) or "built" (indexed now; "+stored" when cached)
        self.index_source = index_source
        self._image = image
        self._text = self._parsed_text(image)
        self._lazy_counts: dict[DamageKind, int] = {}
        self._lazy_examples: list[DamagedLine] = []
        #: offsets of the blocks whose damaged sub-lines are in `_lazy_counts` (a block is read
        #: again after `check_all`, an eviction from the block cache, or from the shared text of
        #: another file: count it only once)
        self._lazy_counted: set[int] = set()
        #: (offset, 1-based line number) of lines counted before, sorted by offset
        self._line_marks: list[tuple[int, int]] = [(0, 1)]
        self.module = self._text.module
        self.info = self._text.info

    def _parsed_text(self, image: IndexImage) -> ParsedText:
        """The parsed text of the file through `image`: the one kept with a shared image, else new.

        Only an image kept for the process is shared, and only for a file changed long enough
        ago that a later change shows in its modification time (as the image itself).
        """
        share = image.shared and settled(self._identity.mtime_ns)
        if share and isinstance(image.derived, ParsedText):
            return image.derived
        info = _read_info(image.array(Section.INFO_OFFSET), self._line)
        shown = None
        if info.mangled_names:
            # files made from objects keep C++ names mangled and demangle the ones looked up
            from inspector.core.symbols.objects.demangle import display_name

            shown = display_name
        text = ParsedText(image, parse_module_line(self._identity.module_line), info, shown, BLOCK_CACHE_SIZE)
        if share:
            image.derived = text
        return text

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
            identity = _identity(path, st, reader)
            image = cache.load(identity) if cache is not None else None
            source = "cache"
            if image is None:
                image, stored = _build(f.fileno(), identity, cache, cancel)
                source = "built+stored" if stored else "built"
            return cls(path, f, reader, identity, image, cache=cache, index_source=source)
        except OSError as exc:
            f.close()
            raise SymbolFileUnreadable(str(path), str(exc)) from None
        except BaseException:
            f.close()
            raise

    def close(self) -> None:
        self._image.release()
        self._file.close()

    def __enter__(self) -> SymbolFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- what the file says about itself ---------------------------------------

    @property
    def counts(self) -> RecordCounts:
        return self._text.counts

    @property
    def damage(self) -> DamageReport:
        """Damage found so far: at indexing time, plus sub-lines of blocks parsed since."""
        base = self._text.damage
        with self._lock:
            if not self._lazy_counts:
                return base
            counts = dict(base.counts)
            for kind, n in self._lazy_counts.items():
                counts[kind] = counts.get(kind, 0) + n
            examples = tuple(sorted((*base.examples, *self._lazy_examples), key=lambda d: d.line_number))
        return DamageReport(
            counts, examples, base.missing_final_newline, base.old_inline_syntax, base.repairs
        )

    def check_all(self) -> DamageReport:
        """Parse every FUNC and STACK CFI block (slow on big files) and return the complete damage report."""
        ix = self._text.index
        for i in range(len(ix.f_start)):
            self._function_block(i, keep=False)
        for i in range(len(ix.c_start)):
            self._cfi_block(i, keep=False)
        return self.damage

    # ---- lookups --------------------------------------------------------------------
    # Each runs its implementation and, when the text turned out not to match the index
    # (`StaleIndex`), indexes the file again and runs it once more (`_retry`).

    def find_function(self, address: int) -> FunctionRecord | None:
        try:
            return self._function(address)
        except StaleIndex as exc:
            return self._retry(exc, self._function, address)

    def find_public(self, address: int) -> PublicRecord | None:
        try:
            return self._public(address)
        except StaleIndex as exc:
            return self._retry(exc, self._public, address)

    def find_line(self, address: int) -> SourceLine | None:
        try:
            return self._find_line(address)
        except StaleIndex as exc:
            return self._retry(exc, self._find_line, address)

    def find_inlines(self, address: int) -> tuple[InlineCall, ...]:
        try:
            return self._find_inlines(address)
        except StaleIndex as exc:
            return self._retry(exc, self._find_inlines, address)

    def symbolize(self, address: int) -> FrameSymbol | None:
        try:
            return self._symbolize(address)
        except StaleIndex as exc:
            return self._retry(exc, self._symbolize, address)

    def has_symbol_at(self, address: int) -> bool:
        try:
            return self._has_symbol_at(address)
        except StaleIndex as exc:
            return self._retry(exc, self._has_symbol_at, address)

    def find_cfi(self, address: int) -> CfiLookup | None:
        try:
            return self._find_cfi(address)
        except StaleIndex as exc:
            return self._retry(exc, self._find_cfi, address)

    def find_stack_win(self, address: int) -> StackWinRecord | None:
        try:
            return self._find_stack_win(address)
        except StaleIndex as exc:
            return self._retry(exc, self._find_stack_win, address)

    # ---- implementation --------------------------------------------------------------

    def _retry(self, exc: StaleIndex, lookup: Callable[[int], _T], address: int) -> _T:
        log.warning("symbol index of %s does not match the file (%s); re-indexing", self.path, exc)
        self._reindex()
        return lookup(address)

    def _reindex(self) -> None:
        with self._lock:
            image, _ = _build(self._file.fileno(), self._identity, self._cache, NEVER)
            old = self._text
            if self._image.derived is old:
                self._image.derived = None  # the next file opened through the stale index parses anew
            # a text of its own (an image just built is never shared): other files may still
            # read the old one; it goes when the last of them is done
            self._image = image
            self._text = ParsedText(image, old.module, old.info, old.shown, BLOCK_CACHE_SIZE)
            self._line_marks = [(0, 1)]  # the text changed: lines counted before may have moved
        del old

    def _line(self, offset: int) -> bytes:
        if offset >= self._size:
            raise StaleIndex(f"offset {offset} past the end of the file")
        return self._reader.line_at(offset).rstrip(b"\r")

    def _record(self, offset: int, parse: Callable[[bytes], _T | str]) -> _T:
        parsed = parse(self._line(offset))
        if isinstance(parsed, str):
            raise StaleIndex(f"the record at offset {offset} does not parse: {parsed}")
        return parsed

    def _function(self, address: int) -> FunctionRecord | None:
        ix = self._text.index
        i = covering(ix.f_start, ix.f_end, address)
        return None if i < 0 else self._func_record(i)

    def _func_record(self, i: int) -> FunctionRecord:
        text = self._text
        record = text.records.get(i)
        if record is None:
            record = self._record(text.index.f_off[i], line_parser.parse_func)
            if text.shown is not None:
                record = replace(record, name=text.shown(record.name))
            text.remember(text.records, i, record)
        return record

    def _public(self, address: int) -> PublicRecord | None:
        text = self._text
        ix = text.index
        j = bisect_right(ix.p_addr, address) - 1
        if j < 0:
            return None
        public_address = ix.p_addr[j]
        f = bisect_right(ix.f_start, address) - 1
        if f >= 0 and ix.f_start[f] >= public_address:
            return None  # a FUNC between the PUBLIC and the address ends the PUBLIC
        record = self._record(ix.p_off[j], line_parser.parse_public)
        return record if text.shown is None else replace(record, name=text.shown(record.name))

    def _has_symbol_at(self, address: int) -> bool:
        ix = self._text.index
        i = covering(ix.f_start, ix.f_end, address)
        if i >= 0:
            return bool(self._func_record(i).name)
        public = self._public(address)
        return public is not None and bool(public.name)

    def _function_block(self, i: int, *, keep: bool = True) -> FunctionBlock:
        text, index = self._text, self._text.index
        return self._block(i, text.functions, index.f_off, index.f_block, parse_function_block, keep=keep)

    def _cfi_block(self, i: int, *, keep: bool = True) -> CfiBlock:
        text, index = self._text, self._text.index
        return self._block(i, text.cfi, index.c_off, index.c_block, parse_cfi_block, keep=keep)

    def _block(
        self,
        i: int,
        kept: dict[int, _B],
        offsets: Sequence[int],
        sizes: Sequence[int],
        parse: Callable[[bytes, int], _B],
        *,
        keep: bool,
    ) -> _B:
        """Block `i` of a kind (FUNC, STACK CFI): kept with the parsed text, else read and parsed."""
        block = kept.get(i)
        if block is None:
            start = offsets[i]
            block = parse(self._reader.read(start, sizes[i]), start)
            if keep:
                self._text.remember(kept, i, block)
        if block.damaged:
            self._note_lazy_damage(offsets[i], block.damaged)
        return block

    def _note_lazy_damage(self, block_offset: int, damaged: tuple[Damaged, ...]) -> None:
        with self._lock:
            if block_offset in self._lazy_counted:
                return  # this block was counted before
        first_line = self._line_number(block_offset)
        with self._lock:
            if block_offset in self._lazy_counted:
                return  # another thread counted it meanwhile
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
        ix = self._text.index
        i = covering(ix.f_start, ix.f_end, address)
        if i < 0:
            return None
        hit = self._function_block(i).line_at(address)
        if hit is None:
            return None
        line_address, size, line, file_id = hit
        return SourceLine(line_address, size, line, file_id, self._file_name(file_id))

    def _find_inlines(self, address: int) -> tuple[InlineCall, ...]:
        ix = self._text.index
        i = covering(ix.f_start, ix.f_end, address)
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
        ix = self._text.index
        i = covering(ix.f_start, ix.f_end, address)
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
        outer = block.inlinee_at(0, address)
        if outer is None:  # no inlines: the line record's location, when its file is known
            file = None if innermost is None else self._file_name(innermost[3])
            if innermost is None or file is None:
                return FrameSymbol(func.name, func.address, parameter_size, multiple=func.multiple)
            line_address, _, line, _ = innermost
            return FrameSymbol(
                func.name, func.address, parameter_size, file, line, line_address, multiple=func.multiple
            )
        source_file = source_line = source_base = None
        outer_file = self._call_site_file(outer.call_file_id, innermost)
        if outer_file is not None:
            source_file, source_line, source_base = outer_file, outer.call_line, outer.address
        inlines: list[InlineFrameSymbol] = []
        origin = outer.origin_id
        depth = 1
        while (inlinee := block.inlinee_at(depth, address)) is not None:
            name = self._origin_name(origin)
            if name is not None:
                call_file = self._call_site_file(inlinee.call_file_id, innermost)
                inlines.append(InlineFrameSymbol(name, call_file, inlinee.call_line))
            origin = inlinee.origin_id
            depth += 1
        name = self._origin_name(origin)
        if name is not None:
            if innermost is None:
                inlines.append(InlineFrameSymbol(name, None, None))
            else:
                inlines.append(InlineFrameSymbol(name, self._file_name(innermost[3]), innermost[2] or None))
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

    def _call_site_file(self, file_id: int, innermost: tuple[int, int, int, int] | None) -> str | None:
        # old INLINE syntax (-1): no call-site file; Breakpad shows the line record's file
        if file_id < 0:
            return None if innermost is None else self._file_name(innermost[3])
        return self._file_name(file_id)

    def _find_cfi(self, address: int) -> CfiLookup | None:
        ix = self._text.index
        i = covering(ix.c_start, ix.c_end, address)
        return None if i < 0 else self._cfi_block(i).lookup(address)

    def _find_stack_win(self, address: int) -> StackWinRecord | None:
        ix = self._text.index
        for starts, ends, offsets in (
            (ix.w4_start, ix.w4_end, ix.w4_off),
            (ix.w0_start, ix.w0_end, ix.w0_off),
        ):
            i = covering(starts, ends, address)
            if i >= 0:
                w = self._record(offsets[i], line_parser.parse_stack_win)
                win_type = w.win_type
                if win_type is None or w.address != starts[i]:
                    raise StaleIndex(f"STACK WIN at offset {offsets[i]} is not the indexed record")
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
        """The name in the FILE record `file_id` (None: there is none)."""
        text = self._text
        return self._named(text.files, text.index.file_id, text.index.file_off, file_id, self._file_record)

    def _origin_name(self, origin_id: int) -> str | None:
        """The name in the INLINE_ORIGIN record `origin_id` (None: there is none), as shown."""
        text = self._text
        return self._named(
            text.origins, text.index.origin_id, text.index.origin_off, origin_id, self._origin_record
        )

    def _named(
        self,
        remembered: dict[int, str | None],
        ids: Sequence[int],
        offsets: Sequence[int],
        key: int,
        name_at: Callable[[int], str],
    ) -> str | None:
        """The name of record `key` (ids sorted, the last of equal ids wins), remembered per file."""
        if key in remembered:
            return remembered[key]
        i = bisect_right(ids, key) - 1
        name = name_at(offsets[i]) if i >= 0 and ids[i] == key else None
        return self._text.remember(remembered, key, name)

    def _file_record(self, offset: int) -> str:
        return self._record(offset, line_parser.parse_file)[1]

    def _origin_record(self, offset: int) -> str:
        name = self._record(offset, line_parser.parse_inline_origin).name
        shown = self._text.shown
        return name if shown is None else shown(name)


def _read_info(offsets: Sequence[int], line: Callable[[int], bytes]) -> SymbolInfo:
    """The file's INFO lines, at `offsets` (`line` reads the line at an offset)."""
    values: dict[str, str] = {}
    code_file = None
    cfi_sources: list[str] = []
    for offset in offsets:
        parsed = line_parser.parse_info(line(offset))
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


#: the path a file was opened by -> (the (device, inode, size, mtime) of the file found there, its
#: identity), for the whole process: every dump of a batch opens the same files, and the real path
#: costs an `lstat` per component. Kept for files that had settled (`cache.settled`): the same
#: inode, size and time then mean the same text (the rule the index cache itself follows).
_IDENTITIES: dict[str, tuple[tuple[int, int, int, int], SymbolIdentity]] = {}
_IDENTITIES_LOCK = _thread.allocate_lock()
#: paths kept at most (the oldest goes first)
MAX_KEPT_IDENTITIES = 4096


def _identity(path: str, st: os.stat_result, reader: TextReader) -> SymbolIdentity:
    """The identity of the file opened at `path` (`st`: its `fstat`; `reader`: its text)."""
    key = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    known = _IDENTITIES.get(path)
    if known is not None and known[0] == key:
        return known[1]
    identity = SymbolIdentity(
        os.path.realpath(path), st.st_size, st.st_mtime_ns, reader.line_at(0, limit=MAX_MODULE_LINE)
    )
    if settled(st.st_mtime_ns):
        with _IDENTITIES_LOCK:
            while len(_IDENTITIES) >= MAX_KEPT_IDENTITIES:
                del _IDENTITIES[next(iter(_IDENTITIES))]
            _IDENTITIES[path] = (key, identity)
    return identity


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
