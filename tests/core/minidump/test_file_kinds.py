"""Opening a file that is not a minidump says what it is and what to do with it (CLI and window alike).

The window shows the core's message as it is (tests/gui/test_open_errors.py); here the core's
sentences and the CLI's one line on stderr.
"""

from __future__ import annotations

import struct
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from inspector.core.minidump import Minidump
from inspector.core.minidump.errors import NotAMinidump
from inspector.core.minidump.file_kinds import describe_non_minidump
from inspector.resources import sample_dump, sample_symbols

ROOT = Path(__file__).resolve().parents[3]


def elf(e_type: int) -> bytes:
    return b"\x7fELF\x02\x01\x01" + bytes(9) + struct.pack("<H", e_type) + bytes(46)


def pe() -> bytes:
    head = bytearray(0x80)
    head[:2] = b"MZ"
    struct.pack_into("<I", head, 0x3C, 0x40)
    head[0x40:0x44] = b"PE\x00\x00"
    return bytes(head)


def macho(file_type: int) -> bytes:
    return b"\xcf\xfa\xed\xfe" + struct.pack("<iiI", 0x01000007, 3, file_type) + bytes(16)


def zipped(tmp: Path) -> bytes:
    path = tmp / "upload.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("crash.dmp", sample_dump().read_bytes())
    return path.read_bytes()


def a_sym_file() -> bytes:
    return next(sample_symbols().rglob("*.sym")).read_bytes()


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"", "not a minidump: the file is empty"),
        (elf(3), "this is an ELF executable or shared library, not a minidump: put it in a symbol path"),
        (elf(2), "this is an ELF executable, not a minidump"),
        (elf(4), "this is an ELF core dump, not a minidump: convert it with Breakpad's core2md"),
        (pe(), "this is a Windows executable or DLL (PE), not a minidump: put it in a symbol path"),
        (macho(6), "this is a Mach-O dynamic library, not a minidump"),
        (macho(10), "this is a Mach-O dSYM companion file, not a minidump"),
        (
            b"Microsoft C/C++ MSF 7.00\r\n\x1aDS\x00\x00\x00" + bytes(32),
            "this is a Windows PDB symbol file, not a minidump: make a .sym of it with dump_syms",
        ),
        (b"\x1f\x8b\x08\x00" + bytes(20), "this is a gzip-compressed file, not a minidump: extract"),
        (
            b"# Release notes\n\nThe header of a minidump starts with MDMP.\n",
            "not a minidump: this is a text file (it starts with '# Release notes')",
        ),
        (b"\x00\x01\x02\x03garbage", "not a minidump: it starts with the bytes 00 01 02 03, where"),
    ],
)
def test_what_the_file_is(content: bytes, expected: str) -> None:
    message = describe_non_minidump(content)
    assert message.startswith(expected), message


def test_a_text_that_mentions_mdmp_is_not_an_upload_wrapper() -> None:
    text = b"Minidumps start with the signature MDMP; see the format notes.\n" * 3
    message = describe_non_minidump(text)
    assert "upload wrapper" not in message
    assert "text file" in message


def test_a_real_upload_wrapper_is_still_recognised() -> None:
    body = (
        b'--BOUNDARY\r\nContent-Disposition: form-data; name="upload_file_minidump"; filename="a.dmp"\r\n'
        b"Content-Type: application/octet-stream\r\n\r\n" + sample_dump().read_bytes()[:256]
    )
    message = describe_non_minidump(body)
    assert "upload wrapper" in message and f"offset {body.find(b'MDMP'):#x}" in message


def test_a_sym_file_and_a_zip(tmp_path: Path) -> None:
    assert describe_non_minidump(a_sym_file()).startswith(
        "this is a Breakpad symbol file (.sym), not a minidump: add it as a symbol path"
    )
    assert describe_non_minidump(zipped(tmp_path)) == (
        "this is a zip archive, not a minidump: extract the minidump from it first"
    )


def test_truncated_headers_do_not_raise() -> None:
    for content in (b"\x7fELF", b"MZ", b"\xcf\xfa\xed\xfe", b"\xca\xfe\xba\xbe", b"PK"):
        assert "minidump" in describe_non_minidump(content)


def test_the_reader_raises_with_that_message(tmp_path: Path) -> None:
    path = tmp_path / "libapp.so.dmp"
    path.write_bytes(elf(3))
    with pytest.raises(NotAMinidump, match="this is an ELF executable or shared library, not a minidump"):
        Minidump.open(path)


@pytest.mark.parametrize(
    ("name", "make", "expected"),
    [
        ("readme.dmp", lambda tmp: (ROOT / "README.md").read_bytes(), "not a minidump"),
        ("elf.dmp", lambda tmp: elf(3), "this is an ELF executable or shared library, not a minidump"),
        ("pe.dmp", lambda tmp: pe(), "this is a Windows executable or DLL (PE), not a minidump"),
        ("empty.dmp", lambda tmp: b"", "not a minidump: the file is empty"),
        ("zip.dmp", zipped, "this is a zip archive, not a minidump"),
    ],
)
def test_the_cli_says_it_in_one_line(tmp_path: Path, name: str, make: object, expected: str) -> None:
    assert callable(make)
    path = tmp_path / name
    path.write_bytes(make(tmp_path))
    command = [sys.executable, "-m", "inspector", "stackwalk", str(path)]
    out = subprocess.run(command, capture_output=True, text=True, check=False)
    assert out.returncode == 1
    assert out.stderr.count("\n") == 1 and "Traceback" not in out.stderr, out.stderr
    assert expected in out.stderr
    assert "upload wrapper" not in out.stderr and "b'" not in out.stderr
