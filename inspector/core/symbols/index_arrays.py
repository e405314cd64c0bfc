"""Vectorised helpers of the symbol index builder: SWAR field parsing and whole-array operations.

Numeric fields of many `.sym` lines are parsed at once from unaligned 8-byte loads (SWAR:
find the separating space, check the digits, pack eight digits in three shift-or steps);
the rest are small numpy helpers (grouping rows, sorting by several keys, block ends,
overlapping ranges). Used only by `index_build`, the cold path: numpy is imported only there.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

U8 = npt.NDArray[np.uint8]
I64 = npt.NDArray[np.int64]
U64 = npt.NDArray[np.uint64]
Mask = npt.NDArray[np.bool_]

LEFT_MARGIN = 16
RIGHT_MARGIN = 16


# ---- whole-array helpers --------------------------------------------------------


def raw(arr: npt.NDArray[Any]) -> U64:
    contiguous: U64 = np.ascontiguousarray(arr, dtype=np.uint64)
    return contiguous


def line_at(data: Any, offset: int, size: int) -> bytes:
    end = data.find(b"\n", offset)
    return bytes(data[offset : size if end < 0 else end])


def rows_by_value(values: npt.NDArray[np.int8], n_values: int) -> tuple[I64, I64]:
    """Row numbers grouped by value (ascending within a value) and the bounds of each value's group."""
    order: I64 = np.argsort(values, kind="stable")
    bounds = np.zeros(n_values + 1, dtype=np.int64)
    np.cumsum(np.bincount(values, minlength=n_values), out=bounds[1:])
    return order, bounds


def word_view(buf: U8) -> U64:
    """`buf` as overlapping little-endian u64s: element i is the 8 bytes at buf[i] (an unaligned load)."""
    return np.ndarray(shape=(max(len(buf) - 7, 0),), dtype="<u8", buffer=buf, strides=(1,))


def extended(a: U8, pos: int, end: int, size: int) -> tuple[U8, int]:
    """`a[pos:end]` with LEFT_MARGIN bytes before and RIGHT_MARGIN after (zeros beyond the file)."""
    lo, hi = pos - LEFT_MARGIN, end + RIGHT_MARGIN
    if lo >= 0 and hi <= size:
        return a[lo:hi], LEFT_MARGIN
    ext = np.zeros(hi - lo, dtype=np.uint8)
    ext[max(lo, 0) - lo : min(hi, size) - lo] = a[max(lo, 0) : min(hi, size)]
    return ext, LEFT_MARGIN


def sort_order(*keys_major_first: U64) -> I64 | None:
    """Stable order by the keys (first one most significant), or None when already in order."""
    first = keys_major_first[0]
    if len(first) < 2 or bool((first[1:] > first[:-1]).all()):
        return None
    order: I64 = np.lexsort(keys_major_first[::-1])
    return order


def block_ends(heads: U64, offsets: U64, size: int) -> U64:
    """For record lines at `offsets`: the offset of the next head line (or the file size)."""
    nxt = np.searchsorted(heads, offsets, side="right")
    padded = np.append(heads, np.uint64(size))
    ends: U64 = padded[nxt]
    return ends


def first_of_overlaps(start: U64, end: U64) -> Mask:
    """Ranges sorted by (start, end): keep a range only if it starts at or after the end of the
    last kept one. Vectorised for ranges that overlap nothing before them; a Python loop decides
    the (few) others in order."""
    n = len(start)
    if n == 0:
        return np.zeros(0, dtype=bool)
    reach = np.empty(n, dtype=np.uint64)
    reach[0] = 0
    if n > 1:
        np.maximum.accumulate(end[:-1], out=reach[1:])
    keep = start >= reach
    keep[0] = True
    suspects = np.flatnonzero(~keep).tolist()
    if suspects:
        last_end = 0
        previous = -2
        for i in suspects:
            if i - 1 != previous:  # the range just before is certainly kept
                last_end = int(end[i - 1])
            if int(start[i]) >= last_end:
                keep[i] = True
                last_end = int(end[i])
            previous = i
    return keep


# ---- SWAR field parsing -----------------------------------------------------------
#
# Each u64 holds 8 consecutive bytes of a line, the first byte in the lowest 8 bits.

_U = np.uint64
_ONES = _U(0x0101010101010101)
_HIGH = _U(0x8080808080808080)
_LOW7 = _U(0x7F7F7F7F7F7F7F7F)
_SPACES = _U(0x2020202020202020)
_NIBBLE = _U(0x0F0F0F0F0F0F0F0F)
_BYTE_INDEX = _U(0x0001020304050607)
#: _KEEP[n]: the n lowest bytes (the first n characters)
_KEEP = np.array([(1 << (8 * n)) - 1 for n in range(9)], dtype=np.uint64)


def _zero_bytes(x: U64) -> U64:
    """The high bit of every byte of x that is zero (exact: no carries between bytes)."""
    return ~(((x & _LOW7) + _LOW7) | x | _LOW7)


def _first_marked_byte(marks: U64) -> I64:
    """Index (0–7) of the lowest byte whose high bit is set in `marks`; 8 when none is."""
    lowest = marks & (~marks + _U(1))
    index = (((lowest >> _U(7)) * _BYTE_INDEX) >> _U(56)).astype(np.int64)
    result: I64 = np.where(marks == 0, 8, index)
    return result


def _at_least(x: U64, c: int) -> U64:
    """High bit of every byte >= c, for x with the high bit of every byte set."""
    return (x - _U(c) * _ONES) & _HIGH


