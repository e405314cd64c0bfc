"""Code bytes from module files: identity checks and address mapping for ELF and PE files."""

from __future__ import annotations

import struct
from pathlib import Path

from inspector.core.analysis.code_bytes import ModuleFileCode, read_image
from inspector.core.minidump import Minidump, Module
from inspector.core.types import Os
from tests.synth.minidump import SynthMinidump

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "crashes"


def _module(path: Path, *, build_id: bytes | None = None, pe: tuple[int, int] | None = None) -> Module:
    if pe is not None:
        # a PE module's code id is its timestamp and image size (rust-minidump's spelling)
        dump = SynthMinidump(os=Os.WINDOWS)
        dump.add_module(0x140000000, pe[1], str(path), time_date_stamp=pe[0], pdb20=(1, 1))
    else:
        dump = SynthMinidump().add_module(0x400000, 0x10000, str(path), build_id=build_id)
    return dump.to_minidump().modules[0]


def _elf(build_id: bytes, code: bytes, *, vaddr: int = 0x1000, offset: int = 0x1000) -> bytes:
    """A minimal ELF64 shared object: the headers and build-id note in a first PT_LOAD at 0, `code`
    in a second one at `vaddr` (file offset `offset`)."""
    note = struct.pack("<III", 4, len(build_id), 3) + b"GNU\0" + build_id
    phoff, phnum = 64, 3
    header = b"\x7fELF" + bytes([2, 1, 1]) + bytes(9)
    header += struct.pack("<HHIQQQIHHHHHH", 3, 62, 1, 0, phoff, 0, 0, 64, 56, phnum, 0, 0, 0)
    note_offset = phoff + 56 * phnum
    first = note_offset + len(note)
    ph_head = struct.pack("<IIQQQQQQ", 1, 4, 0, 0, 0, first, first, 0x1000)
    ph_note = struct.pack("<IIQQQQQQ", 4, 4, note_offset, note_offset, note_offset, len(note), len(note), 4)
    ph_load = struct.pack("<IIQQQQQQ", 1, 5, offset, vaddr, vaddr, len(code), len(code), 0x1000)
    body = header + ph_head + ph_note + ph_load + note
    return body + bytes(offset - len(body)) + code


def test_elf_build_id_and_load_segments(tmp_path: Path) -> None:
    build_id = bytes(range(20))
    path = tmp_path / "libthing.so"
    path.write_bytes(_elf(build_id, b"\x48\x8b\x40\x08" + bytes(12)))
    image = read_image(str(path))
    assert image is not None and image.code_id == build_id.hex()
    provider = ModuleFileCode()
    module = _module(path, build_id=build_id)
    assert provider(module, 0x1000, 4) == b"\x48\x8b\x40\x08"
    assert provider.used == {str(path): str(path)}
    assert provider(module, 0x20000, 4) is None
    assert "holds no bytes at offset 0x20000" in provider.tried[str(path)][-1]


def test_other_build_or_no_identity_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "libthing.so"
    path.write_bytes(_elf(b"\x01" * 20, bytes(16)))
    provider = ModuleFileCode()
    assert provider(_module(path, build_id=b"\x02" * 20), 0x1000, 4) is None
    assert "another build" in provider.tried[str(path)][0]
    missing = tmp_path / "gone.so"
    assert provider(_module(missing, build_id=b"\x02" * 20), 0x1000, 4) is None
    assert provider.tried[str(missing)] == [f"{missing}: not on this machine"]
    nobuild = ModuleFileCode()
    assert nobuild(_module(path, build_id=b""), 0x1000, 4) is None


def test_damaged_files_are_not_read(tmp_path: Path) -> None:
    whole = _elf(bytes(range(20)), bytes(16))
    for cut in (10, 70, 150, 250):
        path = tmp_path / f"cut{cut}.so"
        path.write_bytes(whole[:cut])
        assert read_image(str(path)) is None
    (tmp_path / "text.so").write_text("not an object")
    assert read_image(str(tmp_path / "text.so")) is None
    hostile = bytearray(whole)
    struct.pack_into("<H", hostile, 0x38, 0xFFFF)  # 65535 program headers
    (tmp_path / "hostile.so").write_bytes(bytes(hostile))
    assert read_image(str(tmp_path / "hostile.so")) is None


def test_pe_timestamp_and_image_size(tmp_path: Path) -> None:
    stamp, image_size = 0x5F5E1000, 0x23000
    pe_offset = 0x80
    optional = bytearray(240)
    struct.pack_into("<H", optional, 0, 0x20B)  # PE32+
    struct.pack_into("<II", optional, 56, image_size, 0x400)
    section = bytearray(40)
    section[:5] = b".text"
    struct.pack_into("<IIII", section, 8, 0x100, 0x1000, 0x200, 0x400)
    data = bytearray(0x600)
    data[:2] = b"MZ"
    struct.pack_into("<I", data, 0x3C, pe_offset)
    data[pe_offset : pe_offset + 4] = b"PE\0\0"
    struct.pack_into("<HHI", data, pe_offset + 4, 0x8664, 1, stamp)
    struct.pack_into("<H", data, pe_offset + 20, len(optional))
    data[pe_offset + 24 : pe_offset + 24 + len(optional)] = optional
    data[pe_offset + 24 + len(optional) : pe_offset + 64 + len(optional)] = section
    data[0x400:0x404] = b"\xc7\x00\x05\x00"
    path = tmp_path / "crash.exe"
    path.write_bytes(bytes(data))
    image = read_image(str(path))
    assert image is not None and image.code_id == "5F5E100023000"
    module = _module(path, pe=(stamp, image_size))
    provider = ModuleFileCode()
    assert provider(module, 0x1000, 4) == b"\xc7\x00\x05\x00"
    assert provider(module, 0x1100, 4) is None


def test_real_executable_matches_its_dump() -> None:
    binary = FIXTURES / "analysis_null_read" / "crash_null_read"
    image = read_image(str(binary))
    assert image is not None
    with Minidump.open(FIXTURES / "analysis_null_read" / "analysis_null_read.dmp") as dump:
        module = next(m for m in dump.modules if m.filename == "crash_null_read")
        assert image.code_id == module.code_id
