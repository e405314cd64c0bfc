"""Breakpad's Linux streams: copies of /proc files (cpuinfo, status, lsb-release, maps …), auxv, DSO."""

from __future__ import annotations

import pytest

from inspector.core.minidump import Minidump, StreamType
from inspector.core.minidump.linux import LinuxCpuInfo, _parse_map_line, parse_maps_text, rust_parse_uint
from inspector.core.types import Cpu
from tests.synth.minidump import SynthMinidump
from tests.synth.section import Section

CPUINFO = (
    "processor\t: 0\nvendor_id\t: GenuineIntel\nmicrocode\t: 0x2b\n\n"
    "processor\t: 1\nvendor_id\t: GenuineIntel\nmicrocode\t: 0x2c\n"
)


def test_cpuinfo_entries_and_microcode_of_the_first_processor() -> None:
    dump = SynthMinidump().add_linux_cpu_info(CPUINFO).to_minidump()
    info = dump.linux_cpu_info
    assert info is not None and info.raw == CPUINFO.encode()
    assert info.entries()[:2] == [(b"processor", b"0"), (b"vendor_id", b"GenuineIntel")]
    assert dump.cpu_microcode_version == 0x2B


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("microcode : 0x2b", 0x2B),
        ('microcode : "0xB4"', 0xB4),
        ("microcode : 0x+1f", 0x1F),  # Rust's integer parser takes a leading '+'
        ("microcode : 43", None),  # no 0x prefix: rust-minidump gives up
        ("microcode : 0x", None),
        ("microcode : 0xZZ", None),
        ("microcode : 0x10000000000000000", None),
        ("processor : 0", None),
    ],
)
def test_microcode_parsing_rules(line: str, expected: int | None) -> None:
    dump = SynthMinidump().add_linux_cpu_info(line + "\n").to_minidump()
    assert dump.cpu_microcode_version == expected


def test_first_microcode_line_decides() -> None:
    dump = SynthMinidump().add_linux_cpu_info("microcode : 12\nmicrocode : 0x5\n").to_minidump()
    assert dump.cpu_microcode_version is None


def test_only_lines_whose_key_is_microcode_count() -> None:
    """The value is looked for on the lines holding the word only: the same answer as every line's."""
    text = b'flags : fpu microcode\nmicrocode_x : 0x1\n "microcode" : 0x7\nmicrocode : 0x8\n'
    assert LinuxCpuInfo(text).microcode_version == 0x7
    assert LinuxCpuInfo(b"microcode : \xff\nmicrocode : 0x9").microcode_version == 0x9  # not UTF-8: the next
    assert LinuxCpuInfo(b"model : microcode\n").microcode_version is None


def test_proc_status_pid_and_rust_minidumps_zero_default() -> None:
    status = "PPid:\t1\nTracerPid:\t0\nPid:\t77\n"
    assert SynthMinidump().add_linux_proc_status(status).to_minidump().process_id == 77
    assert SynthMinidump().add_linux_proc_status("Name:\tx\nPid:\t20043\n").to_minidump().process_id == 20043
    assert SynthMinidump().add_linux_proc_status("Name:\tx\n").to_minidump().process_id == 0
    assert SynthMinidump().add_linux_proc_status("Pid:\tabc\n").to_minidump().process_id == 0
    assert SynthMinidump().to_minidump().process_id is None


def test_lsb_release_fields_with_quotes_and_os_release_keys() -> None:
    text = (
        "DISTRIB_ID=Ubuntu\nDISTRIB_RELEASE=14.04\nDISTRIB_CODENAME=trusty\n"
        'DISTRIB_DESCRIPTION="Ubuntu 14.04 LTS"\n'
    )
    dump = SynthMinidump().add_linux_lsb_release(text).to_minidump()
    assert dump.lsb_release == {
        "id": "Ubuntu",
        "release": "14.04",
        "codename": "trusty",
        "description": "Ubuntu 14.04 LTS",
    }
    os_release = (
        SynthMinidump().add_linux_lsb_release('ID=debian\nVERSION_ID="12"\nPRETTY_NAME=""\n').to_minidump()
    )
    assert os_release.lsb_release == {"id": "debian", "release": "12", "codename": "", "description": ""}


