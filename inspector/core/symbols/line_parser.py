"""The grammar of single Breakpad symbol-file lines, as rust-minidump parses them.

Each `parse_*` takes one line as bytes (without its `\\n`; trailing `\\r`s are
allowed, as rust-minidump's end-of-line accepts `\\r*\\n`) and returns the
parsed fields, or a reason string when the line is malformed. These are the
reference for what a valid line is: the vectorised index builder handles the
common, regular spelling itself and sends every other line here.

Grammar facts (breakpad-symbols `sym_file/parser.rs`):
* fields are separated by runs of spaces or tabs;
* addresses are 1–16 hex digits, sizes and parameter sizes 1–8 hex digits,
  line numbers and ids 1–10 decimal digits fitting in u32;
* `FUNC`/`PUBLIC` may carry an `m` ("multiple") flag before the address;
* a name is the rest of the line and may contain spaces (it may be empty).

Where rust-minidump only knows the new INLINE syntax, the old one is detected
as Breakpad does (`basic_source_line_resolver.cc`): an `INLINE_ORIGIN` whose
second field is a number has a file id before the name; an `INLINE` with an
odd number of fields after the keyword has no call-site file id.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from inspector.core.record import record
from inspector.core.symbols.records import (
    FunctionRecord,
    ModuleRecord,
    PublicRecord,
    StackWinType,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (inspector.core.lazy)
if TYPE_CHECKING:
    from typing import Any

U32_MAX = 0xFFFF_FFFF


class _Pattern:
    """A regular expression of this module, compiled when first used.

    Compiling is pure Python in `re` (about 0.6 M instructions for one of these): all of them
    made every process that imports the symbol side pay ~2 ms, though a walk from a warm index
    uses about half and a process that reads no symbol file none. The first use compiles the
    pattern and puts the compiled one in this module's globals in its place, so every later use
    is a plain `re.Pattern` call. `pattern` is there before that (patterns are built from others).
    """

    __slots__ = ("compiled", "flags", "name", "pattern")

    def __init__(self, name: str, pattern: bytes, flags: int = 0) -> None:
        self.name = name
        self.pattern = pattern
        self.flags = flags
        self.compiled: re.Pattern[bytes] | None = None

    def _compiled(self) -> re.Pattern[bytes]:
        if self.compiled is None:
            self.compiled = re.compile(self.pattern, self.flags)
            globals()[self.name] = self.compiled
        return self.compiled

    def fullmatch(self, line: bytes) -> re.Match[bytes] | None:
        return self._compiled().fullmatch(line)

    def findall(self, text: bytes) -> list[Any]:
        return self._compiled().findall(text)

    def finditer(self, text: bytes) -> Iterator[re.Match[bytes]]:
        return self._compiled().finditer(text)


def _pattern(name: str, pattern: bytes, flags: int = 0) -> re.Pattern[bytes]:
    """`re.compile(pattern, flags)` for the module global `name`, on first use (`_Pattern`)."""
    return _Pattern(name, pattern, flags)  # type: ignore[return-value]  # the same calls


_S = rb"[ \t]+"
_HEX64 = rb"([0-9A-Fa-f]{1,16})"
_HEX32 = rb"([0-9A-Fa-f]{1,8})"
_DEC32 = rb"([0-9]{1,10})"
_REST = rb"(.*?)\r*"

_MODULE = _pattern(
    "_MODULE",
    rb"MODULE" + _S + rb"([^ \t]+)" + _S + rb"([^ \t]+)" + _S + rb"([0-9A-Fa-f]+)" + _S + _REST,
    re.S,
)
_INFO = _pattern("_INFO", rb"INFO" + _S + _REST, re.S)
_FILE = _pattern("_FILE", rb"FILE" + _S + _DEC32 + _S + _REST, re.S)
_INLINE_ORIGIN = _pattern("_INLINE_ORIGIN", rb"INLINE_ORIGIN" + _S + _DEC32 + _S + _REST, re.S)
_OLD_ORIGIN_REST = _pattern("_OLD_ORIGIN_REST", rb"(-?[0-9]*)[ \t]+" + _REST, re.S)
_FUNC = _pattern(
    "_FUNC", rb"FUNC" + _S + rb"(?:(m)" + _S + rb")?" + _HEX64 + _S + _HEX32 + _S + _HEX32 + _S + _REST, re.S
)
_PUBLIC = _pattern(
    "_PUBLIC", rb"PUBLIC" + _S + rb"(?:(m)" + _S + rb")?" + _HEX64 + _S + _HEX32 + _S + _REST, re.S
)
_LINE = _pattern("_LINE", _HEX64 + _S + _HEX32 + _S + _DEC32 + _S + _DEC32 + rb"\r*")
_CFI_INIT = _pattern("_CFI_INIT", rb"STACK CFI INIT" + _S + _HEX64 + _S + _HEX32 + _S + _REST, re.S)
_CFI = _pattern("_CFI", rb"STACK CFI" + _S + _HEX64 + _S + _REST, re.S)
_WIN = _pattern(
    "_WIN",
    rb"STACK WIN" + _S + rb"([0-9A-Fa-f])" + _S + _HEX64 + _S + (_HEX32 + _S) * 7 + rb"([0-9])" + _S + _REST,
    re.S,
)
_HEX_DIGITS = b"0123456789abcdefABCDEF"


def _decimal(token: bytes) -> bool:
    """`[0-9]{1,10}` (`bytes.isdigit` knows only ASCII digits)."""
    return 0 < len(token) <= 10 and token.isdigit()


def _hex(token: bytes, most: int) -> bool:
    """`[0-9A-Fa-f]{1,most}`: nothing is left once the hex digits are stripped from its ends."""
    return 0 < len(token) <= most and not token.strip(_HEX_DIGITS)


def text(raw: bytes) -> str:
    """Decode a name or path as UTF-8, replacing invalid bytes (never raises)."""
    return raw.decode("utf-8", "replace")


def strip_eol(line: bytes) -> bytes:
    """The line without trailing `\\r`s."""
    return line.rstrip(b"\r")


def _u32(raw: bytes) -> int | None:
    value = int(raw)
    return value if value <= U32_MAX else None


def parse_module(line: bytes) -> ModuleRecord | str:
    m = _MODULE.fullmatch(line)
    if m is None:
        return "expected MODULE <os> <cpu> <debug id> <debug file>"
    return ModuleRecord(text(m[1]), text(m[2]), text(m[3]), text(m[4]))


@record
class InfoLine:
    key: str  # "CODE_ID", "GENERATOR", "URL" or another word
    value: str  # the rest of the line after the key


def parse_info(line: bytes) -> InfoLine | str:
    m = _INFO.fullmatch(line)
    if m is None:
        return "expected INFO <key> <value>"
    rest = text(m[1])
    key, _, value = rest.partition(" ")
    return InfoLine(key, value.strip(" \t"))


def parse_file(line: bytes) -> tuple[int, str] | str:
    m = _FILE.fullmatch(line)
    if m is None or (file_id := _u32(m[1])) is None:
        return "expected FILE <id> <name>"
    return file_id, text(m[2])


@record
class InlineOriginLine:
    origin_id: int
    name: str
    old_syntax: bool
    file_id: int | None  # only in the old syntax


def parse_inline_origin(line: bytes) -> InlineOriginLine | str:
    m = _INLINE_ORIGIN.fullmatch(line)
    if m is None or (origin_id := _u32(m[1])) is None:
        return "expected INLINE_ORIGIN <id> [<file id>] <name>"
    rest = m[2]
    first = rest.split(b" ", 1)[0]
    if first and all(48 <= c <= 57 or (c == 45 and i == 0) for i, c in enumerate(first)):
        # Breakpad: a numeric second field means the old syntax `<id> <file id> <name>`
        old = _OLD_ORIGIN_REST.fullmatch(rest)
        if old is None or not _decimal(old[1][1:] if old[1].startswith(b"-") else old[1]):
            return "old-syntax INLINE_ORIGIN without a name"
        return InlineOriginLine(origin_id, text(old[2]), True, int(old[1]))
    return InlineOriginLine(origin_id, text(rest), False, None)


def parse_func(line: bytes) -> FunctionRecord | str:
    m = _FUNC.fullmatch(line)
    if m is None:
        return "expected FUNC [m] <address> <size> <parameter size> <name>"
    return FunctionRecord(int(m[2], 16), int(m[3], 16), int(m[4], 16), text(m[5]), m[1] is not None)


def parse_public(line: bytes) -> PublicRecord | str:
    m = _PUBLIC.fullmatch(line)
    if m is None:
        return "expected PUBLIC [m] <address> <parameter size> <name>"
    return PublicRecord(int(m[2], 16), int(m[3], 16), text(m[4]), m[1] is not None)


def public_sort_key(line: bytes) -> tuple[bytes, int] | None:
    """rust-minidump's tie-break between PUBLICs at one address: (name bytes, parameter size)."""
    m = _PUBLIC.fullmatch(line)
    return None if m is None else (m[4], int(m[3], 16))


