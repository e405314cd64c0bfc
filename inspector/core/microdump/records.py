"""The records of one microdump, parsed line by line; damage becomes a problem, never an exception.

The format (Breakpad's `microdump_writer.cc` writes it, `microdump.cc` reads it), one record a
line, every number upper-case hex without `0x`:

    V <product>:<version>                         product information ("UNKNOWN:0.0.0.0")
    O <os> <arch> <cpus> <hw arch> <version…>     os A (Android) or L (Linux); arch arm, arm64,
                                                  x86, mips or mips64 (the process's, which may
                                                  differ from the hardware's); cpus in hex
    P <process type>                              e.g. "webview", "renderer"
    R <signal> <signal name> <address>            the crash reason (newer writers)
    G <GL version>|<GL vendor>|<GL renderer>      the GPU, or "UNKNOWN"
    H <low> <high> <holes> <largest> <sum> b:n…   free address space (32-bit writers): the span
                                                  of the mappings, how many holes, the largest,
                                                  their sum, and a histogram of log2(size):count
    S 0 <sp> <stack start> <stack length>         the stack header
    S <address> <bytes>                           384 bytes of stack a line, contiguous
    C <bytes>                                     the raw CPU context (a MDRawContext* struct)
    M <base> <file offset> <size> <id> <name>     an executable mapping; id = debug id (33 hex)

Each parser checks what Breakpad's reader takes on trust (numbers that are not hex, an odd
number of hex digits from a cut line, a repeated record) and keeps what can still be read:
the hex digits before a damaged one, the first of two repeated records.
"""

from __future__ import annotations

import re

from inspector.core.microdump.log import LogLine, MicrodumpText
from inspector.core.record import Record

_NOT_HEX = re.compile(r"[^0-9A-Fa-f]")


class Note(Record):
    """Damage in one line: the line, what is wrong, and a stable code."""

    line: LogLine
    code: str
    message: str


class OsRecord(Record):
    os_id: str
    arch: str
    cpu_count: int
    hardware_arch: str
    version: str
    line: LogLine


class GpuRecord(Record):
    """The GL version, vendor and renderer ('' each when the writer said UNKNOWN)."""

    version: str
    vendor: str
    renderer: str
    line: LogLine


class CrashRecord(Record):
    signal: int
    signal_name: str
    address: int
    line: LogLine


class HeapRecord(Record):
    """The free address space below the stack (written by 32-bit processes)."""

    low: int
    high: int
    hole_count: int
    largest_hole: int
    hole_sum: int
    histogram: tuple[tuple[int, int], ...]  # (log2 of the hole size, how many)
    line: LogLine


class StackHeader(Record):
    stack_pointer: int
    start: int
    size: int
    line: LogLine


class StackChunk(Record):
    address: int
    data: bytes
    line: LogLine


class ContextRecord(Record):
    data: bytes
    line: LogLine


class ModuleRecord(Record):
    base: int
    file_offset: int
    size: int
    identifier: str
    name: str
    line: LogLine


class MicrodumpRecords(Record):
    """Everything one microdump says, in the writer's terms, with the damage found reading it."""

    text: MicrodumpText
    product: str | None
    process_type: str | None
    os: OsRecord | None
    crash: CrashRecord | None
    gpu: GpuRecord | None
    heap: HeapRecord | None
    stack_header: StackHeader | None
    chunks: tuple[StackChunk, ...]
    context: ContextRecord | None
    modules: tuple[ModuleRecord, ...]
    unknown: tuple[LogLine, ...]
    notes: tuple[Note, ...]


def hex_number(token: str) -> int | None:
    """A hex number as the writer prints them (no `0x`), None if `token` is not one."""
    if not token or len(token) > 16 or _NOT_HEX.search(token):
        return None
    return int(token, 16)


def hex_bytes(text: str) -> tuple[bytes, str | None]:
    """The bytes of a hex string and, when it is damaged, why (the bytes before the damage are kept)."""
    bad = _NOT_HEX.search(text)
    usable = text if bad is None else text[: bad.start()]
    problem = None
    if bad is not None:
        problem = f"{text[bad.start()]!r} at character {bad.start()} of the hex is not a hex digit"
    if len(usable) % 2:
        usable = usable[:-1]
        if problem is None:
            problem = f"an odd number of hex digits ({len(text)}): the line is cut"
    return bytes.fromhex(usable), problem


