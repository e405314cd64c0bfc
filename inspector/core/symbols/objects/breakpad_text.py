"""Turn the objects of one module into Breakpad symbol text, as Mozilla's `dump_syms --inlines` would.

Why text: a `.sym` file and an object must end up as the same kind of index with one lookup
protocol. Writing the records dump_syms would write and indexing them with the `.sym` indexer
gives exactly that — the same FUNC/PUBLIC/INLINE/STACK CFI semantics (rust-minidump's), the same
on-disk index, the same lookups, traces and reports — and "same answers as the `.sym` route"
then only depends on the records being the same. dump_syms is built on the same library
(symbolic), so:

* STACK CFI / STACK WIN: symbolic's `CfiCache` *is* that text (its `AsciiCfiWriter` is what
  dump_syms calls); it is copied as it is.
* FUNC, line, INLINE, INLINE_ORIGIN, FILE and PUBLIC records: rebuilt from the SymCache that
  symbolic builds from the same functions and symbols dump_syms walks (`symcache_reader`).
  Each SymCache range is a run of instructions with one innermost source location and its chain
  of call sites; a FUNC is a run of ranges of one outermost function, its line records are the
  ranges' innermost locations, its INLINE records the call chains, and the ranges of
  symbol-table entries are the PUBLIC records. Names are cleaned as dump_syms does but C++ names are
  left mangled, for `SymbolFile` to demangle the few a walk looks up (`INFO NAMES mangled`,
  `demangle.display_name`); file names joined and normalised as it does (`source_path`).
* `<.plt ELF section in NAME>` PUBLICs for executable ELF sections that start without a symbol,
  and `<unknown in NAME>` after the last symbol of a PE/PDB, as dump_syms adds them.

What cannot be rebuilt from a SymCache, and so may differ from dump_syms (documented in
`tests/golden/KNOWN_DIFFERENCES.md`): the `m` (multiple) flag, the size of a function whose last
bytes hold a symbol-table entry of their own, and parameter sizes of Windows functions.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from inspector.core.cancel import NEVER, CancelToken
from inspector.core.symbols.objects.demangle import (
    LANG_UNKNOWN_SYMBOL,
    MANGLED_NAMES_INFO,
    stored_function_name,
)
from inspector.core.symbols.objects.reading import ObjectInfo
from inspector.core.symbols.objects.symcache_reader import NONE, SymCacheTables

GENERATOR = "crash-inspector objects (symbolic)"

_OS = {"elf": "Linux", "macho": "mac", "pe": "windows", "pdb": "windows"}


@dataclass(slots=True)
class _Symbol:
    """One FUNC or PUBLIC at an address (dump_syms' `Symbol`)."""

    address: int
    name: str
    public: bool
    size: int = 0
    synthetic: bool = False
    lines: list[tuple[int, int, int, int]] = field(default_factory=list)  # address, size, line, file id
    inlines: list[list[int]] = field(
        default_factory=list
    )  # depth, call line, call file, origin, address, size


@dataclass(slots=True)
class ModuleText:
    """The FILE, INLINE_ORIGIN, FUNC and PUBLIC records of one module, before writing (its STACK
    records are symbolic's CfiCache text, written after them as they are: `write_cfi`)."""

    symbols: dict[int, _Symbol] = field(default_factory=dict)
    files: dict[str, int] = field(default_factory=dict)
    origins: dict[str, int] = field(default_factory=dict)

    def file_id(self, name: str) -> int:
        found = self.files.get(name)
        if found is None:
            found = self.files[name] = len(self.files)
        return found

    def origin_id(self, name: str) -> int:
        found = self.origins.get(name)
        if found is None:
            found = self.origins[name] = len(self.origins)
        return found

    def is_inside_function(self, address: int, starts: Sequence[int], ends: Sequence[int]) -> bool:
        from bisect import bisect_left

        i = bisect_left(starts, address) - 1  # the last symbol starting strictly below `address`
        return i >= 0 and address < ends[i]


def source_path(comp_dir: str | None, directory: str | None, name: str, *, windows: bool) -> str:
    """dump_syms' `SourceFiles::get_path` without canonicalising against this machine's files.

    The directory is joined to the compilation directory unless absolute, the name to that,
    then `.` and `..` are resolved lexically (Cargo's `normalize_path`, which dump_syms falls
    back to when the file is not on the machine).
    """
    sep = "\\" if windows else "/"
    seps = "/\\" if windows else "/"
    dir_ = directory or ""

    def absolute(path: str) -> bool:
        if path.startswith("/"):
            return True
        return windows and (path.startswith("\\") or (len(path) > 2 and path[1] == ":"))

    def join(left: str, right: str) -> str:
        left = left.rstrip(seps)
        right = right.lstrip(seps)
        if windows and left.startswith("/"):
            return f"{left}/{right}"
        return f"{left}{sep}{right}"

    if not absolute(dir_) and comp_dir:
        dir_ = join(comp_dir, dir_)
    path = join(dir_, name)
    if windows:
        return path  # dump_syms does not normalise paths of another platform
    rooted = path.startswith("/")
    parts: list[str] = []
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if parts:
                parts.pop()
            continue
        parts.append(part)
    joined = "/".join(parts)
    return "/" + joined if rooted else joined


def add_symcache(
    text: ModuleText, tables: SymCacheTables, info: ObjectInfo, *, cancel: CancelToken = NEVER
) -> None:
    """Add the FUNC and PUBLIC records a SymCache describes (dump_syms' `collect_functions/publics`)."""
    import numpy as np

    starts = tables.range_start.astype(np.int64)
    n = len(starts)
    if n == 0:
        return
    offset = tables.call_locations
    loc_func = tables.location_function
    loc_into = tables.location_inlined_into
    fn_lang = tables.function_language
    n_functions = len(fn_lang)
    n_locations = len(loc_func)

    own = np.arange(offset, offset + n, dtype=np.int64)
    func = loc_func[own].astype(np.int64)
    sentinel = func == NONE
    valid_func = (func >= 0) & (func < n_functions)
    # the outermost function of each range: follow the call sites (bounded by the chain's length)
    root = func.copy()
    cursor = loc_into[own].astype(np.int64)
    for _ in range(256):
        live = (cursor != NONE) & (cursor < n_locations)
        if not live.any():
            break
        root[live] = loc_func[cursor[live]]
        cursor[live] = loc_into[cursor[live]]
        cursor[~live] = NONE
    root_ok = valid_func & (root >= 0) & (root < n_functions)
    safe_root = np.where(root_ok, root, 0)
    is_symbol = root_ok & (fn_lang[safe_root] == LANG_UNKNOWN_SYMBOL)
    is_function = root_ok & ~is_symbol & ~sentinel
    ends = np.empty(n, dtype=np.int64)
    ends[:-1] = starts[1:]
    ends[-1] = starts[-1] + 1  # the last range has no end: only a sentinel or a symbol is last

    # A symbol-table entry inside a function (no range of its own started there) split the
    # function's range in the SymCache: it is part of the function, as dump_syms sees it.
    absorbed = np.zeros(n, dtype=bool)
    if n > 2:
        middle = is_symbol[1:-1] & is_function[:-2] & is_function[2:] & (root[:-2] == root[2:])
        absorbed[1:-1] = middle

    names: dict[int, str] = {}

    def fn_name(index: int) -> str:
        found = names.get(index)
        if found is None:
            raw = tables.string(int(tables.function_name[index])) or ""
            found = stored_function_name(raw)
            names[index] = found
        return found

    windows = info.file_format in ("pe", "pdb")
    file_names: dict[int, int] = {}

    def file_id(index: int) -> int | None:
        if index == NONE or index >= len(tables.file_name):
            return None
        found = file_names.get(index)
        if found is None:
            name = tables.string(int(tables.file_name[index])) or ""
            path = source_path(
                tables.string(int(tables.file_comp_dir[index])),
                tables.string(int(tables.file_directory[index])),
                name,
                windows=windows,
            )
            found = file_names[index] = text.file_id(path)
        return found

    # Symbol-table entries, all at once: a stripped library has nothing else (libtorch_cpu: 342K),
    # and a name per range through Python calls cost seconds. Their names are kept raw: the
    # suffixes dump_syms cuts off mangled names are cut when a lookup shows one (`display_name`).
    # A function at the same address replaces the entry (below); the first entry at an address wins.
    public_ranges = np.flatnonzero(is_symbol & ~absorbed)
    if len(public_ranges):
        public_names = tables.strings_at(tables.function_name[root[public_ranges]])
        symbols = text.symbols
        for address, name in zip(starts[public_ranges].tolist(), public_names, strict=True):
            if address not in symbols:
                symbols[address] = _Symbol(address, name, True)
        cancel.check()

    starts_list = starts.tolist()
    ends_list = ends.tolist()
    end_of_run = -1
    for count, i in enumerate(np.flatnonzero(is_function).tolist()):
        if count % 65536 == 0:
            cancel.check()
        if i <= end_of_run:
            continue  # inside the run of the function before
        # a run of ranges of one outermost function (symbol entries inside it absorbed)
        head = int(root[i])
        j = i
        while j + 1 < n and (absorbed[j + 1] or (is_function[j + 1] and int(root[j + 1]) == head)):
            j += 1
        while absorbed[j]:
            j -= 1
        _add_function(text, tables, i, j, starts_list, ends_list, absorbed, fn_name, file_id, head, own)
        end_of_run = j


def _add_function(  # noqa: PLR0917 - the run's arrays, passed once per FUNC
    text: ModuleText,
    tables: SymCacheTables,
    first: int,
    last: int,
    starts: list[int],
    ends: list[int],
    absorbed: Any,
    fn_name: Any,
    file_id: Any,
    head: int,
    own: Any,
) -> None:
    address = starts[first]
    end = ends[last]
    if address == 0 or (address in text.symbols and not text.symbols[address].public):
        return  # dump_syms skips functions at 0 and keeps the first FUNC at an address
    symbol = _Symbol(address, fn_name(head), public=False, size=end - address)
    loc_file = tables.location_file
    loc_line = tables.location_line
    loc_func = tables.location_function
    loc_into = tables.location_inlined_into
    n_locations = len(loc_func)
    previous: tuple[int, int, int, int] | None = None
    open_inlines: dict[int, list[int]] = {}  # depth → [call site, origin, start, end, record index]
    for index in range(first, last + 1):
        k = index
        if absorbed[k]:
            continue  # continues the previous range (its line record grows over it)
        start = starts[k]
        stop = ends[k]
        while k + 1 <= last and absorbed[k + 1]:
            k += 1
            stop = ends[k]
        location = int(own[k])
        key = (
            int(loc_file[location]),
            int(loc_line[location]),
            int(loc_func[location]),
            int(loc_into[location]),
        )
        line_file = file_id(key[0])
        if line_file is not None:
            if (
                previous is not None
                and previous == key
                and symbol.lines
                and symbol.lines[-1][0] + symbol.lines[-1][1] == start
            ):
                a, _size, ln, f = symbol.lines[-1]
                symbol.lines[-1] = (a, stop - a, ln, f)
            else:
                symbol.lines.append((start, stop - start, key[1], line_file))
        previous = key
        # the chain of call sites, outermost first
        chain: list[int] = []
        cursor = key[3]
        while cursor != NONE and cursor < n_locations and len(chain) < 256:
            chain.append(cursor)
            cursor = int(loc_into[cursor])
        chain.reverse()
        if not chain:
            open_inlines.clear()
            continue
        callees = [*chain[1:], location]
        for depth, (call_site, callee) in enumerate(zip(chain, callees, strict=True)):
            origin = int(loc_func[callee])
            current = open_inlines.get(depth)
            if (
                current is not None
                and current[0] == call_site
                and current[1] == origin
                and current[3] == start
            ):
                current[3] = stop
                record = symbol.inlines[current[4]]
                record[5] = stop - record[4]
                continue
            call_file = file_id(int(loc_file[call_site]))
            open_inlines[depth] = [call_site, origin, start, stop, len(symbol.inlines)]
            symbol.inlines.append(
                [
                    depth,
                    int(loc_line[call_site]),
                    -1 if call_file is None else call_file,
                    text.origin_id(fn_name(origin)),
                    start,
                    stop - start,
                ]
            )
        for depth in [d for d in open_inlines if d >= len(chain)]:
            del open_inlines[depth]
    text.symbols[address] = symbol


def add_section_symbols(text: ModuleText, info: ObjectInfo, name: str) -> None:
    """dump_syms' `add_executable_section_symbols`: name the start of executable sections with no symbol."""
    if info.file_format == "elf":
        shown = name or "unknown"
        for section, address, _size, executable in info.sections:
            if executable and address not in text.symbols:
                text.symbols[address] = _Symbol(
                    address, f"<{section or 'unknown'} ELF section in {shown}>", public=True, synthetic=True
                )
    elif info.file_format in ("pe", "pdb") and text.symbols:
        last = text.symbols[max(text.symbols)]
        address = last.address + (last.size or 1)
        if address not in text.symbols:
            label = f"<unknown in {name}>" if name else "<unknown>"
            text.symbols[address] = _Symbol(address, label, public=True, synthetic=True)


def drop_publics_inside_functions(text: ModuleText) -> None:
    """A PUBLIC inside a FUNC is not written (dump_syms' `is_inside_symbol`)."""
    if all(symbol.public for symbol in text.symbols.values()):
        return  # a stripped library: nothing to do (and 342K entries to sort)
    addresses = sorted(text.symbols)
    last_end = -1
    for address in addresses:
        symbol = text.symbols[address]
        if symbol.public and address < last_end:
            del text.symbols[address]
            continue
        if not symbol.public:
            last_end = max(last_end, address + symbol.size)


def merge_into(left: ModuleText, right: ModuleText) -> None:
    """Add `right`'s records to `left` (dump_syms' `ObjectInfo::merge`, `left` having more symbols)."""
    file_map = {old: left.file_id(name) for name, old in right.files.items()}
    origin_map = {old: left.origin_id(name) for name, old in right.origins.items()}
    starts = sorted(a for a, s in left.symbols.items() if not s.public)
    ends = [left.symbols[a].address + left.symbols[a].size for a in starts]
    for address, symbol in sorted(right.symbols.items()):
        existing = left.symbols.get(address)
        if symbol.public:
            if left.is_inside_function(address, starts, ends):
                continue
            if existing is None or (existing.synthetic and not symbol.synthetic):
                left.symbols[address] = symbol
            continue
        symbol.lines = [(a, s, ln, file_map.get(f, f)) for a, s, ln, f in symbol.lines]
        symbol.inlines = [
            [d, ln, file_map.get(cf, cf) if cf >= 0 else cf, origin_map.get(o, o), a, s]
            for d, ln, cf, o, a, s in symbol.inlines
        ]
        if existing is None or existing.public:
            left.symbols[address] = symbol


def write_header(
    out: io.BufferedWriter | Any,
    *,
    info: ObjectInfo,
    debug_file: str,
    debug_id: str,
    code_id: str | None,
    code_file: str | None,
    extra_info: Iterable[str] = (),
) -> None:
    """The MODULE and INFO lines (dump_syms' order: MODULE, INFO, FILE, INLINE_ORIGIN, FUNC/PUBLIC, STACK)."""
    os_name = _OS.get(info.file_format, "unknown")
    write = out.write
    write(f"MODULE {os_name} {info.arch} {debug_id} {debug_file}\n".encode())
    if code_id:
        tail = f" {code_file}" if code_file and info.file_format in ("pe", "pdb") else ""
        write(f"INFO CODE_ID {code_id.upper()}{tail}\n".encode())
    write(f"INFO GENERATOR {GENERATOR}\n".encode())
    write(f"INFO {MANGLED_NAMES_INFO}\n".encode())
    for info_line in extra_info:
        write(f"INFO {_one_line(info_line)}\n".encode())


def write_records(out: io.BufferedWriter | Any, text: ModuleText) -> None:
    """The FILE, INLINE_ORIGIN, FUNC (with its INLINE and line records) and PUBLIC lines."""
    write = out.write
    chunk: list[str] = []
    for name, number in text.files.items():
        chunk.append(f"FILE {number} {_one_line(name)}\n")
    for name, number in text.origins.items():
        chunk.append(f"INLINE_ORIGIN {number} {_one_line(name)}\n")
    for address in sorted(text.symbols):
        symbol = text.symbols[address]
        if symbol.public:
            chunk.append(f"PUBLIC {address:x} 0 {_one_line(symbol.name)}\n")
            continue
        chunk.append(f"FUNC {address:x} {symbol.size:x} 0 {_one_line(symbol.name)}\n")
        inlines = sorted(symbol.inlines, key=lambda x: (x[0], x[4]))
        for depth, call_line, call_file, origin, start, size in inlines:
            chunk.append(f"INLINE {depth} {call_line} {max(call_file, 0)} {origin} {start:x} {size:x}\n")
        for start, size, line_number, file in symbol.lines:
            chunk.append(f"{start:x} {size:x} {line_number} {file}\n")
        if len(chunk) > 4096:
            write("".join(chunk).encode("utf-8", "replace"))
            chunk.clear()
    write("".join(chunk).encode("utf-8", "replace"))


def _one_line(text: str) -> str:
    if "\n" in text or "\r" in text:
        return text.replace("\r", " ").replace("\n", " ")
    return text
