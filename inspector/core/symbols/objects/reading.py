"""Opening binaries and debug files with `symbolic`, and what we need to know about each.

Everything here imports `symbolic` (and, for ELF section headers, `pyelftools`) on first use
only: a walk with `.sym` files alone never loads them.

An *object* is one binary or debug file: an ELF executable, shared library or separate
`.debug` file, a Mach-O binary or the DWARF file inside a `.dSYM` bundle, a PE file, a PDB. A
file can hold several (a universal Mach-O binary); `read_objects` lists them all.
"""

from __future__ import annotations

import os
import stat
from typing import Any, BinaryIO

from inspector.core.record import Record, field, replace
from inspector.core.symbols.objects.errors import (
    MAX_OBJECT_SIZE,
    MIN_OBJECT_SIZE,
    ObjectSupportMissing,
    ObjectUnreadable,
)

#: the magic numbers of the formats symbolic reads (first bytes of the file)
_MAGICS: tuple[bytes, ...] = (
    b"\x7fELF",
    b"MZ",  # PE
    b"Microsoft C/C++ MSF 7.00\r\n\x1aDS",  # PDB
    b"\xfe\xed\xfa\xce",  # Mach-O 32 big-endian
    b"\xce\xfa\xed\xfe",  # Mach-O 32 little-endian
    b"\xfe\xed\xfa\xcf",
    b"\xcf\xfa\xed\xfe",  # Mach-O 64
    b"\xca\xfe\xba\xbe",  # universal (fat) Mach-O, also Java class files: symbolic decides
)


def looks_like_object(head: bytes) -> bool:
    """Whether the first bytes of a file are those of a format symbolic reads (cheap pre-check)."""
    return any(head.startswith(magic) for magic in _MAGICS)


def object_format_hint(head: bytes) -> str | None:
    if head.startswith(b"\x7fELF"):
        return "elf"
    if head.startswith(b"MZ"):
        return "pe"
    if head.startswith(b"Microsoft C/C++ MSF"):
        return "pdb"
    if looks_like_object(head):
        return "macho"
    return None


def breakpad_debug_id(debug_id: str) -> str:
    """symbolic's `c45ac8e9-…-363770e51db3[-1a]` → Breakpad's `C45AC8E9…363770E51DB31A` (age appended)."""
    parts = debug_id.split("-")
    uuid = "".join(parts[:5]).upper()
    age = parts[5] if len(parts) > 5 else "0"
    return f"{uuid}{age.upper().lstrip('0') or '0'}"


class ObjectInfo(Record):
    """One object in a file, as symbolic sees it."""

    path: str
    index: int  # which object of the file (universal binaries hold several)
    file_format: str  # "elf", "macho", "pe", "pdb", "breakpad", …
    kind: str  # "exe", "lib", "dbg", "rel", …
    arch: str
    debug_id: str  # Breakpad spelling
    code_id: str | None
    features: frozenset[str]  # "symtab", "debug", "unwind", "sources"
    size: int
    mtime_ns: int
    #: ELF: (name, address, size, executable) of each section; read for conversions only (`with_sections`)
    sections: tuple[tuple[str, int, int, bool], ...] = field(default=())

    @property
    def has_unwind(self) -> bool:
        return "unwind" in self.features

    def section(self, name: str) -> tuple[str, int, int, bool] | None:
        return next((s for s in self.sections if s[0] == name), None)


def symbolic_module() -> Any:
    """The `symbolic.debuginfo` module, or `ObjectSupportMissing` with what to install."""
    try:
        import symbolic.debuginfo
    except ImportError as exc:
        raise ObjectSupportMissing(
            "(objects)",
            f"reading binaries and debug files needs the 'symbolic' package ({exc}); "
            "it has wheels for Linux (x86_64, aarch64) and macOS",
        ) from None
    return symbolic.debuginfo


