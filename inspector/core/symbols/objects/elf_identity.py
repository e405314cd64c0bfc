"""An ELF file's identity from its GNU build-id note, read with `struct` instead of `symbolic`.

Every dump of a batch asks whether this machine's copy of a module (`/lib/x86_64-linux-gnu/libc.so.6`)
is the dump's, which needs that file's debug id and code id. `symbolic` gives them, but importing
it cost a warm one-process corpus pass 32 ms of its 280; for an ELF file with a build id, both
ids come from a few hundred bytes of headers and one note.

`elf_identity` gives exactly what `reading.read_objects` (symbolic) gives for such a file, and
None for anything else: no build id (symbolic then hashes `.text`), another format, or anything
unusual or damaged (a header, table, section or note running past the end of the file, counts
out of range, extended numbering, an empty build id, a note or name symbolic would read
differently). The caller then asks symbolic, so those files keep symbolic's answer and its
problem messages.

What symbolic does, and so this module (symbolic-debuginfo's `ElfObject::find_build_id` and
`compute_debug_id`, goblin's note iterator; checked on real files by tests/symbols/test_elf_identity.py):

* the PT_NOTE segments are read in program header order, each note as three 4-byte words
  (name size, descriptor size, type) in the file's byte order, then the name and the descriptor,
  each padded to the segment's alignment (4, or 8 for `.note.gnu.property`) counted from the
  note's start; the first note of type NT_GNU_BUILD_ID (3) is the build id;
* without one there, the same in the SHT_NOTE sections named `.note.gnu.build-id` (Go's linker
  puts the note in no segment); symbolic finds no section by name when any section name is not
  UTF-8;
* code id: the build id in lower-case hex;
* debug id: the build id's first 16 bytes (zero-padded) as a GUID, whose first three fields
  are byte-swapped when the file is little-endian (so that it reads as Breakpad's GUID of the
  same bytes) and taken as they are when it is big-endian; age 0.

Only the headers, the section header table (to tell a truncated file, which symbolic refuses:
a truncated copy usually keeps its notes but loses that table, at the very end), the notes and,
when needed, the section names are read, never the rest of the file.
"""

from __future__ import annotations

import stat
import struct

from inspector.core.symbols.objects.errors import MAX_OBJECT_SIZE, MIN_OBJECT_SIZE

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (inspector.core.lazy)
if TYPE_CHECKING:
    import os
    from typing import BinaryIO

_ELF_MAGIC = b"\x7fELF"
_PT_NOTE = 4
_SHT_NOTE = 7
_SHT_NOBITS = 8
_BUILD_ID_SECTION = b".note.gnu.build-id\0"
_NT_GNU_BUILD_ID = 3
#: e_phnum meaning "the count is in section 0" (extended numbering): left to symbolic
_PN_XNUM = 0xFFFF
#: e_shstrndx meaning "the index is in section 0": left to symbolic
_SHN_XINDEX = 0xFFFF
#: header tables larger than this are not believed (real ones are a few KiB)
MAX_TABLE_BYTES = 1 << 20
#: note segments and sections larger than this are left to symbolic (real ones hold a few
#: hundred bytes)
MAX_NOTES_BYTES = 1 << 16
#: note alignments symbolic reads (p_align 0, 1 and 2 are read as 4); anything else it refuses
_NOTE_ALIGNMENTS = {0: 4, 1: 4, 2: 4, 4: 4, 8: 8}


class _Unusual(Exception):
    """The file is not a plain ELF file with a build-id note: symbolic is asked instead."""


