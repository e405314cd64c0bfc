"""The binary symbol index: layout, writer and validating reader.

One index describes one `.sym` file. It holds only sorted numeric arrays and
byte offsets into the `.sym` file; every name, rule text and sub-record stays
in the `.sym` file and is read from it when a lookup needs it. The same
bytes are the on-disk cache file and, when the cache cannot be written, the
in-memory index.

Layout (all integers in the writer's native byte order, which the reader
checks; sections 8-byte aligned)::

    header (64 bytes, struct HEADER)
      magic        8s   b"CISYMIDX"
      version      u32  FORMAT_VERSION
      header_size  u32  64 + identity strings, padded to 8 (= offset of the section table)
      endian       u64  0x0102030405060708 as written (byte-swapped → WrongEndianness)
      sym_size     u64  ┐
      sym_mtime_ns i64  ├ identity of the source .sym (with the two strings below)
      body_size    u64  file size - header_size
      sections     u32  number of section-table entries
      path_len     u32  ┐ lengths of the two identity strings
      module_len   u32  ┘
      crc32        u32  zlib.crc32 of every byte of the file except these 4
    path (utf-8, surrogateescape), first line of the .sym (the MODULE line), zero padding to 8
    section table: sections × (kind u32, item_size u32, offset u64, count u64)
    sections: u64 arrays (item_size 8) or raw bytes (item_size 1)

Sections (`Section`): for FUNC and STACK CFI INIT blocks four parallel u64
arrays sorted by start — start, end (exclusive), offset of the record line,
offset of the next record line that is not one of its sub-lines (so a block is
`sym[offset:block_end]`); for PUBLIC, address and line offset (one entry per
address: the PUBLIC rust-minidump would pick there); for STACK WIN per type,
start, end (after rust-minidump's truncation repair) and line offset; for FILE
and INLINE_ORIGIN, sorted ids and line offsets (the last record of an id wins,
as in rust-minidump's HashMap); the offsets of the INFO lines; and a small
UTF-8 JSON summary (damage report, record counts, flags).

Version history:
    1: first format.
"""

from __future__ import annotations

import struct
import zlib

from inspector.core.record import Record
from inspector.core.symbols.errors import (
    ChecksumMismatch,
    IdentityMismatch,
    MalformedIndex,
    WrongEndianness,
    WrongMagic,
    WrongVersion,
)
from inspector.core.symbols.records import DamagedLine, DamageKind, DamageReport, RecordCounts

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (inspector.core.lazy)
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

MAGIC = b"CISYMIDX"
FORMAT_VERSION = 1
ENDIAN_MARK = 0x0102030405060708
ENDIAN_MARK_SWAPPED = 0x0807060504030201
HEADER = struct.Struct("=8sIIQQqQIIII")
SECTION = struct.Struct("=IIQQ")
_CRC_OFFSET = HEADER.size - 4
assert HEADER.size == 64, HEADER.size
assert SECTION.size == 24, SECTION.size


class Section:
    """The kinds of section, by their numbers in the format.

    Plain `int` constants rather than an `IntEnum`: defining a 22-member enum cost every process
    that reads a symbol index about 2 M instructions (`SECTION_NAMES` names them in messages).
    """

    FUNC_START = 1
    FUNC_END = 2
    FUNC_OFFSET = 3
    FUNC_BLOCK_END = 4
    PUBLIC_ADDRESS = 5
    PUBLIC_OFFSET = 6
    CFI_START = 7
    CFI_END = 8
    CFI_OFFSET = 9
    CFI_BLOCK_END = 10
    WIN4_START = 11
    WIN4_END = 12
    WIN4_OFFSET = 13
    WIN0_START = 14
    WIN0_END = 15
    WIN0_OFFSET = 16
    FILE_ID = 17
    FILE_OFFSET = 18
    ORIGIN_ID = 19
    ORIGIN_OFFSET = 20
    INFO_OFFSET = 21
    SUMMARY = 22


#: Every kind of section, by number
SECTION_NAMES: dict[int, str] = {
    number: name for name, number in vars(Section).items() if name.isupper() and isinstance(number, int)
}