def check_regular_file(path: str | os.PathLike[str]) -> os.stat_result:
    try:
        st = os.stat(path)
    except OSError as exc:
        raise ObjectUnreadable(str(path), exc.strerror or str(exc)) from None
    if not stat.S_ISREG(st.st_mode):
        raise ObjectUnreadable(str(path), "not a regular file")
    if st.st_size < MIN_OBJECT_SIZE:
        raise ObjectUnreadable(str(path), f"only {st.st_size} bytes: not a binary or debug file")
    if st.st_size > MAX_OBJECT_SIZE:
        raise ObjectUnreadable(
            str(path),
            f"{st.st_size / (1 << 30):.1f} GiB: larger than the {MAX_OBJECT_SIZE >> 30} GiB a binary or "
            "debug file is read up to (a sparse or damaged file?)",
        )
    return st


def read_objects(path: str | os.PathLike[str]) -> list[tuple[ObjectInfo, Any]]:
    """Every object in the file with its symbolic `Object`; `ObjectUnreadable` when there is none.

    The symbolic objects keep the file mapped; drop them when done.
    """
    st = check_regular_file(path)
    try:
        with open(path, "rb") as f:
            head = f.read(64)
    except OSError as exc:
        raise ObjectUnreadable(str(path), exc.strerror or str(exc)) from None
    hint = object_format_hint(head)
    if hint is None:
        raise ObjectUnreadable(str(path), "not a binary or debug file (ELF, Mach-O, PE or PDB)")
    debuginfo = symbolic_module()
    try:
        archive = debuginfo.Archive.open(str(path))
        found: list[tuple[ObjectInfo, Any]] = []
        for index, obj in enumerate(archive.iter_objects()):
            file_format = str(obj.file_format)
            info = ObjectInfo(
                str(path),
                index,
                file_format,
                str(obj.kind),
                str(obj.arch),
                breakpad_debug_id(str(obj.debug_id)),
                obj.code_id,
                frozenset(obj.features),
                st.st_size,
                st.st_mtime_ns,
            )
            found.append((info, obj))
    except ObjectUnreadable:
        raise
    except Exception as exc:  # symbolic turns every parse failure (and Rust panics) into exceptions
        raise ObjectUnreadable(str(path), _describe(exc, hint)) from None
    if not found:
        raise ObjectUnreadable(str(path), f"{hint.upper()} file with no object symbolic can read")
    return found


def with_sections(info: ObjectInfo) -> ObjectInfo:
    """The object with its ELF section headers read (only a conversion needs them, not a scan)."""
    if info.file_format != "elf" or info.sections:
        return info
    return replace(info, sections=_elf_sections(info.path))


def _describe(exc: Exception, hint: str) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    names = {"elf": "ELF", "pe": "PE", "pdb": "PDB", "macho": "Mach-O"}
    return f"damaged or unsupported {names.get(hint, hint)} file: {text[:200]}"


def _elf_sections(path: str) -> tuple[tuple[str, int, int, bool], ...]:
    """(name, address, size, executable) of every section, from the section headers (pyelftools).

    dump_syms names the start of each executable section without a symbol
    (`<.plt ELF section in libfoo.so>`); the unwind sections tell where CFI comes from.
    A damaged section table gives no sections (symbolic has read the object already).
    """
    try:
        from elftools.elf.constants import SH_FLAGS
        from elftools.elf.elffile import ELFFile
    except ImportError:
        return ()
    try:
        with open(path, "rb") as f:
            elf = ELFFile(f)
            if elf.num_sections() > 65536:
                return ()
            out = []
            for section in elf.iter_sections():
                header = section.header
                executable = bool(header["sh_flags"] & SH_FLAGS.SHF_EXECINSTR)
                nobits = header["sh_type"] == "SHT_NOBITS"
                out.append(
                    (
                        section.name,
                        int(header["sh_addr"]),
                        0 if nobits else int(header["sh_size"]),
                        executable,
                    )
                )
            return tuple(out)
    except Exception:  # pyelftools raises many kinds on damaged tables; the sections are optional
        return ()


#: headers larger than this are not believed (a hostile or damaged file)
MAX_HEADER_BYTES = 1 << 20


def read_header_bytes(fh: BinaryIO, offset: int, size: int) -> bytes:
    """`size` bytes of a file's headers at `offset`; ValueError when out of range or cut short."""
    if size > MAX_HEADER_BYTES or offset < 0:
        raise ValueError("header out of range")
    fh.seek(offset)
    data = fh.read(size)
    if len(data) != size:
        raise ValueError("file ends inside a header")
    return data


