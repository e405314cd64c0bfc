"""Bounds-checked reads over the dump's bytes; every failure is a `MinidumpError` with an offset.

`file_bytes` gets a dump file's bytes (read, or mapped when large). `ByteSource` wraps the whole
file (a memoryview over the mmap or the bytes) and knows the byte order. `Cursor` walks one
stream. Neither ever allocates by a count found in the file: callers check counts against the
bytes that exist (`fit_count`) before looping.
"""

from __future__ import annotations

import codecs
import mmap
import os
import stat
import struct

from inspector.core.errors import MinidumpError
from inspector.core.memo import memo
from inspector.core.minidump.context_layouts import context_size
from inspector.core.minidump.errors import (
    BadData,
    BadRva,
    StreamProblem,
    StreamSizeMismatch,
    StreamTruncated,
    UnreadableFile,
)
from inspector.core.minidump.format import Location

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (inspector.core.lazy)
if TYPE_CHECKING:  # (the alias is for type checkers: annotations are not evaluated)
    from collections.abc import Callable
    from typing import Literal

    from inspector.core.minidump.context import CpuContext

    #: Reads a context from (location, what) or raises MinidumpError; supplied by the dump.
    ContextReader = Callable[[Location, str], CpuContext]
#: Contexts already read, by location: the context, or (the `what` it was read as, its error).
ContextCache = dict["Location", "CpuContext | tuple[str, MinidumpError]"]

#: Unicode White_Space: what Rust's `str::trim` removes (Python's `str.strip` also removes \x1c-\x1f).
RUST_WHITESPACE = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)


def rust_trim(text: str) -> str:
    """`str::trim` of Rust."""
    return text.strip(RUST_WHITESPACE)


def byte_order(endian: str) -> Literal["little", "big"]:
    """`int.from_bytes` order for a struct endian prefix."""
    return "little" if endian == "<" else "big"


@memo(256)
def _compiled(fmt: str) -> struct.Struct:
    return struct.Struct(fmt)


# ---- the file ------------------------------------------------------------------------------------

#: A file up to this size is read rather than mapped: mapping a small dump costs more (the map and
#: unmap calls, a page fault for each page read) than copying it, and most dumps are small.
READ_LIMIT = 4 << 20


def check_openable(path: str | os.PathLike[str], kind: str = "minidump") -> None:
    """`UnreadableFile` for a directory or a file that is not regular (a pipe, socket or device:
    opening a named pipe for reading would wait for a writer, for ever). One `stat`; a path that
    cannot be looked at is left to the `open` that follows, whose error says why."""
    try:
        mode = os.stat(path).st_mode
    except ValueError:  # a NUL byte in the path: no file can have that name
        raise UnreadableFile(f"{path}: no such file (its name holds a NUL byte)") from None
    except OSError:
        return
    if stat.S_ISDIR(mode):
        raise UnreadableFile(f"{path} is a directory, not a {kind} file")
    if not stat.S_ISREG(mode):
        raise UnreadableFile(f"{path} is not a regular file (a pipe, socket or device), not a {kind} file")


def open_for_reading(path: str | os.PathLike[str]) -> int:
    """A file descriptor to read `path` (binary on Windows), or `UnreadableFile`."""
    try:
        return os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    except FileNotFoundError:
        raise UnreadableFile(f"{path}: no such file") from None
    except OSError as exc:
        raise UnreadableFile(f"{path}: cannot open ({exc.strerror or exc})") from None


def read_up_to(fd: int, size: int) -> bytes:
    """Up to `size` bytes from `fd` (fewer at its end)."""
    chunks = []
    while size > 0 and (chunk := os.read(fd, size)):
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def file_bytes(path: str | os.PathLike[str]) -> tuple[memoryview, mmap.mmap | None]:
    """The bytes of the file at `path` (checked with `check_openable` first), and its mapping to
    close when they were mapped rather than read (a file over `READ_LIMIT`)."""
    fd = open_for_reading(path)
    try:
        size = os.fstat(fd).st_size
        if size <= READ_LIMIT:
            try:
                return memoryview(read_up_to(fd, size)), None
            except OSError as exc:
                raise UnreadableFile(f"{path}: cannot read the file ({exc})") from None
        mapping = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
        return memoryview(mapping), mapping
    except (OSError, ValueError) as exc:
        raise UnreadableFile(f"{path}: cannot map the file ({exc})") from None
    finally:
        os.close(fd)