def _hex_digits(x: U64) -> U64:
    """The high bit of every byte of x that is an ASCII hex digit."""
    hx = x | _HIGH
    digit = _at_least(hx, 0x30) & ~_at_least(hx, 0x3A)
    folded = hx | (_ONES * _U(0x20))
    letter = _at_least(folded, 0x61) & ~_at_least(folded, 0x67)
    return (digit | letter) & ~x & _HIGH


def _dec_digits(x: U64) -> U64:
    hx = x | _HIGH
    return _at_least(hx, 0x30) & ~_at_least(hx, 0x3A) & ~x & _HIGH


def _hex8(x: U64, n: I64) -> tuple[U64, Mask]:
    """The first n (0–8) characters of x as a hex number, and whether they are all hex digits."""
    keep = _KEEP[n]
    ok = (_hex_digits(x) & keep) == (keep & _HIGH)
    nibbles = ((x & _NIBBLE) + ((x >> _U(6)) & _ONES) * _U(9)) & keep
    nibbles = nibbles << (_U(8) * (_U(8) - n.astype(np.uint64)))  # right-align: leading zeros
    t = ((nibbles << _U(4)) | (nibbles >> _U(8))) & _U(0x00FF00FF00FF00FF)
    t = ((t << _U(8)) | (t >> _U(16))) & _U(0x0000FFFF0000FFFF)
    return ((t << _U(16)) | (t >> _U(32))) & _U(0xFFFFFFFF), ok


def _dec8(x: U64, n: I64) -> tuple[U64, Mask]:
    """The first n (0–8) characters of x as a decimal number, and whether they are all digits."""
    keep = _KEEP[n]
    ok = (_dec_digits(x) & keep) == (keep & _HIGH)
    digits = ((x & keep) | (_ONES * _U(0x30) & ~keep)) - _ONES * _U(0x30)
    digits = digits << (_U(8) * (_U(8) - n.astype(np.uint64)))
    t = (digits * _U(10) + (digits >> _U(8))) & _U(0x00FF00FF00FF00FF)
    t = (t * _U(100) + (t >> _U(16))) & _U(0x0000FFFF0000FFFF)
    return (t * _U(10000) + (t >> _U(32))) & _U(0xFFFFFFFF), ok


def skip_m_flag(words: U64, fs: I64) -> I64:
    """Move past an `m ` ("multiple") flag where there is one."""
    is_m = (words[fs] & _U(0xFFFF)) == _U(0x206D)
    shifted: I64 = fs + 2 * is_m.astype(np.int64)
    return shifted


def fields(words: U64, fs: I64, specs: tuple[int, ...]) -> tuple[Mask, list[U64], I64]:
    """Parse the first fields of many lines at once; `fs` is where field 0 starts.

    `specs` gives each field's maximum number of digits: 16 or 8 (hex), 1
    (one hex digit), -1 (one decimal digit) or -10 (decimal, fitting u32).
    Fields must be separated by exactly one space, and each must be followed
    by one (something always follows: a name, rule text or a program string).
    A field running into the end of its line contains the newline and so is
    not valid. Returns the mask of lines whose fields are all valid, the
    values (meaningless elsewhere) and where the text after the fields starts.
    """
    n = len(fs)
    ok = np.ones(n, dtype=bool)
    values: list[U64] = []
    for spec in specs:
        if spec in (1, -1):
            x = words[fs]
            first = x & _U(0xFF)
            digit = _hex_digits(x) if spec == 1 else _dec_digits(x)
            ok &= ((digit & _U(0x80)) != 0) & (((x >> _U(8)) & _U(0xFF)) == _U(32))
            values.append(np.where(first <= _U(0x39), first - _U(0x30), (first | _U(0x20)) - _U(0x57)))
            fs = fs + 2
            continue
        width = abs(spec)
        lo = words[fs]
        p = _first_marked_byte(_zero_bytes(lo ^ _SPACES))
        ok &= (p >= 1) & (p <= width)
        first_n = np.minimum(p, 8)
        value, ok_lo = (_dec8 if spec < 0 else _hex8)(lo, first_n)
        ok &= ok_lo
        # a second (and third) word only where the first holds no space: few fields are that long
        long_rows = np.flatnonzero(p == 8)
        if len(long_rows):
            hi = words[fs[long_rows] + 8]
            p_hi = 8 + _first_marked_byte(_zero_bytes(hi ^ _SPACES))
            if width == 16:
                longer = p_hi == 16
                if longer.any():
                    top = words[fs[long_rows[longer]] + 16]
                    p_hi[longer] = 16 + _first_marked_byte(_zero_bytes(top ^ _SPACES))
            p[long_rows] = p_hi
            valid_length = p_hi <= width
            ok[long_rows] &= valid_length
            rest_n = np.clip(p_hi - 8, 0, 8)
            v_hi, ok_hi = (_dec8 if spec < 0 else _hex8)(hi, rest_n)
            ok[long_rows] &= ok_hi
            if spec < 0:  # decimal, up to 10 digits, fitting u32
                value[long_rows] = value[long_rows] * _POW10[rest_n] + v_hi
                ok[long_rows] &= value[long_rows] <= _U(0xFFFF_FFFF)
            else:
                value[long_rows] = (value[long_rows] << (_U(4) * rest_n.astype(np.uint64))) | v_hi
        values.append(value)
        fs = np.where(ok, fs + p + 1, fs)  # keep failed lines' loads inside the line
    return ok, values, fs


_POW10 = np.array([10**i for i in range(20)], dtype=np.uint64)
