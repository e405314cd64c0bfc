"""A brute-force reference for the symbol index: parse every line into lists, answer by linear scans.

Written independently of `inspector.core.symbols` (no shared parsing code) from
the rules it must follow:

* line grammar and overlap rules of rust-minidump's breakpad-symbols
  (`sym_file/parser.rs`, `types.rs`, `mod.rs`): fields separated by runs of
  spaces/tabs, hex addresses of 1–16 digits, sizes of 1–8, decimal u32 ids;
  ranges sorted by (start, end) in file order with one overlapping the last
  kept one dropped; PUBLICs sorted by (address, name, parameter size) and
  scanned backwards; `fill_symbol`'s inline attribution;
* our leniencies: a damaged line is counted and skipped; sub-lines belong to
  the last record line (MODULE, INFO, FILE, FUNC, PUBLIC, STACK CFI INIT,
  STACK WIN) before them, empty, unrecognised and INLINE_ORIGIN lines
  included; Breakpad's old INLINE syntax (odd field count, no call-site file;
  INLINE_ORIGIN with a numeric second field) where the call-site file is the
  line record's file; sub-lines of records the overlap rules drop are not
  checked.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from inspector.core.symbols.records import (
    CfiRow,
    DamageKind,
    FrameSymbol,
    InlineFrameSymbol,
    StackWinRecord,
    StackWinType,
)

T = TypeVar("T")
U64 = (1 << 64) - 1
U32 = (1 << 32) - 1
HEX = set(b"0123456789abcdefABCDEF")
SEPARATORS = b" \t"
KEYWORDS = (
    b"STACK CFI INIT",
    b"STACK CFI",
    b"STACK WIN",
    b"INLINE_ORIGIN",
    b"INLINE",
    b"MODULE",
    b"INFO",
    b"FILE",
    b"FUNC",
    b"PUBLIC",
)
HEADS = {b"MODULE", b"INFO", b"FILE", b"FUNC", b"PUBLIC", b"STACK CFI INIT", b"STACK WIN"}


def is_hex(token: bytes, most: int) -> bool:
    return 1 <= len(token) <= most and all(c in HEX for c in token)


def is_u32(token: bytes) -> bool:
    return 1 <= len(token) <= 10 and token.isdigit() and int(token) <= U32


def take(s: bytes, n: int) -> tuple[list[bytes], bytes] | None:
    """n fields of `s`, each followed by at least one space or tab; and the rest."""
    fields = []
    i = 0
    for _ in range(n):
        j = i
        while j < len(s) and s[j] not in SEPARATORS:
            j += 1
        if j == i or j == len(s):
            return None
        fields.append(s[i:j])
        while j < len(s) and s[j] in SEPARATORS:
            j += 1
        i = j
    return fields, s[i:]


def after_keyword(body: bytes, keyword: bytes) -> bytes:
    rest = body[len(keyword) :]
    return rest.lstrip(b" \t")


def text(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


@dataclass
class Func:
    address: int
    size: int
    param: int
    name: bytes
    multiple: bool
    order: int
    lines: list[tuple[int, int, int, int]] = field(default_factory=list)
    inlinees: list[tuple[int, int, int, int, int, int]] = field(default_factory=list)
    damaged: list[DamageKind] = field(default_factory=list)


@dataclass
class Cfi:
    address: int
    size: int
    rules: bytes
    order: int
    rows: list[tuple[int, bytes]] = field(default_factory=list)
    damaged: list[DamageKind] = field(default_factory=list)


@dataclass
class Win:
    type: int
    address: int
    size: int
    declared: int
    fields: list[int]
    has_program: bool
    rest: bytes
    order: int


def rangemap(items: list[T], start: Callable[[T], int], size: Callable[[T], int]) -> list[T]:
    """rust-minidump's memory_range + into_rangemap_safe, item by item."""
    valid = [x for x in items if size(x) > 0 and start(x) + size(x) - 1 <= U64]
    valid.sort(key=lambda x: (start(x), start(x) + size(x) - 1))
    kept: list[T] = []
    for x in valid:
        if kept and start(x) <= start(kept[-1]) + size(kept[-1]) - 1:
            continue
        kept.append(x)
    return kept


