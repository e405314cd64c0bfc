"""What a file that is not a minidump is, from its first bytes: the error people read when they open one.

Whoever drops a binary, a symbol file or an archive on the tool wants to hear what it is and
what to do with it — not the four bytes it starts with. The formats are recognised by their
magic numbers (ELF, PE, Mach-O, PDB's MSF, Breakpad `.sym` text, zip, gzip, xz, zstd, bzip2,
7-Zip, and the images and PDFs people attach beside a dump) and a few header fields (an ELF's
or Mach-O's file type, a PE's signature), read with bounds checks: the head may be short.
"""

from __future__ import annotations

import re
import struct

#: MINIDUMP_VERSION as the 2 bytes after `MDMP` (little-endian 0xA793): a real minidump header.
_MDMP_HEADER = b"MDMP\x93\xa7"

#: The start of a key:length:value crash report (Breakpad's Linux uploads): `prod:6:Chrome…`.
_KEY_LENGTH_VALUE = re.compile(rb"[A-Za-z0-9_.-]{1,64}:(\d{1,9}):")

#: What to do with a binary: the stackwalker reads Breakpad symbols; the binary itself helps the
#: crash analysis (its code), and dump_syms makes the symbols of it.
_BINARY_ADVICE = (
    "put it in a symbol path to give the crash analysis its code, and make a .sym of it with "
    "dump_syms for function names"
)

_ELF_TYPES = {
    1: "an ELF object file",
    2: "an ELF executable",
    3: "an ELF executable or shared library",
}
_MACHO_TYPES = {
    1: "a Mach-O object file",
    2: "a Mach-O executable",
    6: "a Mach-O dynamic library",
    8: "a Mach-O bundle",
    10: "a Mach-O dSYM companion file",
}
_MACHO_MAGICS = {
    b"\xfe\xed\xfa\xce": ">",
    b"\xfe\xed\xfa\xcf": ">",
    b"\xce\xfa\xed\xfe": "<",
    b"\xcf\xfa\xed\xfe": "<",
}
_ARCHIVES = (
    (b"PK\x03\x04", "a zip archive"),
    (b"PK\x05\x06", "an empty zip archive"),
    (b"\x1f\x8b", "a gzip-compressed file"),
    (b"\xfd7zXZ\x00", "an xz-compressed file"),
    (b"\x28\xb5\x2f\xfd", "a zstd-compressed file"),
    (b"BZh", "a bzip2-compressed file"),
    (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive"),
)
#: files people attach to crash reports beside the dump
_DOCUMENTS = (
    (b"\x89PNG\r\n\x1a\n", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"),
    (b"%PDF-", "a PDF document"),
)


def describe_non_minidump(head: bytes) -> str:
    """One sentence for a file whose first bytes (up to 64 KiB of them) are not a minidump's."""
    if not head:
        return "not a minidump: the file is empty"
    if b"BREAKPAD MICRODUMP" in head:
        return "this is a Breakpad microdump (an Android log excerpt), not a minidump"
    described = _binary(head) or _archive(head)
    if described is not None:
        return described
    at = _wrapped_minidump(head)
    if at is not None:
        return (
            f"not a minidump, but a minidump header appears at offset {at:#x}: this looks like a crash "
            "upload wrapper (multipart form or key:length:value report); extract the minidump first"
        )
    text = _text_start(head)
    if text is not None:
        if text.startswith("MODULE "):
            return (
                "this is a Breakpad symbol file (.sym), not a minidump: add it as a symbol path "
                "(File › Add Symbol File…, --symbols, or a SYMBOL_PATH argument of stackwalk)"
            )
        return f"not a minidump: this is a text file (it starts with {text!r})"
    start = " ".join(f"{b:02x}" for b in head[:4])
    return f"not a minidump: it starts with the bytes {start}, where a minidump starts with 'MDMP'"


def _wrapped_minidump(head: bytes) -> int | None:
    """Where the minidump of a crash upload wrapper starts: a real minidump header (signature and
    version) further in, or `MDMP` inside a multipart form or a key:length:value report. A text
    that merely mentions "MDMP" is none of these."""
    at = head.find(_MDMP_HEADER)
    if at > 0:
        return at
    at = head.find(b"MDMP")
    if at <= 0:
        return None
    before = head[:at]
    if b"Content-Disposition:" in before:
        return at
    first = _KEY_LENGTH_VALUE.match(head)
    if first is not None and first.end() + int(first.group(1)) <= len(head):
        return at
    return None


def _binary(head: bytes) -> str | None:
    if head.startswith(b"\x7fELF"):
        order = ">" if head[5:6] == b"\x02" else "<"
        e_type = _u16(head, 16, order)
        if e_type == 4:
            return (
                "this is an ELF core dump, not a minidump: convert it with Breakpad's core2md, "
                "or open it in a debugger"
            )
        what = _ELF_TYPES.get(e_type or 0, "an ELF file")
        return f"this is {what}, not a minidump: {_BINARY_ADVICE}"
    if head.startswith(b"MZ"):
        offset = _u32(head, 0x3C, "<")
        pe = offset is not None and head[offset : offset + 4] == b"PE\x00\x00"
        what = "a Windows executable or DLL (PE)" if pe else "a DOS or Windows executable (MZ)"
        return f"this is {what}, not a minidump: {_BINARY_ADVICE}"
    if head.startswith(b"Microsoft C/C++ MSF 7.00"):
        return (
            "this is a Windows PDB symbol file, not a minidump: make a .sym of it with dump_syms "
            "and add that as a symbol path"
        )
    macho_order = _MACHO_MAGICS.get(head[:4])
    if macho_order is not None:
        file_type = _u32(head, 12, macho_order)
        if file_type == 4:
            return "this is a Mach-O core dump, not a minidump"
        what = _MACHO_TYPES.get(file_type or 0, "a Mach-O file")
        return f"this is {what}, not a minidump: {_BINARY_ADVICE}"
    if head.startswith(b"\xca\xfe\xba\xbe"):
        # also a Java class file's magic; a universal binary has a handful of architectures
        count = _u32(head, 4, ">")
        if count is not None and 0 < count < 20:
            return f"this is a Mach-O universal binary, not a minidump: {_BINARY_ADVICE}"
    return None


def _archive(head: bytes) -> str | None:
    for magic, what in _ARCHIVES:
        if head.startswith(magic):
            return f"this is {what}, not a minidump: extract the minidump from it first"
    for magic, what in _DOCUMENTS:
        if head.startswith(magic):
            return f"this is {what}, not a minidump"
    return None


def _text_start(head: bytes) -> str | None:
    """The first line (up to 40 characters) if the head reads as text, else None."""
    sample = head[:4096]
    try:
        text = sample.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(sample) - 4:  # only a character cut at the end of the sample is fine
            return None
        text = sample[: exc.start].decode("utf-8")
    if not text or any(not (c.isprintable() or c in "\t\r\n\f") for c in text):
        return None
    first = text.lstrip("\ufeff").strip().splitlines()[0] if text.strip() else ""
    return first if len(first) <= 40 else first[:40] + "…"


def _u16(data: bytes, offset: int, order: str) -> int | None:
    if offset + 2 > len(data):
        return None
    value: int = struct.unpack_from(f"{order}H", data, offset)[0]
    return value


def _u32(data: bytes, offset: int, order: str) -> int | None:
    if offset + 4 > len(data):
        return None
    value: int = struct.unpack_from(f"{order}I", data, offset)[0]
    return value