def test_cmdline_and_environ() -> None:
    dump = (
        SynthMinidump()
        .add_linux_cmd_line(b"./driver\0--flag\0")
        .add_linux_environ(b"HOME=/root\0EMPTY=\0X=a=b\0")
        .to_minidump()
    )
    assert dump.linux_cmd_line is not None and dump.linux_cmd_line.arguments == ["./driver", "--flag"]
    assert dump.linux_environ is not None
    assert dump.linux_environ.variables == [("HOME", "/root"), ("EMPTY", ""), ("X", "a=b")]


MAPS = (
    "00400000-00417000 r-xp 00000000 fc:02 23856536                           /usr/bin/driver\n"
    "00f87000-00fa8000 rw-p 00000000 00:00 0                                  [heap]\n"
    "7f3f0e3fc000-7f3f0e401000 rw-p 00000000 00:00 0 \n"
    "7ffd8331d000-7ffd8331f000 r-xp 00000000 00:00 0                          [vdso]\n"
)


def test_maps_are_counted_and_parsed() -> None:
    dump = SynthMinidump().add_linux_maps(MAPS).to_minidump()
    assert dump.linux_memory_map_count == 4
    maps = dump.linux_maps
    assert maps is not None and maps.mappings is not None
    first = maps.mappings[0]
    assert (first.start, first.end, first.permissions, first.offset) == (0x400000, 0x417000, "r-xp", 0)
    assert (first.device, first.inode, first.pathname) == ((0xFC, 2), 23856536, "/usr/bin/driver")
    assert first.is_readable and first.is_executable and not first.is_writable
    assert maps.mappings[2].pathname == ""


def test_smaps_attribute_lines_are_not_mappings() -> None:
    text = MAPS.splitlines()[0] + "\nSize:                 92 kB\nVmFlags: rd ex mr mw me dw\n"
    mappings, error = parse_maps_text(text.encode())
    assert error is None and mappings is not None and len(mappings) == 1


@pytest.mark.parametrize(
    "bad",
    [
        "ffffffffff600000-ffffffffff601000 r-xp 00000000 00:",  # cut short (a real corpus dump)
        "00400000-00417000 r-xp 00000000 fc:02 1",  # no separator before the (empty) path
        "00400000 r-xp 00000000 fc:02 1 /x",  # no end address
        "zz-00417000 r-xp 00000000 fc:02 1 /x",
        "00400000-00417000 r-xp 00000000 fc:02 -1 /x",
        "Size: x kB",  # attribute value that is not a number
        "00400000-00417000 r-xp 00000000 fc:02 1 [stack:abc]",
        "",
    ],
)
def test_one_bad_maps_line_makes_the_count_unknown(bad: str) -> None:
    dump = SynthMinidump().add_linux_maps(MAPS + bad + "\n").to_minidump()
    assert dump.linux_memory_map_count is None
    assert dump.linux_maps is not None and dump.linux_maps.error
    assert dump.stream_problems(StreamType.LinuxMaps)[0].rejects_stream


def test_attribute_line_before_any_mapping_is_an_error() -> None:
    mappings, error = parse_maps_text(b"Size: 4 kB\n" + MAPS.encode())
    assert mappings is None and error is not None and "before any mapping" in error


def test_maps_edge_cases_procfs_accepts() -> None:
    ok = "7f00-7f10 ---p +0 -1:+2 0 [stack:123]\n7f10-7f20 rw-p 0 0:0 0 /SYSV00001234 (deleted)\r\n"
    mappings, error = parse_maps_text(ok.encode())
    assert error is None and mappings is not None and [m.device for m in mappings] == [(-1, 2), (0, 0)]
    assert parse_maps_text(b"") == ((), None)
    assert parse_maps_text(b"\xff\xfe\n")[1] is not None


