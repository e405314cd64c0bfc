"""Opening dumps: header checks, clear errors for non-minidumps, directory damage, lazy streams."""

from __future__ import annotations

import mmap
from pathlib import Path

import pytest

from inspector.core.errors import MinidumpError
from inspector.core.minidump import (
    DirectoryTruncated,
    DumpClosed,
    HeaderMismatch,
    Minidump,
    NotAMinidump,
    StreamType,
    StreamVendor,
    UnreadableFile,
    VersionMismatch,
    reader,
)
from inspector.core.types import Cpu, Os
from tests.synth.minidump import SynthContext, SynthMinidump


def small_dump() -> bytes:
    return (
        SynthMinidump(cpu=Cpu.AMD64, os=Os.LINUX)
        .add_thread(7, context=SynthContext.amd64(rip=0x1000, rsp=0x2000))
        .add_module(0x400000, 0x1000, "/bin/true", build_id=b"\x01" * 20)
        .finish()
    )


def test_header_fields_and_directory_entries_are_read() -> None:
    dump = Minidump.from_bytes(small_dump())
    assert dump.header.signature == 0x504D444D
    assert dump.header.version & 0xFFFF == 0xA793
    assert dump.header.stream_count == len(dump.directory) == 3
    assert [e.stream_type for e in dump.directory] == [
        StreamType.SystemInfoStream,
        StreamType.ThreadListStream,
        StreamType.ModuleListStream,
    ]
    assert all(e.vendor is StreamVendor.OFFICIAL for e in dump.directory)
    assert dump.problems == ()


def test_version_high_bits_are_ignored_as_rust_minidump_does() -> None:
    dump = Minidump.from_bytes(SynthMinidump(version=0x5128A793).finish())
    assert dump.header.version == 0x5128A793


def test_wrong_low_version_is_read_and_reported() -> None:
    """rust-minidump refuses the file; the signature says it is a minidump, so we read it."""
    synth = SynthMinidump(version=0xA792).add_thread(3, context=SynthContext.amd64(rip=1))
    dump = Minidump.from_bytes(synth.finish())
    assert [t.thread_id for t in dump.threads] == [3]
    assert [(p.code, p.offset) for p in dump.problems] == [("VersionMismatch", 4)]


def test_wrong_version_and_no_directory_is_a_version_mismatch() -> None:
    with pytest.raises(VersionMismatch):
        Minidump.from_bytes(b"MDMP\x92\xa7\x00\x00" + bytes(24) + b"garbage" * 8)


def test_microdump_text_is_not_a_minidump() -> None:
    text = b"W/google-breakpad( 3745): -----BEGIN BREAKPAD MICRODUMP-----\nW/google-breakpad: O A arm\n"
    with pytest.raises(NotAMinidump, match="microdump"):
        Minidump.from_bytes(text)


def test_upload_wrapper_reports_where_the_minidump_starts() -> None:
    prefix = b"--boundary\r\nContent-Disposition: form-data; name=upload_file_minidump\r\n\r\n"
    with pytest.raises(NotAMinidump, match=f"offset {len(prefix):#x}"):
        Minidump.from_bytes(prefix + small_dump())


def test_empty_and_tiny_inputs_fail_clearly() -> None:
    with pytest.raises(NotAMinidump, match="empty"):
        Minidump.from_bytes(b"")
    with pytest.raises(HeaderMismatch, match="too short"):
        Minidump.from_bytes(b"MDMP\x93\xa7\x00\x00")


def test_every_open_failure_is_a_minidump_error_with_a_stable_code() -> None:
    for data in (b"", b"hello world", b"MDMP", b"MDMP" + b"\0" * 28):
        with pytest.raises(MinidumpError) as info:
            Minidump.from_bytes(data)
        assert info.value.code in {"NotAMinidump", "HeaderMismatch", "VersionMismatch", "DirectoryTruncated"}


