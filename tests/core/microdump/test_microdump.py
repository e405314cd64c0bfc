"""`Microdump`: records read into a minidump's streams, Breakpad's facts, and damage as problems."""

from __future__ import annotations

import pytest

from inspector.core.microdump.dump import Microdump, MicrodumpModuleList, NotAMicrodump
from inspector.core.minidump import ContextLayout
from inspector.core.types import Cpu, Os
from tests.synth.microdump import (
    APP_BASE,
    APP_ID,
    LIBC_BASE,
    STACK_START,
    SynthMicrodump,
    arm_crash,
)
from tests.synth.minidump import SynthContext


def read(dump: SynthMicrodump | bytes, lines: list[str] | None = None, index: int = 0) -> Microdump:
    data = dump if isinstance(dump, bytes) else dump.to_bytes(lines=lines)
    microdump = Microdump.from_bytes(data, index=index)
    microdump.parse_all()
    return microdump


def codes(dump: Microdump) -> list[str]:
    return [p.code for p in dump.problems]


def replaced(lines: list[str], start: str, new: str | None) -> list[str]:
    """`lines` with the first line starting with `start` replaced (or removed when `new` is None)."""
    at = next(i for i, line in enumerate(lines) if line.startswith(start))
    return lines[:at] + ([] if new is None else [new]) + lines[at + 1 :]


def test_an_intact_microdump_reads_as_a_one_thread_crash() -> None:
    dump = read(arm_crash())
    assert dump.problems == ()
    assert (dump.os, dump.cpu, dump.pointer_width) == (Os.ANDROID, Cpu.ARM, 4)
    info = dump.system_info
    assert info is not None
    assert (info.os_name, info.os_ver, info.cpu_arch, info.cpu_info, info.cpu_count) == (
        "Android",
        "OS VERSION INFO",
        "arm",
        None,
        2,
    )
    (thread,) = dump.threads
    assert dump.crashing_thread_index == 0 and thread.thread_id == 0
    context = dump.thread_context(thread)
    assert context is not None and context.layout is ContextLayout.ARM
    assert (context.get("pc"), context.get("sp"), context.get("r4")) == (
        APP_BASE + 0x1010,
        STACK_START + 0x100,
        0x99,
    )
    stack = dump.stack_region_for(thread, context)
    assert stack is not None and (stack.base, stack.size) == (STACK_START, 0x400)
    assert stack.read_u32(STACK_START + 0x104) == APP_BASE + 0x2010
    assert (dump.crash_reason, dump.crash_address) == ("SIGSEGV", 0x10)
    assert [(m.code_file, m.debug_file, m.debug_id, m.base, m.size) for m in dump.modules] == [
        ("app", "app", APP_ID, APP_BASE, 0x10000),
        ("libc.so", "libc.so", "FEDCBA9876543210FEDCBA98765432100", LIBC_BASE, 0x20000),
    ]
    assert dump.modules.main_module_index is None  # Breakpad's microdumps have no main module
    assert dump.info.gpu.version == "OpenGL ES 3.0" and dump.info.gpu.renderer == "Renderer 1"
    assert (dump.info.product, dump.info.process_type, dump.info.hardware_arch) == (
        "Test:1.0",
        "browser",
        "armv7l",
    )
    assert (dump.info.index, dump.info.count, dump.info.complete) == (0, 1, True)


def test_without_a_crash_line_the_reason_is_empty_at_address_0() -> None:
    dump = read(arm_crash(crash=None))
    assert (dump.crash_reason, dump.crash_address, dump.crashing_thread_index) == ("", 0, 0)


def test_linux_and_unknown_os_ids() -> None:
    linux = arm_crash()
    linux.os_id = "L"
    assert read(linux).system_info.os_name == "Linux"
    other = arm_crash()
    other.os_id = "Q"
    dump = read(other)
    assert dump.system_info.os_name == "" and dump.os is Os.UNKNOWN
    assert "BadRecord" in codes(dump)