class _Parser:
    def __init__(self, text: MicrodumpText) -> None:
        self.text = text
        self.notes: list[Note] = []
        self.singles: dict[str, LogLine] = {}
        self.product: str | None = None
        self.process_type: str | None = None
        self.os: OsRecord | None = None
        self.crash: CrashRecord | None = None
        self.gpu: GpuRecord | None = None
        self.heap: HeapRecord | None = None
        self.stack_header: StackHeader | None = None
        self.chunks: list[StackChunk] = []
        self.context: ContextRecord | None = None
        self.modules: list[ModuleRecord] = []
        self.unknown: list[LogLine] = []

    def note(self, line: LogLine, code: str, message: str) -> None:
        self.notes.append(Note(line, code, message))

    def first_of_kind(self, kind: str, line: LogLine, what: str) -> bool:
        """True for the first record of a kind that may appear once; a repeat is a problem."""
        seen = self.singles.get(kind)
        if seen is None:
            self.singles[kind] = line
            return True
        self.note(
            line,
            "RepeatedRecord",
            f"a second {what} line (the first is line {seen.number}: two microdumps mixed?); ignored",
        )
        return False

    def numbers(
        self, line: LogLine, tokens: list[str], names: tuple[str, ...], what: str
    ) -> list[int] | None:
        if len(tokens) < len(names):
            self.note(
                line,
                "CutRecord",
                f"{what} line has {len(tokens)} of its {len(names)} fields: cut off; ignored",
            )
            return None
        values = []
        for name, token in zip(names, tokens, strict=False):
            value = hex_number(token)
            if value is None:
                self.note(
                    line, "BadRecord", f"{what} line: {name} {token[:40]!r} is not a hex number; ignored"
                )
                return None
            values.append(value)
        return values

    def parse(self) -> MicrodumpRecords:
        for line in self.text.records:
            text = line.text
            kind, _, rest = text.partition(" ")
            if not text.strip():
                continue
            handler = _HANDLERS.get(kind)
            if handler is None:
                self.unknown.append(line)
                self.note(line, "UnknownRecord", f"not a microdump record: {text[:60]!r}; ignored")
                continue
            handler(self, line, rest)
        return MicrodumpRecords(
            self.text,
            self.product,
            self.process_type,
            self.os,
            self.crash,
            self.gpu,
            self.heap,
            self.stack_header,
            tuple(self.chunks),
            self.context,
            tuple(self.modules),
            tuple(self.unknown),
            tuple(self.notes),
        )

    # ---- one method per record ----

    def product_line(self, line: LogLine, rest: str) -> None:
        if self.first_of_kind("V", line, "V (product)"):
            self.product = rest

    def process_line(self, line: LogLine, rest: str) -> None:
        if self.first_of_kind("P", line, "P (process type)"):
            self.process_type = rest

    def os_line(self, line: LogLine, rest: str) -> None:
        if not self.first_of_kind("O", line, "O (operating system)"):
            return
        # Breakpad reads four whitespace-separated tokens, then the rest of the line after one space.
        match = re.match(r"\s*(\S+)\s+(\S+)\s+(\S+)\s+(\S+)(?: (.*))?$", rest)
        if match is None:
            self.note(
                line, "CutRecord", "O line has fewer than its 4 fields (os, arch, cpus, hardware); ignored"
            )
            return
        count = hex_number(match.group(3))
        if count is None:
            self.note(
                line, "BadRecord", f"O line: the CPU count {match.group(3)[:20]!r} is not hex; read as 0"
            )
        self.os = OsRecord(
            match.group(1), match.group(2), (count or 0) & 0xFF, match.group(4), match.group(5) or "", line
        )

    def crash_line(self, line: LogLine, rest: str) -> None:
        if not self.first_of_kind("R", line, "R (crash reason)"):
            return
        tokens = rest.split()
        if len(tokens) < 3:
            self.note(
                line, "CutRecord", "R line has fewer than its 3 fields (signal, name, address); ignored"
            )
            return
        signal, address = hex_number(tokens[0]), hex_number(tokens[2])
        if signal is None or address is None:
            self.note(line, "BadRecord", "R line: the signal or the address is not a hex number; ignored")
            return
        self.crash = CrashRecord(signal, tokens[1], address, line)

    def gpu_line(self, line: LogLine, rest: str) -> None:
        if not self.first_of_kind("G", line, "G (GPU)"):
            return
        if rest == "UNKNOWN" or not rest:
            self.gpu = GpuRecord("", "", "", line)
            return
        fields = rest.split("|")
        fields += [""] * (3 - len(fields))
        self.gpu = GpuRecord(fields[0], fields[1], fields[2], line)

    def heap_line(self, line: LogLine, rest: str) -> None:
        if not self.first_of_kind("H", line, "H (free address space)"):
            return
        tokens = rest.split()
        values = self.numbers(line, tokens, ("low", "high", "holes", "largest hole", "hole sum"), "H")
        if values is None:
            return
        low, high, holes, largest, total = values
        histogram = []
        for token in tokens[5:]:
            bucket, _, count = token.partition(":")
            b, c = hex_number(bucket), hex_number(count)
            if b is None or c is None:
                self.note(
                    line, "BadRecord", f"H line: histogram entry {token[:20]!r} is not hex:hex; skipped"
                )
                continue
            histogram.append((b, c))
        self.heap = HeapRecord(low, high, holes, largest, total, tuple(histogram), line)

    def stack_line(self, line: LogLine, rest: str) -> None:
        tokens = rest.split()
        if tokens and tokens[0] == "0":
            if not self.first_of_kind("S0", line, "S 0 (stack header)"):
                return
            values = self.numbers(line, tokens[1:], ("stack pointer", "stack start", "stack length"), "S 0")
            if values is not None:
                self.stack_header = StackHeader(values[0], values[1], values[2], line)
            return
        values = self.numbers(line, tokens, ("address",), "S (stack bytes)")
        if values is None:
            return
        if len(tokens) < 2:
            self.note(line, "CutRecord", "S line has an address but no bytes: cut off; ignored")
            return
        data, problem = hex_bytes(tokens[1])
        if problem is not None:
            self.note(line, "BadHex", f"S line at {values[0]:#x}: {problem}; {len(data)} bytes kept")
        if data:
            self.chunks.append(StackChunk(values[0], data, line))

    def context_line(self, line: LogLine, rest: str) -> None:
        if not self.first_of_kind("C", line, "C (CPU context)"):
            return
        data, problem = hex_bytes(rest.strip())
        if problem is not None:
            self.note(line, "BadHex", f"C line: {problem}; {len(data)} bytes kept")
        self.context = ContextRecord(data, line)

    def module_line(self, line: LogLine, rest: str) -> None:
        match = re.match(r"\s*(\S+)\s+(\S+)\s+(\S+)\s+(\S+)(?:\s+(.*))?$", rest)
        if match is None:
            self.note(line, "CutRecord", "M line has fewer than its 5 fields; ignored")
            return
        values = self.numbers(line, list(match.group(1, 2, 3)), ("base", "file offset", "size"), "M")
        if values is None:
            return
        base, offset, size = values
        name = (match.group(5) or "").strip()
        if not name:
            self.note(
                line, "CutRecord", f"M line at {base:#x} has no file name: cut off; the module is nameless"
            )
        if size == 0 or base + size > 1 << 64:
            self.note(
                line, "BadRecord", f"M line {name or '?'}: size {size:#x} at {base:#x} is impossible; ignored"
            )
            return
        self.modules.append(ModuleRecord(base, offset, size, match.group(4), name, line))


_HANDLERS = {
    "V": _Parser.product_line,
    "P": _Parser.process_line,
    "O": _Parser.os_line,
    "R": _Parser.crash_line,
    "G": _Parser.gpu_line,
    "H": _Parser.heap_line,
    "S": _Parser.stack_line,
    "C": _Parser.context_line,
    "M": _Parser.module_line,
}


def parse_records(text: MicrodumpText) -> MicrodumpRecords:
    """The records of one microdump block (see the module doc); never raises for bad input."""
    return _Parser(text).parse()
