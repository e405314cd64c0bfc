"""The `dump` report: rust-minidump's layout first, then what only Crash Inspector shows."""

from __future__ import annotations

from inspector.core.minidump import Minidump, StreamType
from inspector.core.report.dump_text import ADDITIONS_MARKER, context_text, render_dump, rust_minidump_part
from inspector.core.types import Cpu, Os
from tests.synth.minidump import SynthContext, SynthMinidump
from tests.synth.section import Section


def windows_dump() -> Minidump:
    return (
        SynthMinidump(cpu=Cpu.X86, os=Os.WINDOWS, time_date_stamp=0x45D35F73)
        .add_system_info(major_version=5, minor_version=1, build_number=2600, csd_version="Service Pack 2")
        .add_thread(0xBF4, context=SynthContext.x86(eip=0x40429E, esp=0x12FE84), stack=(0x12FE84, bytes(32)))
        .add_module(0x400000, 0x2D000, "c:\\test_app.exe", debug_id="5A9832E5287241C1838ED98914E9B7FF1")
        .add_exception(0xBF4, 0xC0000005, address=0x40429E, parameters=(1, 0x45))
        .add_misc_info(process_id=3932, process_create_time=0x45D35F6C)
        .add_breakpad_info(dump_thread_id=0x11C0, requesting_thread_id=0xBF4)
        .to_minidump()
    )


def test_report_starts_with_header_and_directory_like_rust_minidump() -> None:
    text = render_dump(windows_dump())
    assert text.startswith(
        "MDRawHeader\n"
        "  signature            = 0x504d444d\n"
        "  version              = 0xa793\n"
        "  stream_count         = 7\n"
        "  stream_directory_rva = 0x20\n"
        "  checksum             = 0x0\n"
        "  time_date_stamp      = 0x45d35f73 2007-02-14T19:13:55Z\n"
        "  flags                = 0x0\n\n"
        "mDirectory[0]\nMDRawDirectory\n  stream_type        = 0x7 (SystemInfoStream)\n"
    )
    assert "Streams:\n  stream type 0x3 (ThreadListStream) at index 1\n" in text


def test_threads_modules_exception_system_and_misc_sections() -> None:
    text = render_dump(windows_dump())
    assert (
        "MinidumpThreadList\n  thread_count = 1\n\nthread[0]\nMINIDUMP_THREAD\n"
        "  thread_id                   = 0xbf4\n" in text
    )
    assert "CONTEXT_X86\n  context_flags                = 0x1003f\n" in text
    assert "  eip                          = 0x40429e\n" in text
    assert "  float_save.register_area[80] = 0x" + "00" * 80 + "\n" in text
    assert '  (debug_identifier)              = "5a9832e5-2872-41c1-838e-d98914e9b7ff-1"\n' in text
    assert '  (code_identifier)               = "000000002d000"\n' in text
    assert "  exception_record.exception_information[ 1] = 0x45\n" in text
    assert "  (version)                                  = 5.1.2600 Service Pack 2\n" in text
    assert "  process_create_time          = 0x45d35f6c 2007-02-14T19:13:48Z\n" in text
    assert "MINIDUMP_BREAKPAD_INFO\n  validity             = 0x3\n  dump_thread_id       = 0x11c0\n" in text


def test_additions_summarise_the_crash_and_list_problems() -> None:
    text = render_dump(windows_dump())
    head, marker, tail = text.partition(f"\n{ADDITIONS_MARKER}\n")
    assert marker and rust_minidump_part(text) == head
    assert "  crash    = EXCEPTION_ACCESS_VIOLATION_WRITE\n" in tail
    assert "  address  = 0x45\n" in tail
    assert "Problems\n  count = 1\n" in tail  # the exception has no context: tolerated, but listed
    assert render_dump(windows_dump(), additions=False) == head


