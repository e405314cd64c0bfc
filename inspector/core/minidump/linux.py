"""Breakpad's Linux streams: copies of /proc files (cpuinfo, status, maps, …), auxv and DSO debug data.

The text streams keep their raw bytes (the dump report prints them verbatim);
the values rust-minidump takes from them are parsed with its rules: key/value
lines split at the first separator, ASCII-whitespace trimmed and surrounding
double quotes removed; `/proc/self/maps` parsed as the procfs crate does (one
bad line makes the whole stream unusable, and then there is no mapping count).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from inspector.core.minidump.errors import BadData, BadRva
from inspector.core.minidump.reader import StreamContext, fit_count, rust_trim
from inspector.core.record import Record

_ASCII_WS = b" \t\n\r\x0c"


def _strip_quotes(raw: bytes) -> bytes:
    raw = raw.strip(_ASCII_WS)
    if raw.startswith(b'"') and raw[1:].endswith(b'"'):
        return raw[1:-1]
    return raw


def key_values(raw: bytes, separator: bytes) -> list[tuple[bytes, bytes]]:
    """rust-minidump's `linux_list_iter`: every line with the separator, as trimmed (key, value)."""
    out = []
    for line in raw.split(b"\n"):
        key, sep, value = line.partition(separator)
        if sep:
            out.append((_strip_quotes(key), _strip_quotes(value)))
    return out


def values_of(raw: bytes, separator: bytes, wanted: bytes) -> Iterator[bytes]:
    """The values of `key_values` whose key is `wanted`, in order.

    Only the lines holding `wanted` are split: a /proc/cpuinfo copy has a few dozen lines for
    every CPU of the machine, and one value of one of them is read for every dump.
    """
    at = raw.find(wanted)
    while at >= 0:
        start = raw.rfind(b"\n", 0, at) + 1
        end = raw.find(b"\n", at)
        if end < 0:
            end = len(raw)
        key, sep, value = raw[start:end].partition(separator)
        if sep and _strip_quotes(key) == wanted:
            yield _strip_quotes(value)
        at = raw.find(wanted, end)


_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"
#: One full-match pattern per radix (Python's int() also takes "_", spaces and "0x": Rust does not).
_UINT_PATTERNS: dict[int, re.Pattern[str]] = {}


def _uint_pattern(radix: int) -> re.Pattern[str]:
    pattern = _UINT_PATTERNS.get(radix)
    if pattern is None:
        digits = _DIGITS[:radix] + _DIGITS[10:radix].upper()
        pattern = _UINT_PATTERNS[radix] = re.compile(r"\+?[" + re.escape(digits) + "]+")
    return pattern


def rust_parse_uint(text: str, radix: int, bits: int = 64) -> int | None:
    """Rust's `uN::from_str_radix`: optional '+', then digits of the radix only; None if bad or too big."""
    if _uint_pattern(radix).fullmatch(text) is None:
        return None
    value = int(text, radix)
    return value if value < 1 << bits else None


def _rust_parse_int(text: str, radix: int, bits: int) -> int | None:
    """Rust's `iN::from_str_radix`: one optional sign, then digits."""
    negative = text.startswith("-")
    body = text[1:] if negative or text.startswith("+") else text
    if not body or body[0] in "+-":
        return None
    magnitude = rust_parse_uint(body, radix, bits)
    if magnitude is None:
        return None
    value = -magnitude if negative else magnitude
    return value if -(1 << (bits - 1)) <= value < 1 << (bits - 1) else None


class LinuxCpuInfo(Record):
    """/proc/cpuinfo."""

    raw: bytes

    def entries(self) -> list[tuple[bytes, bytes]]:
        return key_values(self.raw, b":")

    @property
    def microcode_version(self) -> int | None:
        """The first `microcode` value, as rust-minidump reads it (must be `0x` + hex)."""
        for value in values_of(self.raw, b":", b"microcode"):
            try:
                text = value.decode("utf-8")
            except UnicodeDecodeError:
                continue
            if not text.startswith("0x"):
                return None
            return rust_parse_uint(text[2:], 16)
        return None


class LinuxProcStatus(Record):
    """/proc/self/status."""

    raw: bytes

    def entries(self) -> list[tuple[bytes, bytes]]:
        return key_values(self.raw, b":")

    @property
    def pid(self) -> int:
        """The `Pid:` value; 0 when missing or not a number (rust-minidump's rule)."""
        value = next(values_of(self.raw, b":", b"Pid"), None)
        if value is None:
            return 0
        return rust_parse_uint(value.decode("utf-8", errors="replace"), 10, 32) or 0