def test_directory_that_runs_off_the_file_keeps_the_entries_that_fit() -> None:
    data = bytearray(small_dump())
    data[8:12] = (5).to_bytes(4, "little")  # claim 5 streams; the file has room for more than 3 only by luck
    dump = Minidump.from_bytes(bytes(data[: 32 + 12 * 3]))
    assert len(dump.directory) == 3
    assert any(p.code == "DirectoryTruncated" for p in dump.problems)


def test_directory_entirely_outside_the_file_is_looked_for_after_the_header() -> None:
    data = bytearray(small_dump())
    data[12:16] = (0x7FFFFFFF).to_bytes(4, "little")
    dump = Minidump.from_bytes(bytes(data))
    assert [t.thread_id for t in dump.threads] == [7] and dump.modules[0].code_file == "/bin/true"
    assert [(p.code, p.offset) for p in dump.problems] == [("DirectoryTruncated", 12)]
    assert "entries found right after the header are used" in dump.problems[0].message


def test_directory_outside_the_file_and_nothing_after_the_header_cannot_be_opened() -> None:
    data = bytearray(small_dump())
    data[12:16] = (0x7FFFFFFF).to_bytes(4, "little")
    data[32:64] = bytes(32)
    with pytest.raises(DirectoryTruncated):
        Minidump.from_bytes(bytes(data))


def test_garbage_read_as_entries_of_a_huge_count_does_not_hide_real_streams() -> None:
    data = bytearray(small_dump())
    count = int.from_bytes(data[8:12], "little")
    data[8:12] = (0xFFFFFFFF).to_bytes(4, "little")  # the bytes after the directory are read as entries
    dump = Minidump.from_bytes(bytes(data))
    assert len(dump.directory) == count
    assert [t.thread_id for t in dump.threads] == [7] and dump.modules[0].code_file == "/bin/true"


def test_huge_stream_count_is_not_trusted() -> None:
    data = bytearray(small_dump())
    data[8:12] = (0xFFFFFFFF).to_bytes(4, "little")
    dump = Minidump.from_bytes(bytes(data))
    assert len(dump.directory) <= len(data) // 12
    assert any(p.code == "DirectoryTruncated" for p in dump.problems)


def test_repeated_stream_type_uses_the_last_entry_and_says_so() -> None:
    synth = (
        SynthMinidump()
        .add_stream(StreamType.LinuxCmdLine, b"first\0")
        .add_stream(StreamType.LinuxCmdLine, b"second\0")
    )
    dump = synth.to_minidump()
    assert dump.linux_cmd_line is not None
    assert dump.linux_cmd_line.arguments == ["second"]
    assert any("appears at indexes" in p.message for p in dump.problems)


def test_streams_are_parsed_lazily_and_cached() -> None:
    dump = Minidump.from_bytes(small_dump())
    assert "module_list" not in dump._cache
    first = dump.module_list
    assert dump.module_list is first
    assert "module_list" in dump._cache


def test_absent_stream_is_none_and_raw_stream_gives_bytes() -> None:
    dump = SynthMinidump().add_stream(0x12345678, b"opaque").to_minidump()
    assert dump.exception is None and dump.crash_reason is None
    raw = dump.raw_stream(0x12345678)
    assert raw is not None and bytes(raw) == b"opaque"
    assert dump.raw_stream(StreamType.ExceptionStream) is None


def test_unknown_streams_are_listed_with_their_vendor() -> None:
    dump = (
        SynthMinidump()
        .add_stream(0x47670099, b"g")
        .add_stream(0x4D7A0099, b"m")
        .add_stream(0x43500099, b"c")
        .add_stream(0x4B6B0002, b"o")
        .to_minidump()
    )
    vendors = {e.stream_type: e.vendor for e in dump.unknown_streams()}
    assert vendors == {
        0x43500099: StreamVendor.CRASHPAD,
        0x47670099: StreamVendor.GOOGLE,
        0x4B6B0002: StreamVendor.OTHER,
        0x4D7A0099: StreamVendor.MOZILLA,
    }
    assert StreamVendor.CRASHPAD.rust_minidump_label == "Unknown Extension"
    entry = dump.entry(0x4D7A0099)
    assert entry is not None and entry.data_size == 1 and entry.rva > 0


