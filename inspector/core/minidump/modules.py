"""ModuleList and UnloadedModuleList: loaded images, their CodeView records and Breakpad identifiers.

The identifiers follow rust-minidump exactly:

* `debug_id` (Breakpad form, e.g. `5A9832E5287241C1838ED98914E9B7FF1`): GUID
  upper-case + age in lower-case hex for PDB 7.0; `TIMESTAMP` + age for PDB 2.0;
  for ELF build ids the first 16 bytes read as a GUID in the dump's byte order,
  age 0 (shorter build ids are padded with zeros; an all-zero build id has none).
* `code_id`: lower-case hex of the whole ELF build id; `timestamp(8 hex) + size(hex)`
  for PDB records and for Windows modules without CodeView; the PDB 7.0 GUID for
  macOS / iOS; '' otherwise.
"""

from __future__ import annotations

from bisect import bisect_right
from struct import Struct

from inspector.core.minidump.errors import BadData, BadRva, StreamTruncated
from inspector.core.minidump.format import VS_FFI_SIGNATURE, VS_FFI_STRUCVERSION, CvSignature, Location
from inspector.core.minidump.reader import (
    ByteSource,
    StreamContext,
    byte_order,
    read_ex_list_header,
    read_list_header,
)
from inspector.core.record import Record, field
from inspector.core.types import Os

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (inspector.core.lazy)
if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

MODULE_SIZE = 108
UNLOADED_MODULE_SIZE = 24
_MODULE_FORMAT = "QIIII" + "13I" + "II" + "II" + "QQ"


class Guid(Record):
    """A GUID as its four fields (read in the dump's byte order)."""

    data1: int
    data2: int
    data3: int
    data4: bytes

    @classmethod
    def from_bytes(cls, raw: bytes, endian: str) -> Guid:
        order = byte_order(endian)
        return cls(
            int.from_bytes(raw[0:4], order),
            int.from_bytes(raw[4:6], order),
            int.from_bytes(raw[6:8], order),
            bytes(raw[8:16]),
        )

    @property
    def uuid_bytes(self) -> bytes:
        """The 16 bytes of the UUID built from the fields (fields big-endian, as uuid::from_fields)."""
        return (
            self.data1.to_bytes(4, "big")
            + self.data2.to_bytes(2, "big")
            + self.data3.to_bytes(2, "big")
            + self.data4
        )

    def __str__(self) -> str:
        d4 = self.data4.hex()
        return f"{self.data1:08x}-{self.data2:04x}-{self.data3:04x}-{d4[:4]}-{d4[4:]}"

    def upper_hex(self) -> str:
        """The fields as 32 upper-case hex digits (rust-minidump's alternate GUID format)."""
        return f"{self.data1:08X}{self.data2:04X}{self.data3:04X}{self.data4.hex().upper()}"


class DebugId(Record):
    """A debug identifier: a UUID (or PDB 2.0 timestamp) plus an age / appendix."""

    uuid: bytes
    appendix: int = 0
    pdb20: bool = False

    @classmethod
    def nil(cls) -> DebugId:
        """The all-zero id rust-minidump prints when a module has none."""
        return cls(bytes(16))

    @property
    def timestamp(self) -> int:
        return int.from_bytes(self.uuid[:4], "big")

    def breakpad(self) -> str:
        """Breakpad's form: 32 upper-case hex digits (8 for PDB 2.0) + the age in lower-case hex."""
        if self.pdb20:
            return f"{self.timestamp:08X}{self.appendix:x}"
        return f"{self.uuid.hex().upper()}{self.appendix:x}"

    def __str__(self) -> str:
        """Hyphenated form (`b7c04f7b-5c2a-80af-870a-1c234668a0de-1`), as the dump report prints it."""
        if self.pdb20:
            text = f"{self.timestamp:08X}"
        else:
            raw = self.uuid.hex()
            text = f"{raw[:8]}-{raw[8:12]}-{raw[12:16]}-{raw[16:20]}-{raw[20:]}"
        return f"{text}-{self.appendix:x}" if self.appendix else text


class CodeViewPdb70(Record):
    cv_signature: int
    guid: Guid
    age: int
    pdb_file_name: bytes


class CodeViewPdb20(Record):
    cv_signature: int
    cv_offset: int
    signature: int
    age: int
    pdb_file_name: bytes


class CodeViewElf(Record):
    cv_signature: int
    build_id: bytes