#: Sections whose arrays must be non-decreasing.
SORTED_SECTIONS = (
    Section.FUNC_START,
    Section.PUBLIC_ADDRESS,
    Section.CFI_START,
    Section.WIN4_START,
    Section.WIN0_START,
    Section.FILE_ID,
    Section.ORIGIN_ID,
)
#: Sections holding offsets into the .sym file.
OFFSET_SECTIONS = (
    Section.FUNC_OFFSET,
    Section.FUNC_BLOCK_END,
    Section.PUBLIC_OFFSET,
    Section.CFI_OFFSET,
    Section.CFI_BLOCK_END,
    Section.WIN4_OFFSET,
    Section.WIN0_OFFSET,
    Section.FILE_OFFSET,
    Section.ORIGIN_OFFSET,
    Section.INFO_OFFSET,
)
#: Groups of parallel arrays (same count).
PARALLEL = (
    (Section.FUNC_START, Section.FUNC_END, Section.FUNC_OFFSET, Section.FUNC_BLOCK_END),
    (Section.PUBLIC_ADDRESS, Section.PUBLIC_OFFSET),
    (Section.CFI_START, Section.CFI_END, Section.CFI_OFFSET, Section.CFI_BLOCK_END),
    (Section.WIN4_START, Section.WIN4_END, Section.WIN4_OFFSET),
    (Section.WIN0_START, Section.WIN0_END, Section.WIN0_OFFSET),
    (Section.FILE_ID, Section.FILE_OFFSET),
    (Section.ORIGIN_ID, Section.ORIGIN_OFFSET),
)


class SymbolIdentity(Record):
    """What a cached index must match: the `.sym` file's real path, size, mtime and first line."""

    path: str
    size: int
    mtime_ns: int
    module_line: bytes

    def encoded_path(self) -> bytes:
        return self.path.encode("utf-8", "surrogateescape")