# ---- the bytes -------------------------------------------------------------------------------------

#: Bytes of text a dump may decode, at the least (it may always decode 4x its own size).
TEXT_BUDGET = 64 << 20


class ByteSource:
    """The whole dump: bounds-checked slices, integers and strings at file offsets.

    Strings are decoded once per offset and shared: a hostile dump can make thousands of
    records (modules, threads, annotations) name the same megabyte-long string, which would
    otherwise be decoded, and held, once per record — a 1 MB file asking for gigabytes. The
    text decoded at distinct offsets (overlapping strings can be crafted too) is limited to
    `TEXT_BUDGET` or 4x the file's size; past that a string is `BadData`.
    """

    __slots__ = (
        "_text_budget",
        "_u32",
        "_utf8_strings",
        "_utf16",
        "_utf16_strings",
        "data",
        "endian",
        "size",
    )

    def __init__(self, data: memoryview, endian: str = "<") -> None:
        self.data = data
        self.size = len(data)
        self.endian = endian
        self._u32 = _compiled(endian + "I").unpack_from
        # the codec's own function: `bytes.decode("utf-16-le")` goes through the codec registry
        # and a Python wrapper for every module, thread and annotation name
        self._utf16 = codecs.utf_16_le_decode if endian == "<" else codecs.utf_16_be_decode
        # decoded strings by offset, one table per encoding
        self._utf16_strings: dict[int, str] = {}
        self._utf8_strings: dict[int, str] = {}
        self._text_budget = max(TEXT_BUDGET, 4 * self.size)

    @staticmethod
    def _over_budget(offset: int, size: int) -> BadData:
        """A string past the budget for text (which strings spend once decoded)."""
        return BadData(
            f"string of {size} bytes at {offset:#x} is past this dump's budget for text "
            "(many records name long strings)",
            offset=offset,
        )

    def struct(self, fmt: str) -> struct.Struct:
        """A compiled struct for `fmt` in this dump's byte order."""
        return _compiled(self.endian + fmt)

    def has(self, offset: int, size: int) -> bool:
        return offset >= 0 and size >= 0 and offset + size <= self.size

    def slice(self, offset: int, size: int, what: str = "data") -> memoryview:
        """`size` bytes at `offset`, or `BadRva` when they are not all in the file."""
        if offset < 0 or size < 0 or offset + size > self.size:  # `has`, without a call: hot
            raise self._outside(offset, size, what)
        return self.data[offset : offset + size]

    def copy(self, offset: int, size: int, what: str = "data") -> bytes:
        """`slice`'s bytes, copied."""
        if offset < 0 or size < 0 or offset + size > self.size:
            raise self._outside(offset, size, what)
        return self.data[offset : offset + size].tobytes()

    def _outside(self, offset: int, size: int, what: str) -> BadRva:
        return BadRva(
            f"{what} of {size} bytes at {offset:#x} is outside the file ({self.size:#x} bytes)", offset=offset
        )

    def unpack(self, fmt: str, offset: int, what: str = "record") -> tuple[int, ...]:
        s = self.struct(fmt)
        if not self.has(offset, s.size):
            raise BadRva(f"{what} of {s.size} bytes at {offset:#x} is outside the file", offset=offset)
        values: tuple[int, ...] = s.unpack_from(self.data, offset)
        return values

    def u32(self, offset: int) -> int:
        if offset < 0 or offset + 4 > self.size:  # `has`, without a call: hot
            raise BadRva(f"u32 at {offset:#x} is outside the file", offset=offset)
        value: int = self._u32(self.data, offset)[0]
        return value

    def utf16_string(self, offset: int) -> str:
        """A MINIDUMP_STRING: u32 byte length then UTF-16 (strict: bad surrogates are an error)."""
        text = self._utf16_strings.get(offset)
        if text is not None:
            return text
        length = self.u32(offset)
        if length % 2:
            raise BadData(f"UTF-16 string at {offset:#x} has odd byte length {length}", offset=offset)
        raw = self.slice(offset + 4, length, "UTF-16 string")
        if length > self._text_budget:
            raise self._over_budget(offset, length)
        try:
            text = self._utf16(raw, "strict", True)[0]
        except UnicodeDecodeError as exc:
            raise BadData(f"UTF-16 string at {offset:#x} is not valid UTF-16", offset=offset) from exc
        self._text_budget -= length
        self._utf16_strings[offset] = text
        return text

    def utf8_string(self, offset: int, *, terminated: bool) -> str:
        """A MINIDUMP_UTF8_STRING: u32 length, bytes, and (if `terminated`) a NUL after them."""
        length = self.u32(offset)
        raw = self.slice(offset + 4, length, "UTF-8 string")
        if terminated and (not self.has(offset + 4 + length, 1) or self.data[offset + 4 + length] != 0):
            raise BadData(f"UTF-8 string at {offset:#x} is not NUL-terminated", offset=offset)
        text = self._utf8_strings.get(offset)
        if text is not None:
            return text
        if length > self._text_budget:
            raise self._over_budget(offset, length)
        try:
            text = str(raw, "utf-8")
        except UnicodeDecodeError as exc:
            raise BadData(f"UTF-8 string at {offset:#x} is not valid UTF-8", offset=offset) from exc
        self._text_budget -= length
        self._utf8_strings[offset] = text
        return text