#: The well-formed line records among a block's lines, all in one search (`line_records`).
_LINE_ROWS = _pattern("_LINE_ROWS", rb"^" + _LINE.pattern + rb"$", re.M)
#: Lines that start with a hex digit: the lines a block's line records are looked for among.
_HEX_ROW_START = _pattern("_HEX_ROW_START", rb"^[0-9A-Fa-f]", re.M)


def line_records(block: bytes) -> list[tuple[int, int, int, int]] | None:
    """Every line record of `block` (its lines, `\n`-separated), in order, when every line that
    starts with a hex digit is one (`parse_line_record`); else None: parse those lines one by one.

    One regular-expression pass and one conversion per field instead of a match per line: a FUNC
    of the torch libraries has thousands of line records, and the walk parsed them on its thread
    in one stretch of pure Python (10 ms), keeping the GUI thread waiting for the GIL.
    """
    rows = _LINE_ROWS.findall(block)
    if len(rows) != len(_HEX_ROW_START.findall(block)):
        return None  # a damaged one among them
    records = [(int(a, 16), int(s, 16), int(n), int(f)) for a, s, n, f in rows]
    if any(n > U32_MAX or f > U32_MAX for _, _, n, f in records):
        return None
    return records


def inline_lines(block: bytes) -> Iterator[tuple[int, bytes]]:
    """(1-based line number in `block`, line) of each of its lines that starts with INLINE: found by
    searching for them, not by looking at each of the thousands of line records around them."""
    number, last = 1, 0
    start = 0 if block.startswith(b"INLINE") else _next_inline(block, 0)
    while start >= 0:
        end = block.find(b"\n", start)
        number += block.count(b"\n", last, start)
        last = start
        yield number, block[start:] if end < 0 else block[start:end]
        start = -1 if end < 0 else _next_inline(block, end)