def pack_image(identity: SymbolIdentity, sections: Sequence[tuple[int, int, Any]]) -> bytearray:
    """Assemble an index image from (kind, item size, raw data) sections.

    Raw data is anything with the buffer protocol (bytes, a contiguous numpy array).
    """
    path = identity.encoded_path()
    header_size = _align8(HEADER.size + len(path) + len(identity.module_line))
    table_size = SECTION.size * len(sections)
    offset = _align8(header_size + table_size)
    table = bytearray()
    placed = []
    for kind, item_size, raw in sections:
        nbytes = memoryview(raw).nbytes
        placed.append((offset, raw))
        table += SECTION.pack(kind, item_size, offset, nbytes // item_size)
        offset = _align8(offset + nbytes)
    image = bytearray(offset)
    image[HEADER.size : HEADER.size + len(path)] = path
    image[HEADER.size + len(path) : HEADER.size + len(path) + len(identity.module_line)] = (
        identity.module_line
    )
    image[header_size : header_size + table_size] = table
    for where, raw in placed:
        flat = memoryview(raw).cast("B")
        image[where : where + len(flat)] = flat
    HEADER.pack_into(
        image,
        0,
        MAGIC,
        FORMAT_VERSION,
        header_size,
        ENDIAN_MARK,
        identity.size,
        identity.mtime_ns,
        len(image) - header_size,
        len(sections),
        len(path),
        len(identity.module_line),
        0,
    )
    struct.pack_into("=I", image, _CRC_OFFSET, _crc(image))
    return image


def _crc(image: Any) -> int:
    view = memoryview(image)
    return zlib.crc32(view[_CRC_OFFSET + 4 :], zlib.crc32(view[:_CRC_OFFSET]))


def _align8(n: int) -> int:
    return (n + 7) & ~7


def summary_json(summary: dict[str, Any]) -> bytes:
    import json  # (on first use, with the `re` it imports: importing the engine is cheaper)

    return json.dumps(summary, separators=(",", ":"), sort_keys=True).encode("utf-8")


class IndexImage:
    """A validated index over a buffer (an mmap of the cache file, or bytes just built).

    Arrays are `memoryview`s cast to u64: indexing and `bisect` work on them
    directly, so opening costs O(number of sections), not O(records).
    """

    __slots__ = ("_arrays", "_buffer", "_owner", "_shared", "_views", "derived", "summary")

    def __init__(
        self,
        buffer: Any,
        identity: SymbolIdentity | None,
        *,
        verify_checksum: bool = True,
        owner: Any = None,
        shared: bool = False,
    ) -> None:
        """Validate `buffer`; `owner` (e.g. the mmap of the cache file) is closed by `release()`.

        `shared`: the image is kept for the whole process and used by several `SymbolFile`s at
        once (`IndexCache`), so `release()` leaves it alone; such an image holds bytes, no mapping.
        Raises an `IndexCacheError` subclass (and holds no views of `buffer`) when invalid.
        """
        self._buffer = buffer
        self._owner = owner
        self._shared = False
        #: what a reader derived from the image and keeps with it while the image is kept
        #: (`SymbolFile`: the `ParsedText` of a shared image); None until then
        self.derived: Any = None
        self._views: list[memoryview] = []
        self._arrays: dict[int, memoryview] = {}
        try:
            self._validate(identity, verify_checksum)
        except BaseException:
            owner, self._owner = self._owner, None
            self.release()
            self._owner = owner
            raise
        self._shared = shared

    def _validate(self, identity: SymbolIdentity | None, verify_checksum: bool) -> None:
        view = memoryview(self._buffer)
        self._views.append(view)
        if len(view) < HEADER.size:
            raise MalformedIndex(f"index is {len(view)} bytes, shorter than its header")
        (
            magic,
            version,
            header_size,
            endian,
            sym_size,
            sym_mtime_ns,
            body_size,
            n_sections,
            path_len,
            module_len,
            crc,
        ) = HEADER.unpack_from(view, 0)
        if magic != MAGIC:
            raise WrongMagic(f"not a symbol index (magic {magic!r})")
        if endian == ENDIAN_MARK_SWAPPED:
            raise WrongEndianness("symbol index was written on a machine of the other byte order")
        if endian != ENDIAN_MARK:
            raise MalformedIndex(f"bad byte-order mark {endian:#x}")
        if version != FORMAT_VERSION:
            raise WrongVersion(f"symbol index format {version}, expected {FORMAT_VERSION}")
        if header_size != _align8(HEADER.size + path_len + module_len) or header_size + body_size != len(
            view
        ):
            raise MalformedIndex(
                f"index sizes disagree: header {header_size}, body {body_size}, file {len(view)}"
            )
        if identity is not None:
            path = bytes(view[HEADER.size : HEADER.size + path_len])
            module_line = bytes(view[HEADER.size + path_len : HEADER.size + path_len + module_len])
            if (path, sym_size, sym_mtime_ns, module_line) != (
                identity.encoded_path(),
                identity.size,
                identity.mtime_ns,
                identity.module_line,
            ):
                raise IdentityMismatch("symbol index was built from another version of the .sym file")
        if verify_checksum and _crc(view) != crc:
            raise ChecksumMismatch("symbol index checksum mismatch")
        table_end = header_size + n_sections * SECTION.size
        if n_sections > 64 or table_end > len(view):
            raise MalformedIndex(f"section table of {n_sections} entries does not fit")
        arrays: dict[int, memoryview] = {}
        for i in range(n_sections):
            kind, item_size, offset, count = SECTION.unpack_from(view, header_size + i * SECTION.size)
            name = SECTION_NAMES.get(kind)
            if name is None:
                continue  # an unknown section from a compatible writer: ignore
            expected_item = 1 if kind == Section.SUMMARY else 8
            if item_size != expected_item or offset % 8 or offset < table_end:
                raise MalformedIndex(f"section {name} has item size {item_size} at offset {offset}")
            end = offset + count * item_size
            if end > len(view):
                raise MalformedIndex(f"section {name} runs past the end of the index")
            part = view[offset:end]
            self._views.append(part)
            if item_size == 8:
                part = part.cast("Q")
                self._views.append(part)
            arrays[kind] = part
        missing = [name for kind, name in SECTION_NAMES.items() if kind not in arrays]
        if missing:
            raise MalformedIndex(f"index lacks sections {', '.join(missing)}")
        for group in PARALLEL:
            counts = {len(arrays[k]) for k in group}
            if len(counts) != 1:
                raise MalformedIndex(f"parallel arrays {SECTION_NAMES[group[0]]}… differ in length")
        for kind in SORTED_SECTIONS:
            _spot_check_sorted(kind, arrays[kind])
        for kind in OFFSET_SECTIONS:
            _spot_check_bounded(kind, arrays[kind], sym_size)
        import json  # (imported on use: see `summary_json`)

        try:
            self.summary: dict[str, Any] = json.loads(bytes(arrays[Section.SUMMARY]).decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise MalformedIndex(f"index summary is not JSON: {exc}") from None
        if not isinstance(self.summary, dict):
            raise MalformedIndex("index summary is not an object")
        self._arrays = arrays

    def array(self, kind: int) -> memoryview:
        return self._arrays[kind]

    @property
    def shared(self) -> bool:
        """Kept for the whole process and used by several `SymbolFile`s (see `__init__`)."""
        return self._shared

    def release(self) -> None:
        """Drop every view (so that the underlying mmap can be closed) and close the owner."""
        if self._shared:
            return  # other files use it; the bytes go when the last of them does
        self._arrays = {}
        for view in reversed(self._views):
            try:
                view.release()
            except BufferError:  # a view still exported elsewhere
                pass
        self._views = []
        if self._owner is not None:
            try:
                self._owner.close()
            except (BufferError, ValueError):
                pass
            self._owner = None

    # ---- summary accessors -------------------------------------------------

    def damage(self) -> DamageReport:
        s = self.summary
        try:
            counts = {DamageKind[k]: int(v) for k, v in s.get("damage", {}).items()}
            examples = tuple(
                DamagedLine(int(line), DamageKind[kind], str(reason))
                for line, kind, reason in s.get("examples", [])
            )
            repairs = {str(k): int(v) for k, v in s.get("repairs", {}).items()}
        except (KeyError, TypeError, ValueError) as exc:
            raise MalformedIndex(f"index summary has a bad damage report: {exc}") from None
        return DamageReport(
            counts=counts,
            examples=examples,
            missing_final_newline=bool(s.get("missing_final_newline", False)),
            old_inline_syntax=bool(s.get("old_inline_syntax", False)),
            repairs=repairs,
        )

    def counts(self) -> RecordCounts:
        a = self._arrays
        return RecordCounts(
            functions=len(a[Section.FUNC_START]),
            publics=len(a[Section.PUBLIC_ADDRESS]),
            cfi_blocks=len(a[Section.CFI_START]),
            stack_win_frame_data=len(a[Section.WIN4_START]),
            stack_win_fpo=len(a[Section.WIN0_START]),
            files=len(a[Section.FILE_ID]),
            inline_origins=len(a[Section.ORIGIN_ID]),
            lines=int(self.summary.get("lines", 0)),
        )


_SPOT_CHECKS = 64


def _sample(n: int) -> range:
    step = max(1, n // _SPOT_CHECKS)
    return range(0, n, step)


def _spot_check_sorted(kind: int, arr: memoryview) -> None:
    """Sortedness is guaranteed by the writer and protected by the checksum; this is a cheap guard.

    A full O(n) scan in pure Python would cost tens of milliseconds on a large
    file, so only evenly spaced neighbours are compared here.
    """
    n = len(arr)
    for i in _sample(n - 1):
        if arr[i] > arr[i + 1]:
            raise MalformedIndex(f"section {SECTION_NAMES[kind]} is not sorted at {i}")
    if n > 1 and arr[0] > arr[n - 1]:
        raise MalformedIndex(f"section {SECTION_NAMES[kind]} is not sorted")


def _spot_check_bounded(kind: int, arr: memoryview, limit: int) -> None:
    n = len(arr)
    for i in (*_sample(n), n - 1) if n else ():
        if arr[i] > limit:
            raise MalformedIndex(f"section {SECTION_NAMES[kind]} points past the end of the .sym file")