class _Layout:
    """The header structs of one ELF class and byte order, and where their fields are."""

    __slots__ = ("byte_order", "header", "program_fields", "program_header", "section_header")

    def __init__(self, byte_order: str, *, wide: bool) -> None:
        self.byte_order = byte_order
        # the ELF header after e_ident: e_type … e_shstrndx
        self.header = struct.Struct(byte_order + ("HHIQQQIHHHHHH" if wide else "HHIIIIIHHHHHH"))
        self.program_header = struct.Struct(byte_order + ("IIQQQQQQ" if wide else "IIIIIIII"))
        # (p_type, p_offset, p_filesz, p_align): p_flags moved to second place in ELF64
        self.program_fields = (0, 2, 5, 7) if wide else (0, 1, 4, 7)
        # sh_type is field 1, sh_offset 4 and sh_size 5 in both classes
        self.section_header = struct.Struct(byte_order + ("IIQQQQIIQQ" if wide else "IIIIIIIIII"))


#: (EI_CLASS, EI_DATA) -> layout: ELFCLASS32 / ELFCLASS64, ELFDATA2LSB / ELFDATA2MSB
_LAYOUTS = {
    (1, 1): _Layout("<", wide=False),
    (1, 2): _Layout(">", wide=False),
    (2, 1): _Layout("<", wide=True),
    (2, 2): _Layout(">", wide=True),
}


def elf_identity(path: str, st: os.stat_result) -> tuple[str, str] | None:
    """(debug id in Breakpad's spelling, code id) of the ELF file at `path` from its build-id note,
    as `reading.read_objects` would give them; None when symbolic must be asked (see above).

    `st` is the file's `os.stat`: only a regular file within the sizes `read_objects` reads is
    opened (so a FIFO never blocks and a huge file keeps symbolic's refusal).
    """
    if not stat.S_ISREG(st.st_mode) or not MIN_OBJECT_SIZE <= st.st_size <= MAX_OBJECT_SIZE:
        return None
    try:
        with open(path, "rb") as f:
            build_id, little_endian = _ElfFile(f, st.st_size).build_id()
    except (OSError, ValueError, struct.error, _Unusual):
        return None
    return breakpad_debug_id_of_build_id(build_id, little_endian=little_endian), build_id.hex()


def breakpad_debug_id_of_build_id(build_id: bytes, *, little_endian: bool) -> str:
    """The debug id symbolic derives from an ELF build id, in Breakpad's spelling (age 0)."""
    guid = build_id[:16].ljust(16, b"\0")
    if little_endian:  # Data1, Data2 and Data3 of the GUID are little-endian numbers there
        guid = guid[3::-1] + guid[5:3:-1] + guid[7:5:-1] + guid[8:]
    return guid.hex().upper() + "0"