class CodeViewUnknown(Record):
    data: bytes


CodeView = CodeViewPdb70 | CodeViewPdb20 | CodeViewElf | CodeViewUnknown


class VersionInfo(Record):
    """VS_FIXEDFILEINFO as stored in the module record."""

    signature: int = 0
    struct_version: int = 0
    file_version_hi: int = 0
    file_version_lo: int = 0
    product_version_hi: int = 0
    product_version_lo: int = 0
    file_flags_mask: int = 0
    file_flags: int = 0
    file_os: int = 0
    file_type: int = 0
    file_subtype: int = 0
    file_date_hi: int = 0
    file_date_lo: int = 0

    @property
    def is_set(self) -> bool:
        return self.signature == VS_FFI_SIGNATURE and self.struct_version == VS_FFI_STRUCVERSION


def basename(path: str) -> str:
    """The part after the last `/` or `\\` (rust-minidump's basename)."""
    return path.rpartition("/")[2].rpartition("\\")[2]


def nul_terminated(raw: bytes) -> str:
    """The text before the first NUL, undecodable bytes replaced."""
    return raw.partition(b"\0")[0].decode("utf-8", "replace")


class Module(Record):
    """A loaded image. Satisfies `inspector.core.module_identity.ModuleIdentity`.

    `debug_file` is the raw value rust-minidump uses (for ELF the full code
    file path, for PDBs the name written in the record, possibly a Windows
    path); reports print `basename(debug_file)`. `debug_id` / `code_id` are ''
    when the module has none; `debug_identifier` is the structured id.
    """

    base: int
    size: int
    checksum: int
    time_date_stamp: int
    module_name_rva: int
    version_info: VersionInfo
    cv_record: Location
    misc_record: Location
    code_file: str
    codeview: CodeView | None
    debug_identifier: DebugId | None
    code_id: str
    debug_file: str
    version: str | None
    # Derived once here: the walker and the reports ask for them for every frame.
    #: Basename of `code_file`, splitting on both `/` and `\\`.
    filename: str = field(init=False, repr=False, compare=False)
    debug_file_name: str = field(init=False, repr=False, compare=False)
    #: Breakpad debug id ('' when unknown).
    debug_id: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        code_file, debug_file = self.code_file, self.debug_file
        filename = basename(code_file)
        _set_filename(self, filename)
        _set_debug_file_name(self, filename if debug_file == code_file else basename(debug_file))
        identifier = self.debug_identifier
        _set_debug_id(self, identifier.breakpad() if identifier else "")

    @property
    def end(self) -> int:
        """One past the last byte (`base + size`)."""
        return self.base + self.size

    def contains(self, address: int) -> bool:
        return self.base <= address < self.base + self.size


# `Module`'s derived fields are written through their slots, past the `__setattr__` that refuses
# in strict mode: cheaper than `object.__setattr__`, and a dump's module list is read every time.
_set_filename = Module.filename.__set__  # type: ignore[attr-defined]
_set_debug_file_name = Module.debug_file_name.__set__  # type: ignore[attr-defined]
_set_debug_id = Module.debug_id.__set__  # type: ignore[attr-defined]


class UnloadedModule(Record):
    base: int
    size: int
    checksum: int
    time_date_stamp: int
    module_name_rva: int
    code_file: str

    @property
    def end(self) -> int:
        return self.base + self.size

    @property
    def filename(self) -> str:
        return basename(self.code_file)

    @property
    def code_id(self) -> str:
        """rust-minidump gives unloaded modules the Windows-style id whatever the OS."""
        return f"{self.time_date_stamp:08x}{self.size:x}"

    def contains(self, address: int) -> bool:
        return self.base <= address < self.base + self.size


def _address_index(spans: Sequence[tuple[int, int]]) -> tuple[list[int], list[int], list[int]]:
    """rust-minidump's range map: sort by (start, end), drop a range overlapping the last kept one.

    Returns (starts, inclusive ends, indexes into the original sequence).
    """
    ranged = [
        (base, base + size - 1, i) for i, (base, size) in enumerate(spans) if size and base + size <= 1 << 64
    ]
    ranged.sort()
    starts: list[int] = []
    ends: list[int] = []
    indexes: list[int] = []
    for start, end, i in ranged:
        if ends and start <= ends[-1]:
            continue
        starts.append(start)
        ends.append(end)
        indexes.append(i)
    return starts, ends, indexes