def test_refused_stream_is_left_out_of_the_rust_minidump_part_and_salvaged_after() -> None:
    records = Section()
    records.d32(0x77).d32(0).d32(0).d32(0).d64(0).d64(0).d32(0).d32(0).d32(0).d32(0)
    dump = (
        SynthMinidump()
        .add_stream(StreamType.ThreadListStream, Section().d32(9).append(records))
        .to_minidump()
    )
    text = render_dump(dump)
    head, _, tail = text.partition(ADDITIONS_MARKER)
    assert "MinidumpThreadList" not in head
    assert "Salvaged from damaged stream ThreadListStream:\nthread[0]\nMINIDUMP_THREAD\n  thread_id" in tail
    assert "StreamSizeMismatch" in tail


def test_damaged_crashpad_info_prints_rust_minidumps_refusal() -> None:
    dump = SynthMinidump().add_crashpad_info(version=0).to_minidump()
    head = rust_minidump_part(render_dump(dump))
    assert head.endswith("MinidumpCrashpadInfo cannot print invalid data")


def test_linux_text_streams_are_printed_verbatim_with_nuls_marked() -> None:
    dump = (
        SynthMinidump()
        .add_linux_cmd_line(b"./driver\0-x\0")
        .add_linux_maps("00400000-00417000 r-xp 00000000 fc:02 1 /d\n")
        .add_stream(StreamType.LinuxEnviron, b"A=\xff\0")
        .to_minidump()
    )
    text = render_dump(dump)
    assert "Stream LinuxCmdLine:\n./driver\\0\n-x\\0\n\n\n" in text
    assert "Stream LinuxEnviron:\nA=\ufffd\\0\n\n\n" in text
    assert "Stream LinuxMaps:\n00400000-00417000 r-xp 00000000 fc:02 1 /d\n\n\n" in text
    assert "LinuxMaps\n  mapping_count = 1\n" in text


def test_unknown_streams_are_listed_with_vendor_size_and_offset() -> None:
    dump = SynthMinidump().add_stream(0x4B6B0002, b"x" * 10).add_stream(0x43500002, b"").to_minidump()
    tail = render_dump(dump).partition(ADDITIONS_MARKER)[2]
    assert "Unknown streams\n  count = 2\n" in tail
    assert "stream type 0x43500002 vendor Crashpad (Unknown Extension) size 0 at" in tail
    assert "stream type 0x4b6b0002 vendor Other (Unknown Extension) size 10 at" in tail


def test_every_context_layout_prints() -> None:
    makers = [
        (Cpu.X86, SynthContext.x86(eip=1), "CONTEXT_X86"),
        (Cpu.AMD64, SynthContext.amd64(rip=1), "CONTEXT_AMD64"),
        (Cpu.ARM, SynthContext.arm(pc=1), "CONTEXT_ARM"),
        (Cpu.ARM64, SynthContext.arm64(pc=1), "CONTEXT_ARM64"),
        (Cpu.MIPS, SynthContext.mips(pc=1, s0=7), "CONTEXT_MIPS"),
        (Cpu.PPC, SynthContext.ppc(srr0=1), "CONTEXT_PPC"),
        (Cpu.PPC64, SynthContext.ppc64(srr0=1), "CONTEXT_PPC64"),
        (Cpu.SPARC, SynthContext.sparc(pc=1), "CONTEXT_SPARC"),
    ]
    for cpu, ctx, title in makers:
        dump = SynthMinidump(cpu=cpu).add_thread(1, context=ctx).to_minidump()
        context = dump.threads[0].context
        assert context is not None
        assert context_text(context).startswith(title + "\n"), cpu
    arm64 = SynthMinidump(cpu=Cpu.ARM64).add_thread(1, context=SynthContext.arm64(x29=5)).to_minidump()
    arm64_context = arm64.threads[0].context
    assert arm64_context is not None
    assert "  x29 (fp)             = 0x5\n" in context_text(arm64_context)
    mips = SynthMinidump(cpu=Cpu.MIPS).add_thread(1, context=SynthContext.mips(s0=7)).to_minidump()
    mips_context = mips.threads[0].context
    assert mips_context is not None and "  s0                = 0x7\n" in context_text(mips_context)