@pytest.mark.parametrize(
    ("arch", "context", "cpu", "layout"),
    [
        ("arm64", SynthContext.arm64_old(pc=0x5000, sp=0x7000), Cpu.ARM64, ContextLayout.ARM64_OLD),
        ("arm64", SynthContext.arm64(pc=0x5000, sp=0x7000), Cpu.ARM64, ContextLayout.ARM64),
        ("x86", SynthContext.x86(eip=0x5000, esp=0x7000), Cpu.X86, ContextLayout.X86),
        ("mips", SynthContext.mips(pc=0x5000, sp=0x7000), Cpu.MIPS, ContextLayout.MIPS),
        ("mips64", SynthContext.mips64(pc=0x5000, sp=0x7000), Cpu.MIPS64, ContextLayout.MIPS),
    ],
)
def test_every_architecture_breakpad_writes(
    arch: str, context: SynthContext, cpu: Cpu, layout: ContextLayout
) -> None:
    width = cpu.pointer_width
    dump = read(SynthMicrodump(context, 0x6000, bytes(0x2000), 0x7000, arch=arch, pointer_width=width))
    assert dump.problems == ()
    assert dump.cpu is cpu and dump.system_info.cpu_arch == arch
    got = dump.threads[0].context
    assert got is not None and got.layout is layout
    assert (got.instruction_pointer, got.stack_pointer) == (0x5000, 0x7000)


def test_a_context_cut_after_its_registers_keeps_them() -> None:
    lines = arm_crash().lines()
    context_line = next(line for line in lines if line.startswith("C "))
    dump = read(arm_crash(), replaced(lines, "C ", context_line[: 2 + 2 * 100]))  # 100 of 368 bytes
    assert codes(dump) == ["ContextSize"]
    context = dump.threads[0].context
    assert context is not None and context.get("pc") == APP_BASE + 0x1010
    assert "line 11: C line has 100 bytes, a CONTEXT_ARM has 368" in dump.problems[0].message


@pytest.mark.parametrize(
    ("new", "code"),
    [(None, "MissingContext"), ("C 0600004000", "MissingContext"), ("C 06XX0040", "BadHex")],
    ids=["missing", "too-short", "bad-hex"],
)
def test_no_usable_context_leaves_the_thread_without_registers(new: str | None, code: str) -> None:
    dump = read(arm_crash(), replaced(arm_crash().lines(), "C ", new))
    assert code in codes(dump)
    assert dump.threads[0].context is None
    assert len(dump.modules) == 2 and len(dump.memory) == 1  # the rest is still read


def test_a_context_for_another_cpu_is_refused_with_a_problem() -> None:
    x86 = SynthContext.x86(eip=0x5000).to_bytes().hex().upper()
    dump = read(arm_crash(), replaced(arm_crash().lines(), "C ", f"C {x86}"))
    assert dump.threads[0].context is None
    assert "line 12: C line: context_flags" in dump.problems[-1].message or any(
        "context_flags" in p.message for p in dump.problems
    )


def test_an_unknown_or_missing_architecture_is_taken_from_the_context_flags() -> None:
    lines = arm_crash().lines()
    for new in ("O A sparc 02 sun4u version", None):
        dump = read(arm_crash(), replaced(lines, "O ", new))
        assert "GuessedCpu" in codes(dump)
        assert dump.cpu is Cpu.ARM and dump.threads[0].context is not None


def test_missing_stack_lines_leave_a_gap_not_shifted_bytes() -> None:
    lines = arm_crash().lines()
    middle = [line for line in lines if line.startswith("S ") and not line.startswith("S 0 ")][1]
    dump = read(arm_crash(), [line for line in lines if line != middle])
    assert [(r.base, r.size) for r in dump.memory] == [(STACK_START, 0x180), (STACK_START + 0x300, 0x100)]
    (problem,) = dump.problems
    assert (
        problem.code == "StackGap" and "0x180 bytes have no S line (0x7f000180-0x7f000300)" in problem.message
    )
    # the stack pointer's region is the thread's stack: the walk reads the right bytes
    assert dump.stack_region_for(dump.threads[0]).base == STACK_START


def test_overlapping_stack_lines_keep_the_first_bytes() -> None:
    lines = arm_crash().lines()
    chunks = [i for i, line in enumerate(lines) if line.startswith("S ") and not line.startswith("S 0 ")]
    # a stray line over the first chunk's second half and the next chunk's first bytes
    overlap = f"S {STACK_START + 0x100:08X} " + "AB" * 0x100
    dump = read(arm_crash(), [*lines[: chunks[1]], overlap, *lines[chunks[1] :]])
    first, second = dump.problems
    assert (first.code, second.code) == ("StackOverlap", "StackOverlap")
    assert first.message.startswith("line 9: S line at 0x7f000100 overlaps stack bytes of line 8")
    assert second.message.startswith("line 10: S line at 0x7f000180 overlaps stack bytes of line 9")
    region = dump.memory.regions[0]
    assert (region.base, region.size) == (STACK_START, 0x400)
    assert region.read_u32(STACK_START + 0x104) == APP_BASE + 0x2010  # line 8's bytes
    assert region.read_u32(STACK_START + 0x180) == 0xABABABAB  # the stray line came first there


