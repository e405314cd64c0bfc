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
from collections.abc import Iterator, Sequence

from inspector.core.minidump.errors import BadData, BadRva, StreamTruncated
from inspector.core.minidump.format import VS_FFI_SIGNATURE, VS_FFI_STRUCVERSION, CvSignature, Location
from inspector.core.minidump.reader import StreamContext, byte_order, read_ex_list_header, read_list_header
from inspector.core.record import field, record
from inspector.core.types import Os

MODULE_SIZE = 108
UNLOADED_MODULE_SIZE = 24
_MODULE_FORMAT = "QIIII" + "13I" + "II" + "II" + "QQ"


@record
class Guid:
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


@record
class DebugId:
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


@record
class CodeViewPdb70:
    cv_signature: int
    guid: Guid
    age: int
    pdb_file_name: bytes


@record
class CodeViewPdb20:
    cv_signature: int
    cv_offset: int
    signature: int
    age: int
    pdb_file_name: bytes


@record
class CodeViewElf:
    cv_signature: int
    build_id: bytes


@record
class CodeViewUnknown:
    data: bytes


CodeView = CodeViewPdb70 | CodeViewPdb20 | CodeViewElf | CodeViewUnknown


@record
class VersionInfo:
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
    cut = max(path.rfind("/"), path.rfind("\\"))
    return path[cut + 1 :] if cut >= 0 else path


def nul_terminated(raw: bytes) -> str:
    """The text before the first NUL, undecodable bytes replaced."""
    return raw.split(b"\0", 1)[0].decode("utf-8", errors="replace")


def debug_id_of(codeview: CodeView | None, endian: str) -> DebugId | None:
    """rust-minidump's debug id for a CodeView record (None when it has none)."""
    if isinstance(codeview, CodeViewPdb70):
        raw = codeview.guid.uuid_bytes
        return None if raw == bytes(16) else DebugId(raw, codeview.age)
    if isinstance(codeview, CodeViewPdb20):
        return DebugId(codeview.signature.to_bytes(4, "big") + bytes(12), codeview.age, pdb20=True)
    if isinstance(codeview, CodeViewElf):
        if not any(codeview.build_id):
            return None
        guid = Guid.from_bytes(codeview.build_id[:16].ljust(16, b"\0"), endian)
        return DebugId(guid.uuid_bytes, 0)
    return None


def code_id_of(codeview: CodeView | None, os: Os, time_date_stamp: int, size_of_image: int) -> str:
    """rust-minidump's code id ('' when it has none)."""
    windows_style = f"{time_date_stamp:08x}{size_of_image:x}"
    if isinstance(codeview, CodeViewPdb70) and os in (Os.MACOS, Os.IOS):
        return codeview.guid.upper_hex().lower()
    if isinstance(codeview, CodeViewPdb20 | CodeViewPdb70):
        return windows_style
    if isinstance(codeview, CodeViewElf):
        return codeview.build_id.hex() if any(codeview.build_id) else ""
    if codeview is None and os is Os.WINDOWS:
        return windows_style
    return ""


def debug_file_of(codeview: CodeView | None, code_file: str) -> str:
    if isinstance(codeview, CodeViewPdb70 | CodeViewPdb20):
        return nul_terminated(codeview.pdb_file_name)
    if isinstance(codeview, CodeViewElf):
        return code_file
    return ""


def version_of(info: VersionInfo, os: Os) -> str | None:
    """The file version string rust-minidump reports (None unless VS_FIXEDFILEINFO is filled in)."""
    if not info.is_set:
        return None
    if os in (Os.MACOS, Os.IOS, Os.WINDOWS):
        hi, lo = info.file_version_hi, info.file_version_lo
        return f"{hi >> 16}.{hi & 0xFFFF}.{lo >> 16}.{lo & 0xFFFF}"
    return (
        f"{info.file_version_hi}.{info.file_version_lo}.{info.product_version_hi}.{info.product_version_lo}"
    )


@record
class Module:
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
        object.__setattr__(self, "filename", basename(self.code_file))
        object.__setattr__(self, "debug_file_name", basename(self.debug_file))
        identifier = self.debug_identifier
        object.__setattr__(self, "debug_id", identifier.breakpad() if identifier else "")

    @property
    def end(self) -> int:
        """One past the last byte (`base + size`)."""
        return self.base + self.size

    def contains(self, address: int) -> bool:
        return self.base <= address < self.base + self.size