def test_unimplemented_streams_are_those_rust_minidump_lists() -> None:
    dump = (
        SynthMinidump()
        .add_stream(StreamType.CommentStreamA, b"hi")
        .add_stream(StreamType.LinuxAuxv, b"")
        .to_minidump()
    )
    assert {e.stream_type for e in dump.unimplemented_streams()} == {
        StreamType.CommentStreamA,
        StreamType.LinuxAuxv,
    }


def test_big_endian_dump_is_read() -> None:
    synth = (
        SynthMinidump(cpu=Cpu.PPC, os=Os.MACOS, endian="big")
        .add_thread(3, context=SynthContext.ppc(srr0=0x1234, r1=0x5678))
        .add_module(0x1000, 0x100, "/usr/lib/libSystem.dylib", debug_id="00112233445566778899AABBCCDDEEFF0")
    )
    dump = Minidump.from_bytes(synth.finish())
    assert dump.endian == ">"
    assert dump.cpu is Cpu.PPC and dump.os is Os.MACOS
    ctx = dump.threads[0].context
    assert ctx is not None and ctx.instruction_pointer == 0x1234 and ctx.stack_pointer == 0x5678
    assert dump.modules[0].code_file == "/usr/lib/libSystem.dylib"
    assert dump.modules[0].debug_id == "00112233445566778899AABBCCDDEEFF0"


@pytest.mark.parametrize("mapped", [False, True])
def test_open_reads_or_maps_the_file_and_regions_are_views_into_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mapped: bool
) -> None:
    """A small file is read, a larger one (over `READ_LIMIT`) mapped; regions are views either way."""
    stack = bytes(range(256)) * 16
    path = tmp_path / "x.dmp"
    path.write_bytes(
        SynthMinidump().add_thread(1, context=SynthContext.amd64(rsp=0x8000), stack=(0x8000, stack)).finish()
    )
    if mapped:
        monkeypatch.setattr(reader, "READ_LIMIT", 1024)
    with Minidump.open(path) as dump:
        region = dump.threads[0].stack
        assert region is not None
        assert region.data.obj is dump.data.obj  # a view, not a copy
        assert isinstance(dump.data.obj, mmap.mmap if mapped else bytes)
        assert region.read_u32(0x8004) == 0x07060504
        assert dump.path == str(path)


def test_open_of_missing_file_or_directory_is_unreadable(tmp_path: Path) -> None:
    with pytest.raises(UnreadableFile, match="no such file"):
        Minidump.open(tmp_path / "missing.dmp")
    with pytest.raises(UnreadableFile, match="directory"):
        Minidump.open(tmp_path)


def test_open_of_non_minidump_file_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("hello")
    with pytest.raises(NotAMinidump, match=r"notes\.txt"):
        Minidump.open(path)


def test_empty_file_is_not_a_minidump(tmp_path: Path) -> None:
    path = tmp_path / "empty.dmp"
    path.write_bytes(b"")
    with pytest.raises(NotAMinidump):
        Minidump.open(path)


def test_close_is_idempotent_even_while_regions_are_alive(tmp_path: Path) -> None:
    path = tmp_path / "x.dmp"
    path.write_bytes(SynthMinidump().add_memory(0x1000, b"abcd").finish())
    dump = Minidump.open(path)
    region = dump.memory.region_for(0x1000)
    assert dump.memory_list is not None  # parsed (and cached) before the close
    dump.close()
    dump.close()
    assert region is not None and region.read(0x1000, 4) == b"abcd"
    with pytest.raises(DumpClosed):
        dump.module_list  # noqa: B018 - the access is the test
    with pytest.raises(DumpClosed):
        dump.memory  # noqa: B018
    with pytest.raises(DumpClosed):
        dump.memory_list  # noqa: B018 - read without the lock while open: not once closed


def test_parse_all_collects_the_problems_of_every_stream() -> None:
    dump = SynthMinidump().add_stream(StreamType.ThreadListStream, b"\xff\xff").to_minidump()
    assert dump.problems == ()
    dump.parse_all()
    assert [p.stream_type for p in dump.problems] == [StreamType.ThreadListStream]