class _ElfFile:
    """Bounded reads of an open ELF file's headers and notes."""

    __slots__ = ("f", "layout", "size")

    def __init__(self, f: BinaryIO, size: int) -> None:
        self.f = f
        self.size = size
        ident = self.read(0, 16)
        if ident[:4] != _ELF_MAGIC or ident[6] != 1:  # EI_VERSION: EV_CURRENT
            raise _Unusual("not an ELF file")
        layout = _LAYOUTS.get((ident[4], ident[5]))
        if layout is None:
            raise _Unusual("unknown ELF class or byte order")
        self.layout = layout

    def read(self, offset: int, size: int) -> bytes:
        if offset < 0 or size < 0 or offset + size > self.size:
            raise _Unusual("past the end of the file")
        self.f.seek(offset)
        data = self.f.read(size)
        if len(data) != size:
            raise _Unusual("the file is shorter than it was")
        return data

    def table(self, entry: struct.Struct, offset: int, count: int) -> list[tuple[int, ...]]:
        if count * entry.size > MAX_TABLE_BYTES:
            raise _Unusual("a header table too large to be real")
        return list(entry.iter_unpack(self.read(offset, count * entry.size)))

    def build_id(self) -> tuple[bytes, bool]:
        """(the build id, whether the file is little-endian); `_Unusual` when symbolic must be asked."""
        layout = self.layout
        fields = layout.header.unpack(self.read(16, layout.header.size))
        phoff, shoff = fields[4], fields[5]
        phentsize, phnum, shentsize, shnum, shstrndx = fields[8:13]
        little_endian = layout.byte_order == "<"

        if phnum in (0, _PN_XNUM) or phentsize != layout.program_header.size:
            raise _Unusual("no program headers, or ones symbolic reads differently")
        segments = self.table(layout.program_header, phoff, phnum)
        type_at, offset_at, size_at, align_at = layout.program_fields
        if any(segment[offset_at] + segment[size_at] > self.size for segment in segments):
            raise _Unusual("a segment past the end of the file")
        # symbolic refuses a file whose section headers lie past its end (a truncated copy); a
        # section running past it is left to symbolic as well (damage it may meet only when converting)
        sections: list[tuple[int, ...]] = []
        if shnum == 0:
            if shoff != 0:
                raise _Unusual("extended section numbering")
        else:
            if shentsize != layout.section_header.size or shstrndx == _SHN_XINDEX or shstrndx >= shnum:
                raise _Unusual("section headers symbolic reads differently")
            sections = self.table(layout.section_header, shoff, shnum)
            if any(s[1] != _SHT_NOBITS and s[4] + s[5] > self.size for s in sections):
                raise _Unusual("a section past the end of the file")

        for segment in segments:
            if segment[type_at] == _PT_NOTE and segment[size_at]:
                found = self.notes_build_id(segment[offset_at], segment[size_at], segment[align_at])
                if found is not None:
                    return found, little_endian
        # then, as symbolic does, the SHT_NOTE sections named .note.gnu.build-id (linkers that
        # put the note in no segment, like Go's)
        if sections:
            names = sections[shstrndx]
            if names[1] == _SHT_NOBITS or names[5] > MAX_TABLE_BYTES:
                raise _Unusual("section names symbolic reads differently")
            strings = self.read(names[4], names[5])
            try:
                strings.decode("utf-8")  # symbolic knows no section by name when one name is not UTF-8
            except UnicodeDecodeError:
                raise _Unusual("section names that are not UTF-8") from None
            for section in sections:
                named = strings.startswith(_BUILD_ID_SECTION, section[0])
                if section[1] == _SHT_NOTE and section[5] and named:
                    found = self.notes_build_id(section[4], section[5], section[8])
                    if found is not None:
                        return found, little_endian
        raise _Unusual("no build id in the notes")

    def notes_build_id(self, offset: int, size: int, align: int) -> bytes | None:
        """The build id among the notes of one segment or section (None when they hold none)."""
        alignment = _NOTE_ALIGNMENTS.get(align)
        if alignment is None or offset % alignment or size > MAX_NOTES_BYTES:
            raise _Unusual("notes symbolic reads differently")
        return _gnu_build_id(self.read(offset, size), alignment, self.layout.byte_order)


def _padded(size: int, alignment: int) -> int:
    return -(-size // alignment) * alignment


def _gnu_build_id(notes: bytes, alignment: int, byte_order: str) -> bytes | None:
    """The descriptor of the first NT_GNU_BUILD_ID note (None when there is none)."""
    header = struct.Struct(byte_order + "III")
    at = 0
    while at < len(notes):
        if at + header.size > len(notes):
            raise _Unusual("a note header past the end of the notes")
        name_size, desc_size, kind = header.unpack_from(notes, at)
        if name_size == 0:  # symbolic's reader expects at least the name's NUL
            raise _Unusual("a note without a name")
        name_at = at + header.size
        desc_at = at + _padded(header.size + name_size, alignment)
        desc_end = desc_at + desc_size
        if desc_end > len(notes):
            raise _Unusual("a note past the end of the notes")
        name = notes[name_at : name_at + name_size - 1]
        try:
            name.decode("utf-8")  # symbolic stops at a name that is not UTF-8
        except UnicodeDecodeError:
            raise _Unusual("a note name that is not UTF-8") from None
        if kind == _NT_GNU_BUILD_ID:
            # symbolic takes the first note of this type whatever its owner; only GNU's is trusted here
            if name != b"GNU" or notes[name_at + name_size - 1] != 0 or desc_size == 0:
                raise _Unusual("a build-id note that is not GNU's, or empty")
            return notes[desc_at:desc_end]
        at += _padded(desc_end - at, alignment)
    return None
