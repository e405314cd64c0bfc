"""Hypothesis strategies: small `.sym` files full of overlaps, duplicates, odd spacing and damage."""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import strategies as st

# a few "hot" values make records collide (same start, same end, nested) often
ADDRESS = st.one_of(st.sampled_from([0x10, 0x20, 0x28, 0x40, 0x80, 0x100]), st.integers(0, 0x180))
SIZE = st.one_of(st.sampled_from([0x8, 0x10, 0x18, 0x20]), st.integers(1, 0x30), st.just(0))
NAMES = st.sampled_from(
    [
        b"main",
        b"foo bar",
        b"operator()(int, char)",
        b"",
        b"\xff\xfe odd bytes",
        "caf\u00e9".encode(),
        b"x" * 40,
        b"aa",
    ]
)
RULES = st.sampled_from(
    [
        ".cfa: $rsp 8 + .ra: .cfa -8 + ^",
        ".cfa: $rsp 16 + $rbx: .cfa -16 + ^",
        "$rbp: .cfa -24 + ^",
        ".cfa: rsp 8 +  .ra: .cfa 8 - ^",
        ".cfa: $rsp 24 +",
        "$r12: .cfa -32 + ^ $r13: .cfa -40 + ^",
        ".cfa:",
        "garbage without register",
        "",
    ]
)
LINE_NUMBERS = st.sampled_from([0, 0, 1, 7]) | st.integers(0, 60)
ORIGIN_IDS = st.integers(0, 3)
PROGRAMS = st.sampled_from(["$T0 $ebp = $eip $T0 4 + ^ = $ebp $T0 ^ =", "$eip $esp ^ =", ""])
GARBAGE = st.sampled_from(
    [
        b"garbage line",
        b"FUNC",
        b"FUNC zz 10 0 broken",
        b"FUNC 1000",
        b"PUBLIC 12345678901234567 0 too_long",
        b"PUBLIC m",
        b"STACK CFI INIT 10",
        b"STACK WIN 4 10",
        b"STACK WIN 4 10 8 0 0 0 0 0 0 0 0",
        b"STACK WIN 0 20 8 0 0 0 0 0 0 1 $eip",
        b"FILE x name",
        b"INLINE_ORIGIN y name",
        b"MODULE Linux x86 ABC late",
        b"INFO CODE_ID 1234",
        b"\tindented",
        b"zzz",
        b"10 4",
        b"INLINE 0 1",
        b"STACK CFI 10 .cfa: $rsp 8 +",
    ]
)


@dataclass(frozen=True)
class Style:
    newline: bytes
    final_newline: bool
    module_line: bool
    odd_spacing: bool
    upper_hex: bool


def _hex(n: int, upper: bool) -> bytes:
    return (b"%X" if upper else b"%x") % n


@st.composite
def _func(draw: st.DrawFn) -> list[bytes]:
    address, size = draw(ADDRESS), draw(SIZE)
    head = b"FUNC %s%x %x %x %s" % (
        b"m " if draw(st.booleans()) else b"",
        address,
        size,
        draw(st.integers(0, 16)),
        draw(NAMES),
    )
    lines = [head]
    new_syntax = draw(st.integers(0, 9)) > 0
    for _ in range(draw(st.integers(0, 4))):
        depth = draw(st.integers(0, 2))
        ranges = b" ".join(
            b"%x %x"
            % (
                address + draw(st.sampled_from([0, 0, 4, 8]) | st.integers(0, 0x30)),
                draw(st.integers(0, 0x18)),
            )
            for _ in range(draw(st.integers(1, 2)))
        )
        call_file = b" %d" % draw(st.integers(0, 5)) if new_syntax else b""
        lines.append(
            b"INLINE %d %d%s %d %s" % (depth, draw(LINE_NUMBERS), call_file, draw(ORIGIN_IDS), ranges)
        )
    for _ in range(draw(st.integers(0, 6))):
        lines.append(
            b"%x %x %d %d"
            % (
                address + draw(st.sampled_from([0, 4, 8]) | st.integers(0, 0x30)),
                draw(st.integers(0, 0x10)),
                draw(LINE_NUMBERS),
                draw(st.integers(0, 6)),
            )
        )
    if draw(st.integers(0, 6)) == 0:
        lines.insert(
            draw(st.integers(1, len(lines))),
            draw(st.sampled_from([b"", b"zz 1 2 3", b"10 4 x 1", b"INLINE 1"])),
        )
    return lines