class Reference:
    def __init__(self, data: bytes) -> None:
        self.damage: Counter[DamageKind] = Counter()
        self.missing_final_newline = bool(data) and not data.endswith(b"\n")
        self.old_inline_syntax = False
        self.module: list[bytes] | None = None
        funcs: list[Func] = []
        publics: list[tuple[int, bytes, int, bool]] = []
        cfis: list[Cfi] = []
        wins: list[Win] = []
        self.files: dict[int, bytes] = {}
        self.origins: dict[int, bytes] = {}
        self.funcs: list[Func] = []
        self.cfis: list[Cfi] = []
        self.publics: list[tuple[int, bytes, int, bool]] = []
        self.wins: dict[int, list[Win]] = {4: [], 0: []}
        if not data:
            self.damage[DamageKind.EMPTY_FILE] += 1
            return
        lines = data.split(b"\n")
        if data.endswith(b"\n"):
            lines.pop()
        owner = None  # keyword of the last head line
        func: Func | None = None
        cfi: Cfi | None = None
        for number, line in enumerate(lines, start=1):
            body = line.rstrip(b"\r")
            keyword = next(
                (
                    k
                    for k in KEYWORDS
                    if body.startswith(k) and len(body) > len(k) and body[len(k)] in SEPARATORS
                ),
                None,
            )
            if number == 1 and keyword != b"MODULE":
                self.damage[DamageKind.NO_MODULE_LINE] += 1
            if not body:
                continue
            if keyword in HEADS:
                owner = keyword
                func = cfi = None
            if keyword == b"MODULE":
                if number != 1:
                    self.damage[DamageKind.MODULE_NOT_FIRST] += 1
                    continue
                got = take(after_keyword(body, keyword), 3)
                if got is None or not all(c in HEX for c in got[0][2]):
                    self.damage[DamageKind.BAD_MODULE] += 1
                else:
                    self.module = [*got[0], got[1]]
            elif keyword == b"INFO":
                pass
            elif keyword == b"FILE":
                got = take(after_keyword(body, keyword), 1)
                if got is None or not is_u32(got[0][0]):
                    self.damage[DamageKind.BAD_FILE] += 1
                else:
                    self.files[int(got[0][0])] = got[1]
            elif keyword == b"INLINE_ORIGIN":
                self._origin(after_keyword(body, keyword))
            elif keyword == b"FUNC":
                func = self._func(after_keyword(body, keyword), len(funcs))
                if func is None:
                    self.damage[DamageKind.BAD_FUNC] += 1
                else:
                    funcs.append(func)
            elif keyword == b"PUBLIC":
                s = after_keyword(body, keyword)
                multiple = s.startswith(b"m") and len(s) > 1 and s[1] in SEPARATORS
                if multiple:
                    s = s[1:].lstrip(b" \t")
                got = take(s, 2)
                if got is None or not (is_hex(got[0][0], 16) and is_hex(got[0][1], 8)):
                    self.damage[DamageKind.BAD_PUBLIC] += 1
                else:
                    publics.append((int(got[0][0], 16), got[1], int(got[0][1], 16), multiple))
            elif keyword == b"STACK CFI INIT":
                got = take(after_keyword(body, keyword), 2)
                if got is None or not (is_hex(got[0][0], 16) and is_hex(got[0][1], 8)):
                    self.damage[DamageKind.BAD_STACK_CFI_INIT] += 1
                else:
                    cfi = Cfi(int(got[0][0], 16), int(got[0][1], 16), got[1], len(cfis))
                    cfis.append(cfi)
            elif keyword == b"STACK WIN":
                self._win(after_keyword(body, keyword), wins)
            elif keyword == b"STACK CFI":
                if owner != b"STACK CFI INIT":
                    self.damage[DamageKind.ORPHAN_STACK_CFI] += 1
                elif cfi is not None:
                    got = take(after_keyword(body, keyword), 1)
                    if got is None or not is_hex(got[0][0], 16):
                        cfi.damaged.append(DamageKind.BAD_STACK_CFI)
                    else:
                        cfi.rows.append((int(got[0][0], 16), got[1]))
            elif keyword == b"INLINE":
                if owner != b"FUNC":
                    self.damage[DamageKind.ORPHAN_INLINE] += 1
                elif func is not None:
                    self._inline(body, func)
            elif body[0] in HEX:
                if owner != b"FUNC":
                    self.damage[DamageKind.ORPHAN_LINE] += 1
                elif func is not None:
                    parts = re.split(rb"[ \t]+", body)
                    if len(parts) != 4 or not (
                        is_hex(parts[0], 16) and is_hex(parts[1], 8) and is_u32(parts[2]) and is_u32(parts[3])
                    ):
                        func.damaged.append(DamageKind.BAD_LINE)
                    else:
                        func.lines.append(
                            (int(parts[0], 16), int(parts[1], 16), int(parts[2]), int(parts[3]))
                        )
            else:
                self.damage[DamageKind.UNKNOWN_RECORD] += 1

        self.funcs = rangemap(funcs, lambda f: f.address, lambda f: f.size)
        self.cfis = rangemap(cfis, lambda c: c.address, lambda c: c.size)
        for kept_func in self.funcs:
            self.damage.update(kept_func.damaged)
        for kept_cfi in self.cfis:
            self.damage.update(kept_cfi.damaged)
        self.publics = sorted(publics, key=lambda p: (p[0], p[1], p[2]))
        self.wins = {t: self._win_map([w for w in wins if w.type == t]) for t in (4, 0)}

    # ---- record parsers ------------------------------------------------------------

    def _origin(self, s: bytes) -> None:
        got = take(s, 1)
        if got is None or not is_u32(got[0][0]):
            self.damage[DamageKind.BAD_INLINE_ORIGIN] += 1
            return
        origin_id, rest = int(got[0][0]), got[1]
        first = rest.split(b" ", 1)[0]
        if first and all(48 <= c <= 57 or (c == 45 and i == 0) for i, c in enumerate(first)):
            old = take(rest, 1)
            if old is None or not re.fullmatch(rb"-?[0-9]{1,10}", old[0][0]):
                self.damage[DamageKind.BAD_INLINE_ORIGIN] += 1
                return
            self.old_inline_syntax = True
            self.origins[origin_id] = old[1]
        else:
            self.origins[origin_id] = rest

    def _func(self, s: bytes, order: int) -> Func | None:
        multiple = s.startswith(b"m") and len(s) > 1 and s[1] in SEPARATORS
        if multiple:
            s = s[1:].lstrip(b" \t")
        got = take(s, 3)
        if got is None:
            return None
        (a, z, p), name = got
        if not (is_hex(a, 16) and is_hex(z, 8) and is_hex(p, 8)):
            return None
        return Func(int(a, 16), int(z, 16), int(p, 16), name, multiple, order)

    def _inline(self, body: bytes, func: Func) -> None:
        fields = body.split()[1:]
        new = len(fields) % 2 == 0
        head = 4 if new else 3
        ok = len(fields) >= 5
        if ok:
            numbers = fields[:head]
            call_file = -1
            if new:
                if numbers[2] == b"-1":
                    call_file = -1
                elif is_u32(numbers[2]):
                    call_file = int(numbers[2])
                else:
                    ok = False
            others = [numbers[0], numbers[1], numbers[-1]]
            ok = ok and all(is_u32(x) for x in others)
            ranges = fields[head:]
            pairs = [(ranges[i], ranges[i + 1]) for i in range(0, len(ranges), 2)]
            ok = ok and all(is_hex(x, 16) and is_hex(y, 8) for x, y in pairs)
        if not ok:
            func.damaged.append(DamageKind.BAD_INLINE)
            return
        depth, line, origin = int(numbers[0]), int(numbers[1]), int(numbers[-1])
        for x, y in pairs:
            func.inlinees.append((depth, int(x, 16), int(y, 16), call_file, line, origin))

    def _win(self, s: bytes, wins: list[Win]) -> None:
        got = take(s, 10)
        if got is None:
            self.damage[DamageKind.BAD_STACK_WIN] += 1
            return
        f, rest = got
        if not (
            is_hex(f[0], 1)
            and is_hex(f[1], 16)
            and all(is_hex(x, 8) for x in f[2:9])
            and len(f[9]) == 1
            and f[9].isdigit()
        ):
            self.damage[DamageKind.BAD_STACK_WIN] += 1
            return
        win_type, has_program = int(f[0], 16), f[9] == b"1"
        if (win_type == 4) != has_program:
            self.damage[DamageKind.STACK_WIN_TYPE_MISMATCH] += 1
            return
        numbers = [int(x, 16) for x in f[1:9]]
        wins.append(
            Win(win_type, numbers[0], numbers[1], numbers[1], numbers[2:], has_program, rest, len(wins))
        )

    @staticmethod
    def _win_map(wins: list[Win]) -> list[Win]:
        pushed: list[Win] = []
        for w in wins:
            if w.size == 0 or w.address + w.size - 1 > U64:
                continue
            if pushed:
                last = pushed[-1]
                last_end = last.address + last.size - 1
                end = w.address + w.size - 1
                if w.address <= last_end and last.address <= end:
                    if w.address > last.address:
                        last.size = w.address - last.address
                    elif (last.address, last_end) != (w.address, end):
                        continue
            pushed.append(w)
        return rangemap(pushed, lambda w: w.address, lambda w: w.size)

    # ---- lookups (linear scans) ---------------------------------------------------------

    def function(self, a: int) -> Func | None:
        return next((f for f in self.funcs if f.address <= a < f.address + f.size), None)

    def public(self, a: int) -> tuple[int, bytes, int, bool] | None:
        found = next((p for p in reversed(self.publics) if p[0] <= a), None)
        if found is None:
            return None
        below = [f.address for f in self.funcs if f.address <= a]
        if below and max(below) >= found[0]:
            return None
        return found

    def file_name(self, file_id: int) -> str | None:
        return text(self.files[file_id]) if file_id in self.files else None

    def origin_name(self, origin_id: int) -> str | None:
        return text(self.origins[origin_id]) if origin_id in self.origins else None

    def line(self, a: int) -> tuple[int, int, int, int] | None:
        f = self.function(a)
        if f is None:
            return None
        kept = rangemap(f.lines, lambda x: x[0], lambda x: x[1])
        return next((x for x in kept if x[0] <= a < x[0] + x[1]), None)

    def inlinee(self, f: Func, depth: int, a: int) -> tuple[int, int, int, int, int, int] | None:
        ordered = sorted(f.inlinees)
        candidates = [i for i in ordered if (i[0], i[1]) <= (depth, a)]
        if not candidates:
            return None
        last = candidates[-1]
        return last if last[0] == depth and a < last[1] + last[2] else None

    def inline_chain(
        self, a: int
    ) -> list[tuple[int, int, int, int, str | None, int | None, str | None, int]]:
        f = self.function(a)
        chain = []
        depth = 0
        while f is not None and (i := self.inlinee(f, depth, a)) is not None:
            call_file = None if i[3] < 0 else i[3]
            chain.append(
                (
                    depth,
                    i[1],
                    i[2],
                    i[5],
                    self.origin_name(i[5]),
                    call_file,
                    None if call_file is None else self.file_name(call_file),
                    i[4],
                )
            )
            depth += 1
        return chain[::-1]

    def stack_win(self, a: int) -> StackWinRecord | None:
        for t in (4, 0):
            for w in self.wins[t]:
                if w.address <= a < w.address + w.size:
                    program = text(w.rest) if t == 4 else None
                    prologue, epilogue, parameters, saved, local, max_stack = w.fields
                    return StackWinRecord(
                        StackWinType(t),
                        w.address,
                        w.size,
                        w.declared,
                        prologue,
                        epilogue,
                        parameters,
                        saved,
                        local,
                        max_stack,
                        w.has_program,
                        program,
                        t == 0 and w.rest == b"1",
                    )
        return None

    def symbolize(self, a: int) -> FrameSymbol | None:
        f = self.function(a)
        if f is None:
            p = self.public(a)
            if p is None:
                return None
            return FrameSymbol(text(p[1]), p[0], p[2], from_public=True, multiple=p[3])
        win = self.stack_win(a)
        param = win.parameter_size if win is not None else f.param
        innermost = self.line(a)

        def call_file(file_id: int) -> str | None:
            if file_id < 0:
                return None if innermost is None else self.file_name(innermost[3])
            return self.file_name(file_id)

        source: tuple[str | None, int | None, int | None] = (None, None, None)
        inlines: list[InlineFrameSymbol] = []
        outer = self.inlinee(f, 0, a)
        if outer is not None:
            name = call_file(outer[3])
            if name is not None:
                source = (name, outer[4], outer[1])
            origin = outer[5]
            depth = 1
            while (i := self.inlinee(f, depth, a)) is not None:
                if self.origin_name(origin) is not None:
                    inlines.append(InlineFrameSymbol(self.origin_name(origin) or "", call_file(i[3]), i[4]))
                origin = i[5]
                depth += 1
            if self.origin_name(origin) is not None:
                file = None if innermost is None else self.file_name(innermost[3])
                line = None if innermost is None or innermost[2] == 0 else innermost[2]
                inlines.append(InlineFrameSymbol(self.origin_name(origin) or "", file, line))
        elif innermost is not None and self.file_name(innermost[3]) is not None:
            source = (self.file_name(innermost[3]), innermost[2], innermost[0])
        return FrameSymbol(text(f.name), f.address, param, *source, tuple(inlines[::-1]), multiple=f.multiple)

    def has_symbol_at(self, a: int) -> bool:
        f = self.function(a)
        if f is not None:
            return bool(f.name)
        p = self.public(a)
        return p is not None and bool(p[1])

    def cfi(self, a: int) -> tuple[CfiRow, int, tuple[CfiRow, ...], int, dict[str, str] | None] | None:
        block = next((c for c in self.cfis if c.address <= a < c.address + c.size), None)
        if block is None:
            return None
        rows = sorted(block.rows)
        applied = sum(1 for address, _ in rows if address <= a)
        rules: dict[str, str] | None = {}
        for raw in [block.rules, *(r for _, r in rows[:applied])]:
            parsed = parse_rules(text(raw))
            if parsed is None:
                rules = None
                break
            assert rules is not None
            rules.update(parsed)
        return (
            CfiRow(block.address, text(block.rules)),
            block.size,
            tuple(CfiRow(x, text(r)) for x, r in rows),
            applied,
            rules,
        )


def parse_rules(rules: str) -> list[tuple[str, str]] | None:
    """rust-minidump's parse_cfi_exprs over whitespace tokens."""
    result: list[tuple[str, str]] = []
    register: str | None = None
    expression: list[str] = []
    for token in re.findall(r"[^ \t\n\x0c\r]+", rules):
        if token.endswith(":"):
            if register is not None:
                if not expression:
                    return None
                result.append((register, " ".join(expression)))
            name = token[:-1]
            register = name[1:] if name.startswith("$") else name
            expression = []
        elif register is None:
            return None
        else:
            expression.append(token)
    if register is None or not expression:
        return None
    result.append((register, " ".join(expression)))
    return result
