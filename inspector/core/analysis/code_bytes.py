"""Code bytes when the dump has none: read from the module's file on this machine, if it is the same file.

A code-bytes provider is `provider(module, rva, size) -> bytes | None`: up to `size` bytes of
the module's image at `rva` (relative to its load address), or None. `ModuleFileCode` is one:
it opens the file at the path the dump recorded (or a path a finder gives, e.g. the symbol
helper's object search), checks that it is the module the dump saw (ELF build id or PE
timestamp + image size against the dump's code id; a file whose identity cannot be checked is
not used), and maps the address to a file offset through the program headers / section
table. Only the headers and the bytes asked for are read.

Mach-O files and compressed or split ELF sections are not read (None).
"""

from __future__ import annotations

import os
import struct
from collections.abc import Callable

from inspector.core.minidump.modules import Module
from inspector.core.record import Record, field

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (inspector.core.lazy)
if TYPE_CHECKING:
    from typing import BinaryIO

#: `provider(module, rva, size) -> bytes | None` (see the module's docstring)
CodeBytesProvider = Callable[[Module, int, int], bytes | None]


class _Segment(Record):
    rva: int  # relative to the module's load address
    size: int  # bytes present in the file
    offset: int  # in the file


class ObjectImage(Record):
    """What a module file holds: its identity (as the dump's code id spells it) and its mapped parts."""

    path: str
    code_id: str
    segments: tuple[_Segment, ...]

    def file_offset(self, rva: int) -> tuple[int, int] | None:
        """(file offset, bytes available from there) for `rva`, None when the file has no bytes for it."""
        for seg in self.segments:
            if seg.rva <= rva < seg.rva + seg.size:
                return seg.offset + (rva - seg.rva), seg.rva + seg.size - rva
        return None


def read_image(path: str) -> ObjectImage | None:
    """The identity and segments of an ELF or PE file; None for anything else or a damaged header."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(64)
            if head[:4] == b"\x7fELF":
                return _read_elf(path, fh, head)
            if head[:2] == b"MZ":
                return _read_pe(path, fh)
    except (OSError, struct.error, ValueError):
        return None
    return None


def _read_at(fh: BinaryIO, offset: int, size: int) -> bytes:
    # the symbols' bounded header read (imported here: only a dump without code bytes needs it)
    from inspector.core.symbols.objects.reading import read_header_bytes

    return read_header_bytes(fh, offset, size)


def _read_elf(path: str, fh: BinaryIO, head: bytes) -> ObjectImage | None:
    wide = head[4] == 2
    endian = "<" if head[5] == 1 else ">"
    if wide:
        phoff, phentsize, phnum = (
            struct.unpack_from(endian + "Q", head, 0x20)[0],
            *struct.unpack_from(endian + "HH", head, 0x36),
        )
        ph_format = endian + "IIQQQQQQ"  # type, flags, offset, vaddr, paddr, filesz, memsz, align
    else:
        phoff, phentsize, phnum = (
            struct.unpack_from(endian + "I", head, 0x1C)[0],
            *struct.unpack_from(endian + "HH", head, 0x2A),
        )
        ph_format = endian + "IIIIIIII"  # type, offset, vaddr, paddr, filesz, memsz, flags, align
    table = _read_at(fh, phoff, phentsize * phnum)
    loads: list[tuple[int, int, int]] = []  # vaddr, filesz, offset
    notes: list[tuple[int, int]] = []
    for i in range(phnum):
        entry = struct.unpack_from(ph_format, table, i * phentsize)
        if wide:
            p_type, _, p_offset, p_vaddr, _, p_filesz = entry[:6]
        else:
            p_type, p_offset, p_vaddr, _, p_filesz = entry[:5]
        if p_type == 1:  # PT_LOAD
            loads.append((p_vaddr, p_filesz, p_offset))
        elif p_type == 4:  # PT_NOTE
            notes.append((p_offset, p_filesz))
    build_id = None
    for offset, size in notes:
        build_id = _gnu_build_id(_read_at(fh, offset, size), endian)
        if build_id is not None:
            break
    if build_id is None or not loads:
        return None
    # The module's base is where the first PT_LOAD (page-aligned down) was mapped.
    first = min(vaddr for vaddr, _, _ in loads) & ~0xFFF
    segments = tuple(_Segment(vaddr - first, filesz, offset) for vaddr, filesz, offset in loads)
    return ObjectImage(path, build_id.hex(), segments)


def _gnu_build_id(notes: bytes, endian: str) -> bytes | None:
    at = 0
    while at + 12 <= len(notes):
        namesz, descsz, kind = struct.unpack_from(endian + "III", notes, at)
        name_end = at + 12 + ((namesz + 3) & ~3)
        desc_end = name_end + ((descsz + 3) & ~3)
        if kind == 3 and notes[at + 12 : at + 12 + namesz].rstrip(b"\0") == b"GNU":  # NT_GNU_BUILD_ID
            return notes[name_end : name_end + descsz]
        at = desc_end
    return None


def _read_pe(path: str, fh: BinaryIO) -> ObjectImage | None:
    from inspector.core.symbols.objects.reading import read_pe_headers

    headers = read_pe_headers(fh)
    if headers is None:
        return None
    segments = [_Segment(0, headers.size_of_headers, 0)]
    for virtual_size, virtual_address, raw_size, raw_offset in headers.sections:
        segments.append(_Segment(virtual_address, min(raw_size, virtual_size or raw_size), raw_offset))
    # rust-minidump's code id for PE (compared without regard to case)
    return ObjectImage(path, headers.code_id, tuple(segments))


class ModuleFileCode(Record, frozen=False):
    """Code bytes from module files on this machine whose identity matches the dump's module.

    `paths` gives the candidate files for a module (default: the path the dump recorded); the
    symbols side can pass its own finder. Files are read once and remembered (also a failed
    check). `tried` says, per module, what was looked at and why it was not used.
    """

    paths: Callable[[Module], list[str]] = field(default=lambda module: [module.code_file])
    _images: dict[str, ObjectImage | None] = field(default_factory=dict, repr=False)
    tried: dict[str, list[str]] = field(default_factory=dict)
    used: dict[str, str] = field(default_factory=dict)  # module code file -> file read

    def image_for(self, module: Module) -> ObjectImage | None:
        notes = self.tried.setdefault(module.code_file, [])
        if not module.code_id:
            notes.append("the dump gives the module no code id to check a file against")
            return None
        for path in self.paths(module):
            if not path or not os.path.isfile(path):
                notes.append(f"{path or '(no path)'}: not on this machine")
                continue
            if path not in self._images:
                self._images[path] = read_image(path)
            image = self._images[path]
            if image is None:
                notes.append(f"{path}: not an ELF or PE file with an identity")
            elif image.code_id.lower() != module.code_id.lower():
                notes.append(f"{path}: another build (code id {image.code_id}, the dump's {module.code_id})")
            else:
                return image
        return None

    def __call__(self, module: Module, rva: int, size: int) -> bytes | None:
        image = self.image_for(module)
        if image is None:
            return None
        found = image.file_offset(rva)
        if found is None:
            self.tried[module.code_file].append(
                f"{image.path}: holds no bytes at offset {rva:#x} of the image"
            )
            return None
        offset, available = found
        try:
            with open(image.path, "rb") as fh:
                fh.seek(offset)
                data = fh.read(min(size, available))
        except OSError as exc:
            self.tried[module.code_file].append(f"{image.path}: {exc}")
            return None
        self.used[module.code_file] = image.path
        return data or None