class Cursor:
    """Sequential reads inside one stream, reporting absolute file offsets on failure."""

    __slots__ = ("base", "end", "pos", "source")

    def __init__(self, source: ByteSource, base: int, size: int) -> None:
        self.source = source
        self.base = base
        self.end = base + size
        self.pos = base

    def need(self, size: int, what: str) -> None:
        if size < 0 or self.pos + size > self.end:
            raise StreamTruncated(
                f"{what} needs {size} bytes at {self.pos:#x} but the stream ends at {self.end:#x}",
                offset=self.pos,
            )

    def unpack(self, fmt: str, what: str = "record") -> tuple[int, ...]:
        s = self.source.struct(fmt)
        self.need(s.size, what)
        values: tuple[int, ...] = s.unpack_from(self.source.data, self.pos)
        self.pos += s.size
        return values

    def u32(self, what: str = "u32") -> int:
        return self.unpack("I", what)[0]

    def u64(self, what: str = "u64") -> int:
        return self.unpack("Q", what)[0]

    def take(self, size: int, what: str = "bytes") -> memoryview:
        self.need(size, what)
        view = self.source.data[self.pos : self.pos + size]
        self.pos += size
        return view


class StreamContext:
    """What a stream parser gets: the file, its own extent, and a place to record damage."""

    __slots__ = ("offset", "problems", "size", "source", "stream_type")

    def __init__(self, source: ByteSource, stream_type: int, offset: int, size: int) -> None:
        self.source = source
        self.stream_type = stream_type
        self.offset = offset
        self.size = size
        self.problems: list[StreamProblem] = []

    def cursor(self) -> Cursor:
        return Cursor(self.source, self.offset, self.size)

    @property
    def data(self) -> memoryview:
        return self.source.data[self.offset : self.offset + self.size]

    def report(self, error: MinidumpError, *, rejects: bool = True) -> None:
        """Record `error` as damage in this stream (at its offset, or the stream start).

        `rejects`: whether rust-minidump would refuse the whole stream for it.
        """
        offset = self.offset if error.offset is None else error.offset
        self.problems.append(StreamProblem(self.stream_type, offset, error.message, error.code, rejects))

    def note(
        self, message: str, *, offset: int | None = None, code: str = BadData.code, rejects: bool = False
    ) -> None:
        """Record damage described by text (by default one rust-minidump tolerates)."""
        self.problems.append(
            StreamProblem(self.stream_type, self.offset if offset is None else offset, message, code, rejects)
        )


def location_problem(source: ByteSource, rva: int, size: int, what: str, at: int) -> BadRva | None:
    """A `BadRva` (at `at`, the descriptor's offset) when `size` bytes at `rva` are not all in the file."""
    if source.has(rva, size):
        return None
    return outside_problem(source, rva, size, what, at)


def outside_problem(source: ByteSource, rva: int, size: int, what: str, at: int) -> BadRva:
    """The `BadRva` of `location_problem` for bytes known not to be all in the file."""
    present = max(0, min(size, source.size - rva))
    where = f"partly outside the file (the first {present:#x} are in it)" if present else "outside the file"
    return BadRva(f"{what} of {size:#x} bytes at {rva:#x} is {where}", offset=at)