@record
class UnloadedModule:
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
    ranged = sorted(
        (
            (base, base + size - 1, i)
            for i, (base, size) in enumerate(spans)
            if size and base + size <= 1 << 64
        ),
    )
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


@record
class ModuleList:
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


@record
class UnloadedModuleList:
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


def _read_codeview(ctx: StreamContext, location: Location) -> CodeView | None:
    source = ctx.source
    raw = bytes(source.slice(location.rva, location.data_size, "CodeView record"))
    if len(raw) < 4:
        raise StreamTruncated(
            f"CodeView record at {location.rva:#x} is shorter than its signature", offset=location.rva
        )
    order = byte_order(source.endian)
    signature = int.from_bytes(raw[:4], order)
    if signature == CvSignature.PDB70:
        if len(raw) < 24:
            raise StreamTruncated(
                f"PDB 7.0 record at {location.rva:#x} has {len(raw)} bytes", offset=location.rva
            )
        return CodeViewPdb70(
            signature, Guid.from_bytes(raw[4:20], source.endian), int.from_bytes(raw[20:24], order), raw[24:]
        )
    if signature == CvSignature.PDB20:
        if len(raw) < 16:
            raise StreamTruncated(
                f"PDB 2.0 record at {location.rva:#x} has {len(raw)} bytes", offset=location.rva
            )
        cv_offset, sig, age = (int.from_bytes(raw[i : i + 4], order) for i in (4, 8, 12))
        return CodeViewPdb20(signature, cv_offset, sig, age, raw[16:])
    if signature == CvSignature.ELF:
        return CodeViewElf(signature, raw[4:])
    return CodeViewUnknown(raw)


def parse_module_list(ctx: StreamContext, os: Os) -> ModuleList:
    """Read the ModuleList; a module whose name or CodeView record is unreadable keeps the rest."""
    source = ctx.source
    first, count = read_list_header(ctx, MODULE_SIZE, "module list")
    record = source.struct(_MODULE_FORMAT)
    modules = []
    # records of one CodeView location are read once: a hostile list may point thousands of
    # modules at one big record (see ByteSource on shared strings)
    codeviews: dict[Location, CodeView | BadRva | StreamTruncated | None] = {}
    for i in range(count):
        offset = first + i * MODULE_SIZE
        f = record.unpack_from(source.data, offset)
        base, size, checksum, stamp, name_rva = f[0:5]
        version_info = VersionInfo(*f[5:18])
        cv = Location(f[18], f[19])
        misc = Location(f[20], f[21])
        if size == 0 or base + size > (1 << 64) - 1:
            ctx.note(f"module[{i}] has a bad image size {size:#x} at base {base:#x}; skipped", offset=offset)
            continue
        try:
            name = source.utf16_string(name_rva)
        except (BadRva, BadData) as exc:
            ctx.report(type(exc)(f"module[{i}] name: {exc.message}", offset=exc.offset))
            name = ""
        if misc.data_size and not source.has(misc.rva, misc.data_size):
            # the misc (IMAGE_DEBUG_MISC) record is not used, but a location outside the file is damage
            ctx.note(
                f"module[{i}] ({name}) misc record of {misc.data_size:#x} bytes at {misc.rva:#x} "
                "is outside the file",
                offset=offset,
                code=BadRva.code,
            )
        codeview: CodeView | None = None
        if cv.data_size:
            if cv not in codeviews:
                try:
                    codeviews[cv] = _read_codeview(ctx, cv)
                except (BadRva, StreamTruncated) as exc:
                    codeviews[cv] = exc
            read = codeviews[cv]
            if isinstance(read, BadRva | StreamTruncated):
                ctx.report(
                    type(read)(f"module[{i}] ({name}) CodeView record: {read.message}", offset=read.offset)
                )
            else:
                codeview = read
        modules.append(
            Module(
                base=base,
                size=size,
                checksum=checksum,
                time_date_stamp=stamp,
                module_name_rva=name_rva,
                version_info=version_info,
                cv_record=cv,
                misc_record=misc,
                code_file=name,
                codeview=codeview,
                debug_identifier=debug_id_of(codeview, source.endian),
                code_id=code_id_of(codeview, os, stamp, size),
                debug_file=debug_file_of(codeview, name),
                version=version_of(version_info, os),
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