@st.composite
def _public(draw: st.DrawFn) -> list[bytes]:
    m = b"m " if draw(st.booleans()) else b""
    return [b"PUBLIC %s%x %x %s" % (m, draw(ADDRESS), draw(st.integers(0, 16)), draw(NAMES))]


@st.composite
def _cfi(draw: st.DrawFn) -> list[bytes]:
    address, size = draw(ADDRESS), draw(SIZE)
    lines = [b"STACK CFI INIT %x %x %s" % (address, size, draw(RULES).encode())]
    for _ in range(draw(st.integers(0, 4))):
        offset = draw(st.sampled_from([0, 1, 2, 2, 4]) | st.integers(0, 0x30))
        lines.append(b"STACK CFI %x %s" % (address + offset, draw(RULES).encode()))
    return lines


@st.composite
def _stack_win(draw: st.DrawFn) -> list[bytes]:
    win_type = draw(st.sampled_from([4, 4, 0, 0, 2]))
    fields = [win_type, draw(ADDRESS), draw(SIZE)] + [draw(st.integers(0, 12)) for _ in range(6)]
    tail = b"1 " + draw(PROGRAMS).encode() if win_type == 4 else b"0 " + draw(st.sampled_from([b"0", b"1"]))
    return [b"STACK WIN " + b" ".join(b"%x" % f for f in fields) + b" " + tail]


@st.composite
def _file(draw: st.DrawFn) -> list[bytes]:
    return [
        b"FILE %d %s" % (draw(st.integers(0, 5)), draw(st.sampled_from([b"a.c", b"dir/b c.h", b"\xffx.cc"])))
    ]


@st.composite
def _origin(draw: st.DrawFn) -> list[bytes]:
    old = draw(st.integers(0, 9)) == 0
    middle = b" %d" % draw(st.integers(-1, 3)) if old else b""
    return [b"INLINE_ORIGIN %d%s %s" % (draw(ORIGIN_IDS), middle, draw(NAMES))]


RECORD = st.one_of(
    _func(), _func(), _public(), _public(), _cfi(), _cfi(), _stack_win(), _stack_win(), _file(), _file(),
    _origin(), _origin(),
    GARBAGE.map(lambda g: [g]),
    st.just([b""]),
)  # fmt: skip


@st.composite
def sym_files(draw: st.DrawFn) -> bytes:
    """The bytes of a small, often damaged `.sym` file."""
    style = Style(
        newline=draw(st.sampled_from([b"\n", b"\n", b"\r\n"])),
        final_newline=draw(st.integers(0, 4)) > 0,
        module_line=draw(st.integers(0, 9)) > 0,
        odd_spacing=draw(st.integers(0, 4)) == 0,
        upper_hex=draw(st.integers(0, 5)) == 0,
    )
    lines: list[bytes] = []
    if style.module_line:
        lines.append(b"MODULE Linux x86_64 0123456789ABCDEF0123456789ABCDEF0 test module")
    if draw(st.booleans()):
        lines.append(b"INFO CODE_ID ABCDEF0123 libtest.so")
    for record in draw(st.lists(RECORD, min_size=0, max_size=24)):
        lines.extend(record)
    if style.odd_spacing:
        lines = [_respace(line, draw) for line in lines]
    if style.upper_hex:
        lines = [line.upper() if line.startswith(b"STACK CFI") else line for line in lines]
    data = style.newline.join(lines)
    if style.final_newline and lines:
        data += style.newline
    return data


def _respace(line: bytes, draw: st.DrawFn) -> bytes:
    """Sometimes double a separator or turn it into a tab (valid for rust-minidump's grammar)."""
    if b" " not in line or draw(st.integers(0, 3)):
        return line
    i = draw(st.integers(0, line.count(b" ") - 1))
    parts = line.split(b" ")
    return (
        b" ".join(parts[: i + 1]) + draw(st.sampled_from([b"  ", b"\t", b" \t "])) + b" ".join(parts[i + 1 :])
    )


def probe_addresses(data: bytes) -> list[int]:
    """Every number that looks like an address in the file, ±1, and a few more."""
    found = {0, 1, 0x17F, 0x180, 0x1B0, 0x1000, (1 << 64) - 1}
    for token in data.replace(b"\t", b" ").replace(b"\r", b" ").replace(b"\n", b" ").split(b" "):
        try:
            n = int(token, 16)
        except ValueError:
            continue
        if n < 0x400:
            found.update((n - 1, n, n + 1))
    return sorted(a for a in found if a >= 0)