class ModuleList(Record):
    """Loaded modules in dump order, with address lookup as rust-minidump does it."""

    modules: tuple[Module, ...]
    _starts: list[int] = field(init=False, repr=False, compare=False)
    _ends: list[int] = field(init=False, repr=False, compare=False)
    _order: list[int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        starts, ends, order = _address_index([(m.base, m.size) for m in self.modules])
        object.__setattr__(self, "_starts", starts)
        object.__setattr__(self, "_ends", ends)
        object.__setattr__(self, "_order", order)

    def __len__(self) -> int:
        return len(self.modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self.modules)

    def __getitem__(self, index: int) -> Module:
        return self.modules[index]

    @property
    def main_module_index(self) -> int | None:
        """rust-minidump's main module: the first module of the list."""
        return 0 if self.modules else None

    @property
    def main_module(self) -> Module | None:
        return self.modules[0] if self.modules else None

    def index_at(self, address: int) -> int | None:
        """Index of the module covering `address` (overlapping modules: the lower one wins)."""
        i = bisect_right(self._starts, address) - 1
        if i < 0 or address > self._ends[i]:
            return None
        return self._order[i]

    def module_at(self, address: int) -> Module | None:
        i = self.index_at(address)
        return None if i is None else self.modules[i]

    def by_address(self) -> list[Module]:
        """Modules sorted by base address (overlapping ones left out, as in lookups)."""
        return [self.modules[i] for i in self._order]


class UnloadedModuleList(Record):
    """Unloaded modules in dump order; `modules_at` finds those covering an address.

    Unloaded ranges may overlap, so the lookup is a stabbing query: the modules sorted by
    (base, end) with a max-end tree over them, visited only where an end can reach the
    address. A frame costs O((hits + 1) log n), not a pass over the list: a hostile dump can
    hold a million unloaded modules and a walk a hundred thousand frames outside any module.
    """

    modules: tuple[UnloadedModule, ...]
    _sorted: list[UnloadedModule] = field(init=False, repr=False, compare=False)
    _starts: list[int] = field(init=False, repr=False, compare=False)
    _reach: list[int] = field(init=False, repr=False, compare=False)  # max-end tree, leaves at len(_sorted)

    def __post_init__(self) -> None:
        ranged = sorted((m for m in self.modules if m.size), key=lambda m: (m.base, m.base + m.size))
        n = len(ranged)
        reach = [-1] * (2 * n)
        for i, m in enumerate(ranged):
            reach[n + i] = m.base + m.size - 1
        for node in range(n - 1, 0, -1):
            reach[node] = max(reach[2 * node], reach[2 * node + 1])
        object.__setattr__(self, "_sorted", ranged)
        object.__setattr__(self, "_starts", [m.base for m in ranged])
        object.__setattr__(self, "_reach", reach)

    def __len__(self) -> int:
        return len(self.modules)

    def __iter__(self) -> Iterator[UnloadedModule]:
        return iter(self.modules)

    def modules_at(self, address: int) -> list[UnloadedModule]:
        """Every unloaded module whose range covers `address`, ordered by (base, end)."""
        n = len(self._sorted)
        below = bisect_right(self._starts, address)  # the modules starting at or before it
        if not below:
            return []
        reach = self._reach
        hits: list[int] = []
        # leaves [n, n + below) of the tree, visited from its roots covering that span
        lo, hi = n, n + below
        roots: list[int] = []
        while lo < hi:
            if lo & 1:
                roots.append(lo)
                lo += 1
            if hi & 1:
                hi -= 1
                roots.append(hi)
            lo //= 2
            hi //= 2
        stack = [r for r in roots if reach[r] >= address]
        while stack:
            node = stack.pop()
            if node >= n:
                hits.append(node - n)
                continue
            for child in (2 * node, 2 * node + 1):
                if reach[child] >= address:
                    stack.append(child)
        return [self._sorted[i] for i in sorted(hits)]


#: A GUID's three integer fields, big-endian: the UUID rust-minidump builds from them (`uuid_bytes`).
_UUID_FIELDS = Struct(">IHH")
#: By byte order: a CodeView record's signature; PDB 7.0's GUID fields and age; PDB 2.0's offset,
#: signature and age; the GUID fields at the start of an ELF build id.
_CV_STRUCTS = {
    endian: tuple(Struct(endian + fmt) for fmt in ("I", "IHH8xI", "III", "IHH")) for endian in "<>"
}


#: What a module takes from a CodeView record (a tuple: one is read for every module): the record,
#: its debug id, the code id it gives (None: the Windows style), the code id on macOS / iOS, and
#: the debug file (None: the module's own file).
_CodeViewFacts = tuple[CodeView, "DebugId | None", "str | None", "str | None", "str | None"]


def _codeview_facts(source: ByteSource, rva: int, size: int) -> _CodeViewFacts:
    """The CodeView record at `rva` and the identifiers rust-minidump derives from it (see the
    module's docstring): the debug id (none for an all-zero PDB 7.0 GUID or ELF build id), the
    code id, the debug file (the PDB name; for ELF the module's own file)."""
    raw = source.copy(rva, size, "CodeView record")
    if len(raw) < 4:
        raise StreamTruncated(f"CodeView record at {rva:#x} is shorter than its signature", offset=rva)
    signature_struct, pdb70_struct, pdb20_struct, guid_struct = _CV_STRUCTS[source.endian]
    signature = signature_struct.unpack_from(raw)[0]
    if signature == _PDB70:
        if len(raw) < 24:
            raise StreamTruncated(f"PDB 7.0 record at {rva:#x} has {len(raw)} bytes", offset=rva)
        data1, data2, data3, age = pdb70_struct.unpack_from(raw, 4)
        data4 = raw[12:20]
        pdb70 = CodeViewPdb70(signature, Guid(data1, data2, data3, data4), age, raw[24:])
        uuid = _UUID_FIELDS.pack(data1, data2, data3) + data4
        identifier = None if uuid == _NO_UUID else DebugId(uuid, age)
        return pdb70, identifier, None, uuid.hex(), nul_terminated(raw[24:])
    if signature == _PDB20:
        if len(raw) < 16:
            raise StreamTruncated(f"PDB 2.0 record at {rva:#x} has {len(raw)} bytes", offset=rva)
        cv_offset, sig, age = pdb20_struct.unpack_from(raw, 4)
        pdb20 = CodeViewPdb20(signature, cv_offset, sig, age, raw[16:])
        identifier = DebugId(sig.to_bytes(4, "big") + bytes(12), age, pdb20=True)
        return pdb20, identifier, None, None, nul_terminated(raw[16:])
    if signature == _ELF:
        build_id = raw[4:]
        elf = CodeViewElf(signature, build_id)
        if not any(build_id):
            return elf, None, "", "", None
        # the first 16 bytes (zero-padded) read as a GUID in the dump's byte order, age 0
        padded = build_id[:16].ljust(16, b"\0")
        uuid = _UUID_FIELDS.pack(*guid_struct.unpack_from(padded)) + padded[8:]
        code_id = build_id.hex()
        return elf, DebugId(uuid, 0), code_id, code_id, None
    return CodeViewUnknown(raw), None, "", "", ""


_PDB70, _PDB20, _ELF = int(CvSignature.PDB70), int(CvSignature.PDB20), int(CvSignature.ELF)
_NO_UUID = bytes(16)
#: The version fields of a module without VS_FIXEDFILEINFO (ELF and most Mach-O modules): one record.
_NO_VERSION_FIELDS = (0,) * 13
_NO_VERSION = VersionInfo()
_NO_LOCATION = Location(0, 0)


def parse_module_list(ctx: StreamContext, os: Os) -> ModuleList:
    """Read the ModuleList; a module whose name or CodeView record is unreadable keeps the rest.

    A module without a readable CodeView record has no debug id or file, and the Windows-style
    code id (timestamp and size) on Windows only. The version is the VS_FIXEDFILEINFO's file
    version on macOS / iOS / Windows, its file and product version numbers elsewhere, None when
    the structure is not filled in. Every dump processed reads its module list (thousands of
    modules for a corpus): the records are unpacked in one pass, a CodeView record's identifiers
    worked out once, and the empty version and misc records shared.
    """
    source = ctx.source
    first, count = read_list_header(ctx, MODULE_SIZE, "module list")
    records = source.struct(_MODULE_FORMAT).iter_unpack(source.data[first : first + count * MODULE_SIZE])
    apple = os in (Os.MACOS, Os.IOS)
    # the version rust-minidump prints: "hi>>16.hi&0xffff.lo>>16.lo&0xffff" of the file version on
    # macOS / iOS / Windows, else the four 32-bit file and product version numbers
    windows_style_version = apple or os is Os.WINDOWS
    no_codeview_code_id = os is Os.WINDOWS  # a Windows module without CodeView: the Windows style
    modules = []
    # records of one CodeView location are read once: a hostile list may point thousands of
    # modules at one big record (see ByteSource on shared strings)
    codeviews: dict[tuple[int, int], _CodeViewFacts | BadRva | StreamTruncated] = {}
    for i, f in enumerate(records):
        base, size, checksum, stamp, name_rva = f[0:5]
        cv_size, cv_rva, misc_size, misc_rva = f[18:22]
        if size == 0 or base + size > (1 << 64) - 1:
            offset = first + i * MODULE_SIZE
            ctx.note(f"module[{i}] has a bad image size {size:#x} at base {base:#x}; skipped", offset=offset)
            continue
        try:
            name = source.utf16_string(name_rva)
        except (BadRva, BadData) as exc:
            ctx.report(type(exc)(f"module[{i}] name: {exc.message}", offset=exc.offset))
            name = ""
        if misc_size and not source.has(misc_rva, misc_size):
            # the misc (IMAGE_DEBUG_MISC) record is not used, but a location outside the file is damage
            ctx.note(
                f"module[{i}] ({name}) misc record of {misc_size:#x} bytes at {misc_rva:#x} "
                "is outside the file",
                offset=first + i * MODULE_SIZE,
                code=BadRva.code,
            )
        facts = None
        if cv_size:
            read = codeviews.get((cv_size, cv_rva))
            if read is None:
                try:
                    read = _codeview_facts(source, cv_rva, cv_size)
                except (BadRva, StreamTruncated) as exc:
                    read = exc
                codeviews[cv_size, cv_rva] = read
            if isinstance(read, tuple):
                facts = read
            else:
                ctx.report(
                    type(read)(f"module[{i}] ({name}) CodeView record: {read.message}", offset=read.offset)
                )
        codeview: CodeView | None = None
        identifier: DebugId | None = None
        debug_file = ""
        own_code_id: str | None = None if no_codeview_code_id else ""
        if facts is not None:
            codeview, identifier, code_id_elsewhere, apple_code_id, facts_debug_file = facts
            debug_file = name if facts_debug_file is None else facts_debug_file
            own_code_id = apple_code_id if apple else code_id_elsewhere
        code_id = f"{stamp:08x}{size:x}" if own_code_id is None else own_code_id
        version_fields = f[5:18]
        version_info = _NO_VERSION if version_fields == _NO_VERSION_FIELDS else VersionInfo(*version_fields)
        version = None
        if f[5] == VS_FFI_SIGNATURE and f[6] == VS_FFI_STRUCVERSION:
            hi, lo = f[7], f[8]
            if windows_style_version:
                version = f"{hi >> 16}.{hi & 0xFFFF}.{lo >> 16}.{lo & 0xFFFF}"
            else:
                version = f"{hi}.{lo}.{f[9]}.{f[10]}"
        modules.append(
            Module(
                base,
                size,
                checksum,
                stamp,
                name_rva,
                version_info,
                Location(cv_size, cv_rva),
                Location(misc_size, misc_rva) if misc_size or misc_rva else _NO_LOCATION,
                name,
                codeview,
                identifier,
                code_id,
                debug_file,
                version,
            )
        )
    return ModuleList(tuple(modules))


def parse_unloaded_module_list(ctx: StreamContext) -> UnloadedModuleList:
    source = ctx.source
    first, stride, count = read_ex_list_header(ctx, UNLOADED_MODULE_SIZE, "unloaded module list")
    record = source.struct("QIIII")
    modules = []
    for i in range(count):
        offset = first + i * stride
        base, size, checksum, stamp, name_rva = record.unpack_from(source.data, offset)
        if size == 0 or base + size > (1 << 64) - 1:
            ctx.note(
                f"unloaded module[{i}] has a bad image size {size:#x}; skipped", offset=offset, rejects=True
            )
            continue
        try:
            name = source.utf16_string(name_rva)
        except (BadRva, BadData) as exc:
            ctx.report(type(exc)(f"unloaded module[{i}] name: {exc.message}", offset=exc.offset))
            continue
        modules.append(UnloadedModule(base, size, checksum, stamp, name_rva, name))
    return UnloadedModuleList(tuple(modules))
