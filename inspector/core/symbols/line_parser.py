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

from inspector.core.record import Record
from inspector.core.symbols.records import (
    FunctionRecord,
    ModuleRecord,
    PublicRecord,
    StackWinType,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (inspector.core.lazy)
if TYPE_CHECKING:
    import re
    from collections.abc import Callable, Iterator
    from typing import Any

U32_MAX = 0xFFFF_FFFF


class _Pattern:
    """A regular expression of this module, compiled when first used.

    Compiling is pure Python in `re` (about 0.6 M instructions for one of these): all of them
    made every process that imports the symbol side pay ~2 ms, though a walk from a warm index
    uses about half and a process that reads no symbol file none. The first use imports `re`,
    compiles the pattern and puts the compiled one in this module's globals in its place, so
    every later use is a plain `re.Pattern` call. `pattern` is there before that (patterns are
    built from others). `flags` are the letters of inline flags (`"s"`: `(?s)`, `re.DOTALL`), so
    that naming them needs no `re`.
    """

    __slots__ = ("compiled", "flags", "name", "pattern")

    def __init__(self, name: str | None, pattern: bytes, flags: bytes = b"") -> None:
        self.name = name  # the module global it replaces (None: one a `_Line` holds)
        self.pattern = pattern
        self.flags = flags
        self.compiled: re.Pattern[bytes] | None = None

    def _compiled(self) -> re.Pattern[bytes]:
        if self.compiled is None:
            import re

            self.compiled = re.compile(
                b"(?" + self.flags + b")" + self.pattern if self.flags else self.pattern
            )
            if self.name is not None:
                globals()[self.name] = self.compiled
        return self.compiled

    def fullmatch(self, line: bytes) -> re.Match[bytes] | None:
        return self._compiled().fullmatch(line)

    def findall(self, text: bytes) -> list[Any]:
        return self._compiled().findall(text)

    def finditer(self, text: bytes) -> Iterator[re.Match[bytes]]:
        return self._compiled().finditer(text)


def _pattern(name: str, pattern: bytes, flags: bytes = b"") -> re.Pattern[bytes]:
    """`re.compile(pattern)` with these inline flags, for the module global `name`, on first use
    (`_Pattern`)."""
    return _Pattern(name, pattern, flags)  # type: ignore[return-value]  # the same calls


_HEX_DIGITS = b"0123456789abcdefABCDEF"


def _decimal(token: bytes) -> bool:
    """`[0-9]{1,10}` (`bytes.isdigit` knows only ASCII digits)."""
    return 0 < len(token) <= 10 and token.isdigit()


def _hex(token: bytes, most: int) -> bool:
    """`[0-9A-Fa-f]{1,most}`: nothing is left once the hex digits are stripped from its ends."""
    return 0 < len(token) <= most and not token.strip(_HEX_DIGITS)


#: The words of a line's grammar: each as a regular expression, and as the check of a word that
#: splitting at single spaces gave (`_Line`)
_S = rb"[ \t]+"
_HEX64 = (rb"([0-9A-Fa-f]{1,16})", lambda word: _hex(word, 16))
_HEX32 = (rb"([0-9A-Fa-f]{1,8})", lambda word: _hex(word, 8))
_HEX1 = (rb"([0-9A-Fa-f])", lambda word: _hex(word, 1))
_HEX_ANY = (rb"([0-9A-Fa-f]+)", lambda word: _hex(word, len(word)))
_DEC32 = (rb"([0-9]{1,10})", _decimal)
_DIGIT = (rb"([0-9])", lambda word: len(word) == 1 and word.isdigit())
_WORD = (rb"([^ \t]+)", lambda word: word != b"" and b"\t" not in word)
_REST = rb"(.*?)\r*"


class _Line:
    """One kind of line: its grammar, `<keyword> [m] <word>... <rest>` as a regular expression, and
    the same read by splitting.

    `groups(line)` is what the expression's `fullmatch(line).groups()` would be. A line spelled as
    every writer spells them (one space between the words) is split at its spaces and each word
    checked, which needs no regular expression (compiling one is pure Python in `re`, about 0.6 M
    instructions, and a walk met ten kinds of line); any other line (tabs, runs of spaces, a word
    that fails its check) is left to the expression, compiled on first use (`_Pattern`).
    """

    __slots__ = ("checks", "flag", "head", "name", "regex", "rest")

    def __init__(
        self,
        name: str,
        keyword: bytes,
        words: tuple[tuple[bytes, Callable[[bytes], bool]], ...],
        *,
        flag: bool = False,
        rest: bool = True,
    ) -> None:
        self.head = keyword + b" " if keyword else b""
        self.flag = flag  # an optional `m` before the words (FUNC, PUBLIC: "multiple")
        self.checks = tuple(check for _, check in words)
        self.rest = rest  # the rest of the line, after the words: a name, rules (else only `\r`s)
        pattern = _S.join([word for word, _ in words] + ([_REST] if rest else []))
        if flag:
            pattern = rb"(?:(m)" + _S + rb")?" + pattern
        if keyword:
            pattern = keyword + _S + pattern
        if not rest:
            pattern += rb"\r*"
        #: the grammar (`pattern`: also for the expressions made from it)
        self.regex = _Pattern(None, pattern, b"s")
        self.name = name

    def groups(self, line: bytes) -> tuple[bytes | Any, ...] | None:
        """The groups of the line's `fullmatch` with the grammar, or None when it does not match
        (typed as `re.Match.groups`: an optional group is None when absent)."""
        split = self._split(line)
        if split is not None:
            return split
        m = self.regex.fullmatch(line)
        return None if m is None else m.groups()

    def _split(self, line: bytes) -> tuple[bytes | None, ...] | None:
        """The groups of a line in the plain spelling; None for any other line."""
        head = self.head
        if not line.startswith(head):
            return None
        body = line[len(head) :] if self.rest else line[len(head) :].rstrip(b"\r")
        flag = None
        if self.flag and body.startswith(b"m "):
            flag, body = b"m", body[2:]
        n = len(self.checks)
        parts = body.split(b" ", n) if self.rest else body.split(b" ")
        if len(parts) != (n + 1 if self.rest else n):
            return None
        for word, check in zip(parts[:n], self.checks, strict=True):  # (not the rest)
            if not check(word):
                return None
        if self.rest:
            parts[n] = parts[n].lstrip(b" \t").rstrip(b"\r")  # as `[ \t]+(.*?)\r*` leaves it
        return (flag, *parts) if self.flag else tuple(parts)


_MODULE = _Line("_MODULE", b"MODULE", (_WORD, _WORD, _HEX_ANY))
_INFO = _Line("_INFO", b"INFO", ())
_FILE = _Line("_FILE", b"FILE", (_DEC32,))
_INLINE_ORIGIN = _Line("_INLINE_ORIGIN", b"INLINE_ORIGIN", (_DEC32,))
_OLD_ORIGIN_REST = _pattern("_OLD_ORIGIN_REST", rb"(-?[0-9]*)[ \t]+" + _REST, b"s")
_FUNC = _Line("_FUNC", b"FUNC", (_HEX64, _HEX32, _HEX32), flag=True)
_PUBLIC = _Line("_PUBLIC", b"PUBLIC", (_HEX64, _HEX32), flag=True)
_LINE = _Line("_LINE", b"", (_HEX64, _HEX32, _DEC32, _DEC32), rest=False)
_CFI_INIT = _Line("_CFI_INIT", b"STACK CFI INIT", (_HEX64, _HEX32))
_CFI = _Line("_CFI", b"STACK CFI", (_HEX64,))
_WIN = _Line("_WIN", b"STACK WIN", (_HEX1, _HEX64, *(_HEX32,) * 7, _DIGIT))


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
    g = _MODULE.groups(line)
    if g is None:
        return "expected MODULE <os> <cpu> <debug id> <debug file>"
    return ModuleRecord(text(g[0]), text(g[1]), text(g[2]), text(g[3]))


class InfoLine(Record):
    key: str  # "CODE_ID", "GENERATOR", "URL" or another word
    value: str  # the rest of the line after the key


def parse_info(line: bytes) -> InfoLine | str:
    g = _INFO.groups(line)
    if g is None:
        return "expected INFO <key> <value>"
    rest = text(g[0])
    key, _, value = rest.partition(" ")
    return InfoLine(key, value.strip(" \t"))


def parse_file(line: bytes) -> tuple[int, str] | str:
    g = _FILE.groups(line)
    if g is None or (file_id := _u32(g[0])) is None:
        return "expected FILE <id> <name>"
    return file_id, text(g[1])


class InlineOriginLine(Record):
    origin_id: int
    name: str
    old_syntax: bool
    file_id: int | None  # only in the old syntax


def parse_inline_origin(line: bytes) -> InlineOriginLine | str:
    g = _INLINE_ORIGIN.groups(line)
    if g is None or (origin_id := _u32(g[0])) is None:
        return "expected INLINE_ORIGIN <id> [<file id>] <name>"
    rest = g[1]
    first = rest.split(b" ", 1)[0]
    if first and all(48 <= c <= 57 or (c == 45 and i == 0) for i, c in enumerate(first)):
        # Breakpad: a numeric second field means the old syntax `<id> <file id> <name>`
        old = _OLD_ORIGIN_REST.fullmatch(rest)
        if old is None or not _decimal(old[1][1:] if old[1].startswith(b"-") else old[1]):
            return "old-syntax INLINE_ORIGIN without a name"
        return InlineOriginLine(origin_id, text(old[2]), True, int(old[1]))
    return InlineOriginLine(origin_id, text(rest), False, None)


def parse_func(line: bytes) -> FunctionRecord | str:
    g = _FUNC.groups(line)
    if g is None:
        return "expected FUNC [m] <address> <size> <parameter size> <name>"
    return FunctionRecord(int(g[1], 16), int(g[2], 16), int(g[3], 16), text(g[4]), g[0] is not None)


def parse_public(line: bytes) -> PublicRecord | str:
    g = _PUBLIC.groups(line)
    if g is None:
        return "expected PUBLIC [m] <address> <parameter size> <name>"
    return PublicRecord(int(g[1], 16), int(g[2], 16), text(g[3]), g[0] is not None)


def public_sort_key(line: bytes) -> tuple[bytes, int] | None:
    """rust-minidump's tie-break between PUBLICs at one address: (name bytes, parameter size)."""
    g = _PUBLIC.groups(line)
    return None if g is None else (g[3], int(g[2], 16))


#: The largest block whose line records are read line by line (`line_records`).
SMALL_BLOCK = 8192
_HEX_FIRST = frozenset(_HEX_DIGITS)
#: The well-formed line records among a block's lines, all in one search (`line_records`).
_LINE_ROWS = _pattern("_LINE_ROWS", rb"^" + _LINE.regex.pattern + rb"$", b"m")
#: Lines that start with a hex digit: the lines a block's line records are looked for among.
_HEX_ROW_START = _pattern("_HEX_ROW_START", rb"^[0-9A-Fa-f]", b"m")


def line_records(block: bytes) -> list[tuple[int, int, int, int]] | None:
    """Every line record of `block` (its lines, `\n`-separated), in order, when every line that
    starts with a hex digit is one (`parse_line_record`); else None: parse those lines one by one.

    A large block is read by one regular-expression pass and one conversion per field instead of
    a match per line: a FUNC of the torch libraries has thousands of line records, and the walk
    parsed them on its thread in one stretch of pure Python (10 ms), keeping the GUI thread
    waiting for the GIL. A small one (most functions) is split line by line, which costs less
    than compiling those expressions.
    """
    rows: list[Any]
    if len(block) <= SMALL_BLOCK:
        rows = []
        for line in block.split(b"\n"):
            if line and line[0] in _HEX_FIRST:
                # `_LINE`'s words checked inline for the spelling every writer uses (one space
                # between them): a call per word made this loop the most of a first lookup
                row: Any = line.rstrip(b"\r").split(b" ")
                if len(row) == 4:
                    a, s, n, f = row
                    if not (
                        0 < len(a) <= 16
                        and not a.strip(_HEX_DIGITS)
                        and 0 < len(s) <= 8
                        and not s.strip(_HEX_DIGITS)
                        and 0 < len(n) <= 10
                        and n.isdigit()
                        and 0 < len(f) <= 10
                        and f.isdigit()
                    ):
                        row = _LINE.groups(line)
                else:
                    row = _LINE.groups(line)
                if row is None:
                    return None  # a damaged one among them
                rows.append(row)
    else:
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
    g = _LINE.groups(line)
    if g is None:
        return "expected <address> <size> <line> <file id>"
    line_no, file_id = _u32(g[2]), _u32(g[3])
    if line_no is None or file_id is None:
        return "line or file id does not fit in 32 bits"
    return int(g[0], 16), int(g[1], 16), line_no, file_id


class InlineLine(Record):
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
    g = _CFI_INIT.groups(line)
    if g is None:
        return "expected STACK CFI INIT <address> <size> <rules>"
    return int(g[0], 16), int(g[1], 16), text(g[2])


def parse_stack_cfi_raw(line: bytes) -> tuple[int, bytes] | str:
    """A STACK CFI delta row with its rule text as bytes (rust-minidump sorts rows by (address, text))."""
    g = _CFI.groups(line)
    if g is None:
        return "expected STACK CFI <address> <rules>"
    return int(g[0], 16), g[1]


class StackWinLine(Record):
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
    g = _WIN.groups(line)
    if g is None:
        return "expected STACK WIN with 10 numeric fields and a program string or base-pointer flag"
    n = [int(g[i], 16) for i in range(2, 9)]
    return StackWinLine(
        g[0].decode("ascii"),
        int(g[1], 16),
        n[0],
        n[1],
        n[2],
        n[3],
        n[4],
        n[5],
        n[6],
        g[9] == b"1",
        text(g[10]),
    )