@pytest.mark.parametrize(
    "line",
    [
        MAPS.splitlines()[0],
        "ffffffffffffffff-ffffffffffffffff rwxp ffffffffffffffff fffffff:fffffff 9999999999999999999 /x",
        "0-1  0 0:0 0 ",  # empty permissions and path
        "00400000-00417000 r-xp 00000000 fc:02 1 \u2003/a b (deleted)\u3000",  # Rust's trim
        "00400000-00417000 r-xp 00000000 FC:02 1 /upper/hex",
        "00400000-00417000 r-xp +0 fc:02 1 /signed",
        "10000000000000000-1 r-xp 0 0:0 0 /past/64/bits/goes/to/the/rules",
    ],
)
def test_plain_map_lines_read_as_procfs_rules_read_them(line: str) -> None:
    """Lines the one-match fast path reads give what procfs' rules (`_parse_map_line`) give."""
    mappings, error = parse_maps_text((line + "\n").encode())
    try:
        expected = (_parse_map_line(line),)
    except Exception as exc:  # the rules refuse it: so must the fast path
        assert mappings is None and error is not None and str(exc) in error
    else:
        assert error is None and mappings == expected


def test_the_first_bad_maps_line_is_the_one_reported() -> None:
    good = MAPS.encode()
    assert parse_maps_text(good + b"\xff\n")[1] == "line 5 is not UTF-8"
    assert parse_maps_text(good + b"bad\n\xff\n")[1] == "line 5: mapping line has 1 of 6 fields: 'bad'"
    assert parse_maps_text(b"\xff\nbad\n")[1] == "line 1 is not UTF-8"


def test_rust_integer_parsing() -> None:
    assert rust_parse_uint("ff", 16) == 255 and rust_parse_uint("+FF", 16) == 255
    assert rust_parse_uint("+", 16) is None and rust_parse_uint("", 10) is None
    assert rust_parse_uint("1a", 10) is None and rust_parse_uint(" 1", 10) is None
    assert rust_parse_uint("4294967296", 10, 32) is None and rust_parse_uint("١", 10) is None


def test_auxv_words_follow_the_pointer_width() -> None:
    auxv64 = Section().d64(33).d64(0x7FFD8331D000).d64(0).d64(0)
    dump = SynthMinidump(cpu=Cpu.AMD64).add_stream(StreamType.LinuxAuxv, auxv64).to_minidump()
    assert dump.linux_auxv is not None and dump.linux_auxv.entries == ((33, 0x7FFD8331D000), (0, 0))
    auxv32 = Section().d32(6).d32(4096)
    dump32 = SynthMinidump(cpu=Cpu.ARM).add_stream(StreamType.LinuxAuxv, auxv32).to_minidump()
    assert dump32.linux_auxv is not None and dump32.linux_auxv.entries == ((6, 4096),)


def test_dso_debug_and_its_link_map() -> None:
    """r_debug (MDRawDebug64, 40 bytes with C padding), one 24-byte link map entry, its UTF-16 name."""
    synth = SynthMinidump(cpu=Cpu.AMD64)
    name_text = "/lib/libc.so.6".encode("utf-16-le")
    # The link map and name RVAs are file offsets: reserve the stream, then write it where it landed.
    data = bytearray(synth.add_stream(StreamType.LinuxDsoDebug, bytes(40 + 24 + 4 + len(name_text))).finish())
    rva, _ = synth.stream_locations[StreamType.LinuxDsoDebug]
    map_rva, name_rva = rva + 40, rva + 64
    debug = Section().d32(1).d32(map_rva).d32(1).d32(0).d64(0x1000).d64(0x7F00).d64(0x600E28)
    entry = Section().d64(0x7F3F0DD36000).d32(name_rva).d32(0).d64(0x7F3F0E03AD88)
    body = debug.finish() + entry.finish() + len(name_text).to_bytes(4, "little") + name_text
    data[rva : rva + len(body)] = body
    dso = Minidump.from_bytes(bytes(data)).linux_dso_debug
    assert dso is not None
    assert (dso.version, dso.dso_count, dso.brk, dso.ldbase, dso.dynamic) == (1, 1, 0x1000, 0x7F00, 0x600E28)
    [link] = dso.link_map
    assert (link.addr, link.ld, link.name) == (0x7F3F0DD36000, 0x7F3F0E03AD88, "/lib/libc.so.6")