def test_bad_hex_in_a_stack_line_keeps_the_bytes_before_it() -> None:
    lines = arm_crash().lines()
    first = next(line for line in lines if line.startswith("S ") and not line.startswith("S 0 "))
    broken = first[: 11 + 2 * 0x108] + "Z" + first[11 + 2 * 0x108 + 1 :]
    dump = read(arm_crash(), replaced(lines, first, broken))
    assert codes(dump)[:1] == ["BadHex"]
    assert "'Z' at character 528 of the hex is not a hex digit; 264 bytes kept" in dump.problems[0].message
    assert dump.memory.regions[0].size == 0x108
    assert dump.memory.regions[0].read_u32(STACK_START + 0x104) == APP_BASE + 0x2010


def test_a_cut_line_and_repeated_and_unknown_records_are_problems() -> None:
    lines = arm_crash().lines()
    m_line = next(line for line in lines if line.startswith("M "))
    damaged = [*lines[:-1], "O L x86 01 i686 other", "Q what", m_line[:12], lines[-1]]
    dump = read(arm_crash(), damaged)
    assert codes(dump) == ["RepeatedRecord", "UnknownRecord", "CutRecord"]
    assert dump.system_info.os_name == "Android"  # the first O line wins
    assert len(dump.modules) == 2


def test_android_modules_overlap_as_in_breakpad_truncating_the_upper_one() -> None:
    dump = arm_crash()
    dump.modules = [
        (0x1000, 0x3000, APP_ID, "low"),
        (0x3000, 0x2000, APP_ID, "high"),
        (0x1800, 0x100, APP_ID, "in"),
    ]
    modules = read(dump).modules
    assert isinstance(modules, MicrodumpModuleList)
    # "high" loses its part below "low"'s end; "in" lies inside "low", which then loses all up to its end
    found = [modules.module_at(a) for a in (0x1000, 0x1800, 0x2000, 0x3000, 0x4800)]
    assert [None if m is None else m.code_file for m in found] == [None, "in", "low", "low", "high"]
    assert modules.lookup_ranges() == {1: (0x4000, 0x4FFF), 2: (0x1800, 0x18FF), 0: (0x1900, 0x3FFF)}


def test_linux_modules_overlapping_an_earlier_one_are_left_out_of_lookups() -> None:
    dump = arm_crash()
    dump.os_id = "L"
    dump.modules = [(0x3000, 0x2000, APP_ID, "high"), (0x1000, 0x3000, APP_ID, "low")]
    modules = read(dump).modules
    assert modules.module_at(0x1000) is None and modules.module_at(0x3000).code_file == "high"
    assert len(modules) == 2  # both are still listed


def test_a_module_id_that_is_not_a_debug_id() -> None:
    dump = arm_crash()
    dump.modules = [(0x1000, 0x1000, "XYZ", "odd")]
    read_dump = read(dump)
    assert read_dump.modules[0].debug_id == "" and codes(read_dump) == ["BadRecord"]


def test_a_log_of_several_microdumps() -> None:
    data = arm_crash().to_bytes() + arm_crash(crash=(6, "SIGABRT", 0)).to_bytes("W/google-breakpad( 4000): ")
    first = read(data)
    assert first.crash_reason == "SIGSEGV" and (first.info.index, first.info.count) == (0, 2)
    (more,) = first.problems
    assert more.code == "MoreMicrodumps"
    assert (
        "the log holds 2 microdumps; this is microdump 0 (lines 1–14). The others: 1 at lines 15–28"
        in more.message
    )
    second = read(data, index=1)
    assert second.crash_reason == "SIGABRT" and second.info.first_line == 15
    with pytest.raises(NotAMicrodump, match="there is no microdump 2 \\(0 to 1\\)"):
        read(data, index=2)


def test_nothing_to_read_is_an_error() -> None:
    with pytest.raises(NotAMicrodump, match="no microdump in the file"):
        Microdump.from_bytes(b"hello\n")
    with pytest.raises(NotAMicrodump, match="is empty"):
        Microdump.from_bytes(b"W/google-breakpad( 1): -----BEGIN BREAKPAD MICRODUMP-----\n")