def _next_inline(block: bytes, after: int) -> int:
    """Where the next line of `block` that starts with INLINE begins, after `after`; -1: none."""
    found = block.find(b"\nINLINE", after)
    return -1 if found < 0 else found + 1


def parse_line_record(line: bytes) -> tuple[int, int, int, int] | str:
    """`<address> <size> <line> <file id>` → (address, size, line, file id)."""
    m = _LINE.fullmatch(line)
    if m is None:
        return "expected <address> <size> <line> <file id>"
    line_no, file_id = _u32(m[3]), _u32(m[4])
    if line_no is None or file_id is None:
        return "line or file id does not fit in 32 bits"
    return int(m[1], 16), int(m[2], 16), line_no, file_id


@record
class InlineLine:
    depth: int
    call_line: int
    call_file_id: int | None  # None: old syntax, or the file id -1 Breakpad allows
    origin_id: int
    ranges: tuple[tuple[int, int], ...]  # (address, size)
    old_syntax: bool


def parse_inline(line: bytes) -> InlineLine | str:
    """`INLINE <depth> <call line> [<call file id>] <origin id> (<address> <size>)+`."""
    tokens = strip_eol(line).split()
    if not tokens or tokens[0] != b"INLINE":
        return "expected INLINE"
    fields = tokens[1:]
    new_syntax = len(fields) % 2 == 0
    if len(fields) < 5:
        return "INLINE needs a depth, a call line, an origin and at least one range"
    head = 4 if new_syntax else 3
    numbers = fields[:head]
    if not all(_decimal(t) for i, t in enumerate(numbers) if not (new_syntax and i == 2)):
        return "INLINE depth, line and origin must be decimal"
    depth, call_line = _u32(numbers[0]), _u32(numbers[1])
    origin_id = _u32(numbers[-1])
    call_file: int | None = None
    if new_syntax:
        raw_file = numbers[2]
        if raw_file == b"-1":
            call_file = None
        elif _decimal(raw_file) and (value := _u32(raw_file)) is not None:
            call_file = value
        else:
            return "INLINE call-site file id must be decimal"
    if depth is None or call_line is None or origin_id is None:
        return "INLINE number does not fit in 32 bits"
    ranges = []
    rest = fields[head:]
    for i in range(0, len(rest), 2):
        address, size = rest[i], rest[i + 1]
        if not (_hex(address, 16) and _hex(size, 8)):
            return "INLINE range must be <hex address> <hex size>"
        ranges.append((int(address, 16), int(size, 16)))
    return InlineLine(depth, call_line, call_file, origin_id, tuple(ranges), not new_syntax)


def parse_stack_cfi_init(line: bytes) -> tuple[int, int, str] | str:
    m = _CFI_INIT.fullmatch(line)
    if m is None:
        return "expected STACK CFI INIT <address> <size> <rules>"
    return int(m[1], 16), int(m[2], 16), text(m[3])


def parse_stack_cfi_raw(line: bytes) -> tuple[int, bytes] | str:
    """A STACK CFI delta row with its rule text as bytes (rust-minidump sorts rows by (address, text))."""
    m = _CFI.fullmatch(line)
    if m is None:
        return "expected STACK CFI <address> <rules>"
    return int(m[1], 16), m[2]


@record
class StackWinLine:
    type_char: str  # one hex digit; only "0" and "4" are used
    address: int
    size: int
    prologue_size: int
    epilogue_size: int
    parameter_size: int
    saved_register_size: int
    local_size: int
    max_stack_size: int
    has_program_string: bool
    rest: str

    @property
    def consistent(self) -> bool:
        """rust-minidump discards a record whose type (4 = has program) and flag disagree."""
        return (self.type_char == "4") == self.has_program_string

    @property
    def win_type(self) -> StackWinType | None:
        return {"0": StackWinType.FPO, "4": StackWinType.FRAME_DATA}.get(self.type_char)


def parse_stack_win(line: bytes) -> StackWinLine | str:
    m = _WIN.fullmatch(line)
    if m is None:
        return "expected STACK WIN with 10 numeric fields and a program string or base-pointer flag"
    n = [int(m[i], 16) for i in range(3, 10)]
    return StackWinLine(
        m[1].decode("ascii"),
        int(m[2], 16),
        n[0],
        n[1],
        n[2],
        n[3],
        n[4],
        n[5],
        n[6],
        m[10] == b"1",
        text(m[11]),
    )