def context_problems(
    source: ByteSource, rva: int, size: int, layout: tuple[str, int], *, what: str, at: int
) -> list[MinidumpError]:
    """Damage of a context that was read all the same: its location runs past the end of the file,
    or it has fewer bytes than its layout (`layout`: name and size) and lacks its floating-point
    state."""
    problems: list[MinidumpError] = []
    outside = location_problem(source, rva, size, what, at)
    if outside is not None:
        problems.append(outside)
    available = max(0, min(size, source.size - rva))
    name, layout_size = layout
    if available < layout_size:
        problems.append(
            StreamTruncated(
                f"{what} has {available} of the {layout_size} bytes of {name}: "
                "its registers are read, its floating-point state is missing",
                offset=at,
            )
        )
    return problems


def read_stream_context(
    ctx: StreamContext,
    read_context: ContextReader,
    location: Location,
    *,
    what: str,
    at: int,
    cache: ContextCache | None = None,
) -> CpuContext | None:
    """The context a thread or the exception names, its damage reported in `ctx` (None if unreadable).

    `at` is the offset of the descriptor. `cache` shares one read between the descriptors that
    name one location: a hostile list may point a million threads at one context, good or bad.
    A cached error is reported again under this descriptor's `what` (the reader's messages
    begin with the `what` they were given).
    """
    cached = cache.get(location) if cache is not None else None
    try:
        if isinstance(cached, tuple) and cached[1].message.startswith(cached[0]):
            first_what, error = cached
            raise type(error)(what + error.message[len(first_what) :], offset=error.offset)
        context = cached if cached is not None and not isinstance(cached, tuple) else None
        if context is None:
            context = read_context(location, what)
    except MinidumpError as exc:
        if cache is not None and cached is None:
            cache[location] = (what, exc)
        ctx.report(exc, rejects=False)
        return None
    if cache is not None:
        cache[location] = context
    # read from the bytes that are there: still damage
    layout = (context.layout.value, context_size(context.layout))
    for damage in context_problems(ctx.source, location.rva, location.data_size, layout, what=what, at=at):
        ctx.report(damage, rejects=False)
    return context


def read_list_header(ctx: StreamContext, entry_size: int, what: str) -> tuple[int, int]:
    """A classic list stream (u32 count, then entries): (offset of the first entry, entries to read).

    rust-minidump accepts exactly `4 + count*size` bytes, or 4 bytes more with
    the padding placed after the count. Anything else it rejects; we read the
    entries that fit and record the mismatch.
    """
    cur = ctx.cursor()
    claimed = cur.u32(f"{what} count")
    expected = 4 + claimed * entry_size
    first = ctx.offset + 4
    if ctx.size == expected + 4:
        first += 4
    elif ctx.size != expected:
        ctx.report(
            StreamSizeMismatch(
                f"{what} claims {claimed} entries of {entry_size} bytes ({expected} bytes with the count) "
                f"but the stream has {ctx.size} bytes",
                offset=ctx.offset,
            )
        )
    count = fit_count(claimed, ctx.offset + ctx.size - first, entry_size)
    return first, count


def read_ex_list_header(ctx: StreamContext, entry_size: int, what: str) -> tuple[int, int, int]:
    """An extended list stream (header size, entry size, count): (first entry, stride, entries to read)."""
    cur = ctx.cursor()
    header_size, stride, claimed = cur.unpack("III", f"{what} header")
    if header_size < 12:
        ctx.report(
            BadData(f"{what} header size {header_size} is smaller than its 12 known bytes", offset=ctx.offset)
        )
        header_size = 12
    if stride < entry_size:
        ctx.report(
            BadData(
                f"{what} entries are {stride} bytes, smaller than the {entry_size} needed", offset=ctx.offset
            )
        )
        return ctx.offset + header_size, entry_size, 0
    if stride != entry_size:
        ctx.note(
            f"{what} entries are {stride} bytes (expected {entry_size}); reading the known part of each",
            rejects=True,
        )
    available = ctx.size - header_size
    count = fit_count(claimed, available, stride)
    if count < claimed:
        ctx.report(
            StreamSizeMismatch(
                f"{what} claims {claimed} entries of {stride} bytes but only {count} fit in {ctx.size} bytes",
                offset=ctx.offset,
            )
        )
    return ctx.offset + header_size, stride, count


def fit_count(claimed: int, available_bytes: int, entry_size: int) -> int:
    """How many `entry_size` records of a claimed `claimed` fit in `available_bytes`."""
    if entry_size <= 0 or available_bytes <= 0:
        return 0
    return max(0, min(claimed, available_bytes // entry_size))