class PeHeaders(Record):
    """What the PE headers say: identity, section table and debug directory."""

    timestamp: int
    size_of_image: int
    size_of_headers: int
    #: (virtual size, virtual address, raw size, raw offset) of each section
    sections: tuple[tuple[int, int, int, int], ...]
    debug_directory: tuple[int, int]  # (RVA, size); (0, 0) without one

    @property
    def code_id(self) -> str:
        """TimeDateStamp (8 hex digits) + SizeOfImage (hex), upper-case."""
        return f"{self.timestamp:08X}{self.size_of_image:X}"

    def file_offset(self, rva: int) -> int | None:
        for vsize, vaddr, raw_size, raw_offset in self.sections:
            if vaddr <= rva < vaddr + max(vsize, raw_size):
                return raw_offset + rva - vaddr
        return None


def read_pe_headers(fh: BinaryIO) -> PeHeaders | None:
    """The PE headers of an open file (None when it is no PE); ValueError / struct.error when damaged."""
    import struct

    head = read_header_bytes(fh, 0, 64)
    if head[:2] != b"MZ":
        return None
    pe_offset = struct.unpack_from("<I", head, 0x3C)[0]
    coff = read_header_bytes(fh, pe_offset, 24)
    if coff[:4] != b"PE\0\0":
        return None
    count, timestamp = struct.unpack_from("<HI", coff, 6)
    optional_size = struct.unpack_from("<H", coff, 20)[0]
    optional = read_header_bytes(fh, pe_offset + 24, optional_size)
    size_of_image, size_of_headers = struct.unpack_from("<II", optional, 56)
    directories = {0x10B: 96, 0x20B: 112}.get(struct.unpack_from("<H", optional, 0)[0])  # PE32, PE32+
    debug = (0, 0)
    if directories is not None and len(optional) >= directories + 7 * 8:
        debug = struct.unpack_from("<II", optional, directories + 6 * 8)
    table = read_header_bytes(fh, pe_offset + 24 + optional_size, 40 * count)
    sections = tuple(struct.unpack_from("<IIII", table, 40 * i + 8) for i in range(count))
    return PeHeaders(timestamp, size_of_image, size_of_headers, sections, debug)


class PeCodeView(Record):
    """What a PE file's CodeView debug record names: its PDB (file name, debug id) and its own code id."""

    pdb_name: str
    debug_id: str  # Breakpad spelling: GUID upper-case hex + age in hex
    code_id: str  # TimeDateStamp (8 hex digits) + SizeOfImage (hex), upper-case


def pe_codeview(path: str) -> PeCodeView | None:
    """The PE's `RSDS` CodeView record (None for anything else, or a damaged header).

    symbolic reads the PE's debug id but not the PDB name the record gives, and the name is
    what a Microsoft symbol server is asked for (`<name>.pdb/<GUID><age>/<name>.pdb`). The
    record is found through the debug data directory (`IMAGE_DEBUG_DIRECTORY` entries of
    type 2); only the headers and the record are read.
    """
    import struct
    import uuid

    try:
        with open(path, "rb") as fh:
            headers = read_pe_headers(fh)
            if headers is None:
                return None
            debug_rva, debug_size = headers.debug_directory
            at = headers.file_offset(debug_rva)
            if at is None or not debug_size:
                return None
            entries = read_header_bytes(fh, at, min(debug_size, 28 * 64))
            for i in range(len(entries) // 28):
                kind, size, _rva, raw = struct.unpack_from("<IIII", entries, 28 * i + 12)
                if kind != 2 or size < 25:  # IMAGE_DEBUG_TYPE_CODEVIEW; RSDS + GUID + age + name
                    continue
                cv = read_header_bytes(fh, raw, min(size, 24 + 1024))
                if cv[:4] != b"RSDS":
                    continue
                guid = uuid.UUID(bytes_le=cv[4:20])
                age = struct.unpack_from("<I", cv, 20)[0]
                name = cv[24:].split(b"\0", 1)[0].decode("utf-8", "replace")
                return PeCodeView(
                    name.replace("\\", "/").rsplit("/", 1)[-1], f"{guid.hex.upper()}{age:X}", headers.code_id
                )
    except (OSError, ValueError, struct.error):
        return None
    return None