class LinuxLsbRelease(Record):
    """/etc/lsb-release (or os-release)."""

    raw: bytes

    def entries(self) -> list[tuple[bytes, bytes]]:
        return key_values(self.raw, b"=")

    def fields(self) -> dict[str, str]:
        """id / release / codename / description, as the JSON `lsb_release` object (later lines win)."""
        out = {"id": "", "release": "", "codename": "", "description": ""}
        names = {
            b"DISTRIB_ID": "id",
            b"ID": "id",
            b"DISTRIB_RELEASE": "release",
            b"VERSION_ID": "release",
            b"DISTRIB_CODENAME": "codename",
            b"VERSION_CODENAME": "codename",
            b"DISTRIB_DESCRIPTION": "description",
            b"PRETTY_NAME": "description",
        }
        for key, value in self.entries():
            name = names.get(key)
            if name:
                out[name] = value.decode("utf-8", errors="replace")
        return out


class LinuxCmdLine(Record):
    """/proc/self/cmdline (NUL-separated arguments)."""

    raw: bytes

    @property
    def arguments(self) -> list[str]:
        return (
            [a.decode("utf-8", errors="replace") for a in self.raw.rstrip(b"\0").split(b"\0")]
            if self.raw
            else []
        )


class LinuxEnviron(Record):
    """/proc/self/environ (NUL-separated NAME=value)."""

    raw: bytes

    @property
    def variables(self) -> list[tuple[str, str]]:
        out = []
        for item in self.raw.split(b"\0"):
            if item:
                name, _, value = item.partition(b"=")
                out.append((name.decode("utf-8", errors="replace"), value.decode("utf-8", errors="replace")))
        return out


class LinuxAuxv(Record):
    """/proc/self/auxv: (type, value) words of the CPU's pointer width."""

    raw: bytes
    entries: tuple[tuple[int, int], ...]


class LinuxMapping(Record):
    start: int
    end: int
    permissions: str
    offset: int
    device: tuple[int, int]
    inode: int
    pathname: str

    @property
    def is_readable(self) -> bool:
        return "r" in self.permissions

    @property
    def is_writable(self) -> bool:
        return "w" in self.permissions

    @property
    def is_executable(self) -> bool:
        return "x" in self.permissions


class LinuxMaps(Record):
    """/proc/self/maps; `mappings` is None when the text does not parse (`error` says why)."""

    raw: bytes
    mappings: tuple[LinuxMapping, ...] | None
    error: str | None = None

    @property
    def mapping_count(self) -> int | None:
        """JSON `linux_memory_map_count`."""
        return None if self.mappings is None else len(self.mappings)


class LinkMapEntry(Record):
    addr: int
    name_rva: int
    ld: int
    name: str | None


class LinuxDsoDebug(Record):
    """r_debug of the dynamic loader and its link map (MDRawDebug32/64)."""

    version: int
    map_rva: int
    dso_count: int
    brk: int
    ldbase: int
    dynamic: int
    link_map: tuple[LinkMapEntry, ...]


_ASCII_WS_TEXT = " \t\n\r\x0c"
_WS_SPLIT = re.compile(r"[ \t\n\r\x0c]+")


class _MapsError(Exception):
    pass


def _pair(text: str, separator: str, parse: object) -> tuple[int, int]:
    parts = text.split(separator)
    if len(parts) < 2:
        raise _MapsError(f"expected two values separated by {separator!r} in {text!r}")
    assert callable(parse)
    first, second = parse(parts[0]), parse(parts[1])
    if first is None or second is None:
        raise _MapsError(f"bad number in {text!r}")
    return first, second


def _parse_map_line(line: str) -> LinuxMapping:
    parts = line.split(" ", 5)
    if len(parts) < 6:
        raise _MapsError(f"mapping line has {len(parts)} of 6 fields: {line!r}")
    address, perms, offset_text, dev, inode_text, path = parts
    start, end = _pair(address, "-", lambda t: rust_parse_uint(t, 16))
    offset = rust_parse_uint(offset_text, 16)
    device = _pair(dev, ":", lambda t: _rust_parse_int(t, 16, 32))
    inode = rust_parse_uint(inode_text, 10)
    if offset is None or inode is None:
        raise _MapsError(f"bad offset or inode in {line!r}")
    pathname = rust_trim(path)
    if pathname.startswith("[stack:"):
        inner = pathname[1:-1].split(":")
        if len(inner) < 2 or rust_parse_uint(inner[1], 10, 32) is None:
            raise _MapsError(f"bad thread stack name {pathname!r}")
    elif pathname.startswith("/SYSV") and (
        len(pathname) < 13 or rust_parse_uint(pathname[5:13], 16, 32) is None
    ):
        raise _MapsError(f"bad SysV segment name {pathname!r}")
    return LinuxMapping(start, end, perms, offset, device, inode, pathname)


#: A mapping line as the kernel writes it, every number within its type's range: read by this one
#: match. Any other line (signs, upper-case hex, huge numbers, a thread-stack or SysV name, damage)
#: goes to `_parse_map_line`, which applies procfs' rules and says what is wrong.
_PLAIN_MAP_LINE = re.compile(
    r"([0-9a-f]{1,16})-([0-9a-f]{1,16}) ([^ ]*) ([0-9a-f]{1,16}) "  # start-end perms offset
    r"([0-9a-f]{1,7}):([0-9a-f]{1,7}) ([0-9]{1,19}) (.*)"  # device inode path
)


def _text_lines(raw: bytes) -> list[str | None]:
    """The lines of `raw` decoded (None for a line that is not UTF-8), without a last empty one."""
    try:
        lines: list[str | None] = list(raw.decode("utf-8").split("\n"))
    except UnicodeDecodeError:
        lines = []
        for line in raw.split(b"\n"):
            try:
                lines.append(line.decode("utf-8"))
            except UnicodeDecodeError:
                lines.append(None)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def parse_maps_text(raw: bytes) -> tuple[tuple[LinuxMapping, ...] | None, str | None]:
    """Mappings of a maps file, or (None, reason) when procfs would reject it."""
    mappings: list[LinuxMapping] = []
    plain = _PLAIN_MAP_LINE.fullmatch
    try:
        for number, text in enumerate(_text_lines(raw), 1):
            if text is None:
                raise _MapsError(f"line {number} is not UTF-8")
            line = text.removesuffix("\r")
            if line[:1].isascii() and line[:1].isupper():
                if not mappings:
                    raise _MapsError(f"line {number}: attribute line before any mapping")
                if line.startswith("VmFlags"):
                    continue
                fields = _WS_SPLIT.split(text.strip(_ASCII_WS_TEXT))
                if len(fields) >= 2 and rust_parse_uint(fields[1], 10) is None:
                    raise _MapsError(f"line {number}: attribute value is not a number")
                continue
            match = plain(line)
            if match is not None:
                start, end, perms, offset, major, minor, inode, path = match.groups()
                pathname = rust_trim(path)
                if not pathname.startswith(("[stack:", "/SYSV")):
                    mappings.append(
                        LinuxMapping(
                            int(start, 16),
                            int(end, 16),
                            perms,
                            int(offset, 16),
                            (int(major, 16), int(minor, 16)),
                            int(inode),
                            pathname,
                        )
                    )
                    continue
            try:
                mappings.append(_parse_map_line(line))
            except _MapsError as exc:
                raise _MapsError(f"line {number}: {exc}") from None
    except _MapsError as exc:
        return None, str(exc)
    return tuple(mappings), None


def parse_linux_maps(ctx: StreamContext) -> LinuxMaps:
    raw = bytes(ctx.data)
    mappings, error = parse_maps_text(raw)
    if error is not None:
        ctx.report(BadData(f"memory maps do not parse: {error}", offset=ctx.offset))
    return LinuxMaps(raw, mappings, error)


def parse_linux_auxv(ctx: StreamContext, pointer_width: int) -> LinuxAuxv:
    raw = bytes(ctx.data)
    width = 8 if pointer_width == 8 else 4
    record = ctx.source.struct("QQ" if width == 8 else "II")
    count = len(raw) // (2 * width)
    if len(raw) % (2 * width):
        ctx.note(f"auxv has {len(raw)} bytes, not a multiple of {2 * width}")
    entries = tuple(record.iter_unpack(raw[: count * 2 * width]))
    return LinuxAuxv(raw, entries)


def parse_linux_dso_debug(ctx: StreamContext, pointer_width: int) -> LinuxDsoDebug:
    source = ctx.source
    cur = ctx.cursor()
    if pointer_width == 8:
        version, map_rva, dso_count, _, brk, ldbase, dynamic = cur.unpack("IIIIQQQ", "DSO debug")
        entry_format, entry_size = "QIIQ", 24
    else:
        version, map_rva, dso_count, brk, ldbase, dynamic = cur.unpack("IIIIII", "DSO debug")
        entry_format, entry_size = "III", 12
    entries = []
    count = fit_count(dso_count, source.size - map_rva, entry_size) if map_rva else 0
    if count < dso_count:
        ctx.report(
            BadRva(f"link map of {dso_count} entries at {map_rva:#x} is outside the file", offset=ctx.offset),
            rejects=False,
        )
    record = source.struct(entry_format)
    for i in range(count):
        values = record.unpack_from(source.data, map_rva + i * entry_size)
        if pointer_width == 8:
            addr, name_rva, _, ld = values
        else:
            addr, name_rva, ld = values
        name: str | None
        try:
            name = source.utf16_string(name_rva) if name_rva else None
        except (BadRva, BadData) as exc:
            ctx.report(exc, rejects=False)
            name = None
        entries.append(LinkMapEntry(addr, name_rva, ld, name))
    return LinuxDsoDebug(version, map_rva, dso_count, brk, ldbase, dynamic, tuple(entries))
