"""CPU contexts of every architecture: registers, aliases, validity, derived contexts, damage."""

from __future__ import annotations

import struct

import pytest

from inspector.core.minidump import ContextLayout, CpuContext, Minidump, StreamType, print_order
from inspector.core.types import Cpu, Os
from tests.synth.minidump import SynthContext, SynthMinidump


def context_of(cpu: Cpu, ctx: SynthContext, *, os: Os = Os.LINUX, arch: int | None = None) -> CpuContext:
    synth = SynthMinidump(cpu=cpu, os=os)
    if arch is not None:
        synth.add_system_info(processor_architecture=arch)
    dump = synth.add_thread(1, context=ctx).to_minidump()
    assert dump.threads[0].context is not None, dump.problems
    return dump.threads[0].context


def test_x86_context_registers_and_special_pointers() -> None:
    ctx = context_of(Cpu.X86, SynthContext.x86(eip=0x401000, esp=0x12FF00, ebp=0x12FF40, eax=1, eflags=0x246))
    assert ctx.cpu is Cpu.X86 and ctx.layout is ContextLayout.X86
    assert (ctx.instruction_pointer, ctx.stack_pointer, ctx.frame_pointer) == (0x401000, 0x12FF00, 0x12FF40)
    assert ctx.get("eax") == 1 and ctx.get("eflags") == 0x246
    assert ctx.names == ("eip", "esp", "ebp", "ebx", "esi", "edi", "eax", "ecx", "edx", "eflags")
    assert ctx.pointer_width == 4
    assert ctx.format_register("eip") == "0x00401000"


def test_amd64_context_registers() -> None:
    regs = {f"r{i}": 0x1000 + i for i in range(8, 16)}
    ctx = context_of(
        Cpu.AMD64, SynthContext.amd64(rip=0x7F00DEAD, rsp=0x7FFE0000, rbp=0x7FFE0040, rbx=5, **regs)
    )
    assert (ctx.instruction_pointer, ctx.stack_pointer, ctx.frame_pointer) == (
        0x7F00DEAD,
        0x7FFE0000,
        0x7FFE0040,
    )
    assert ctx.get("rbx") == 5 and ctx.get("r15") == 0x100F
    assert ctx.format_register("rip") == "0x000000007f00dead"
    assert ctx.context_flags == 0x0010001F


def test_arm_context_fp_is_r11_except_on_ios_where_it_is_r7() -> None:
    regs = {"r7": 0x777, "r11": 0xBBB, "sp": 0x8000, "lr": 0x1235, "pc": 0x1234}
    linux = context_of(Cpu.ARM, SynthContext.arm(**regs))
    assert (linux.instruction_pointer, linux.stack_pointer, linux.frame_pointer) == (0x1234, 0x8000, 0xBBB)
    assert linux.get("r11") == linux.get("fp") == 0xBBB
    assert linux.get("r13") == 0x8000 and linux.get("r14") == 0x1235 and linux.get("r15") == 0x1234
    ios = context_of(Cpu.ARM, SynthContext.arm(**regs), os=Os.IOS)
    assert ios.frame_pointer == 0x777
    assert ios.get("fp") == 0xBBB  # rust-minidump's arm walker reads "fp" (= r11) everywhere


def test_arm64_context_current_layout() -> None:
    ctx = context_of(
        Cpu.ARM64, SynthContext.arm64(pc=0x1000, sp=0x2000, x29=0x3000, x30=0x4000, x0=9, cpsr=0x60000000)
    )
    assert ctx.layout is ContextLayout.ARM64
    assert (ctx.instruction_pointer, ctx.stack_pointer, ctx.frame_pointer) == (0x1000, 0x2000, 0x3000)
    assert ctx.get("lr") == ctx.get("x30") == 0x4000
    assert ctx.get("fp") == ctx.get("x29") == 0x3000
    assert ctx.get("x0") == 9
    assert ctx.fields()["cpsr"] == 0x60000000


def test_arm64_context_old_breakpad_layout() -> None:
    ctx = context_of(
        Cpu.ARM64, SynthContext.arm64_old(pc=0x1000, sp=0x2000, fp=0x3000, lr=0x4000, x28=7), arch=0x8003
    )
    assert ctx.layout is ContextLayout.ARM64_OLD and ctx.cpu is Cpu.ARM64
    assert (ctx.instruction_pointer, ctx.stack_pointer, ctx.frame_pointer) == (0x1000, 0x2000, 0x3000)
    assert ctx.get("x30") == 0x4000 and ctx.get("x28") == 7


@pytest.mark.parametrize(("cpu", "make"), [(Cpu.MIPS, SynthContext.mips), (Cpu.MIPS64, SynthContext.mips64)])
def test_mips_contexts_32_and_64_bit(cpu: Cpu, make: type[SynthContext]) -> None:
    ctx = context_of(cpu, make(pc=0x400100, sp=0x7FFF0000, fp=0x7FFF0010, ra=0x400200, s0=1, gp=2))  # type: ignore[operator]
    assert ctx.cpu is cpu
    assert (ctx.instruction_pointer, ctx.stack_pointer, ctx.frame_pointer) == (
        0x400100,
        0x7FFF0000,
        0x7FFF0010,
    )
    assert (
        ctx.get("ra") == 0x400200
        and ctx.get("s0") == 1
        and ctx.get("gp") == 2
        and ctx.get("s8") == 0x7FFF0010
    )


def test_mips64_flags_under_the_mips_architecture_are_accepted() -> None:
    ctx = context_of(Cpu.MIPS, SynthContext.mips64(pc=5))
    assert ctx.cpu is Cpu.MIPS64 and ctx.instruction_pointer == 5


def test_ppc_ppc64_and_sparc_registers_are_read() -> None:
    ppc = context_of(Cpu.PPC, SynthContext.ppc(srr0=0x100, r1=0x200, lr=0x300))
    assert (ppc.instruction_pointer, ppc.stack_pointer, ppc.get("lr")) == (0x100, 0x200, 0x300)
    ppc64 = context_of(Cpu.PPC64, SynthContext.ppc64(srr0=0x1_0000_0100, r1=0x200, r31=9))
    assert (ppc64.instruction_pointer, ppc64.stack_pointer, ppc64.get("r31")) == (0x1_0000_0100, 0x200, 9)
    sparc = context_of(Cpu.SPARC, SynthContext.sparc(pc=0x10, g_r14=0x20, g_r30=0x30))
    assert (sparc.instruction_pointer, sparc.stack_pointer, sparc.frame_pointer) == (0x10, 0x20, 0x30)
    assert sparc.get("o6") == sparc.get("sp") == 0x20


def test_print_order_is_rust_minidumps_frame_register_order() -> None:
    assert print_order(Cpu.AMD64)[:8] == ("rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp")
    assert print_order(Cpu.AMD64)[-1] == "rip"
    assert print_order(Cpu.X86) == ("eip", "esp", "ebp", "ebx", "esi", "edi", "eax", "ecx", "edx", "eflags")
    assert print_order(Cpu.ARM)[-5:] == ("r12", "fp", "sp", "lr", "pc")
    assert print_order(Cpu.ARM64)[-4:] == ("fp", "lr", "sp", "pc")
    assert print_order(Cpu.MIPS) == (
        "gp",
        "sp",
        "fp",
        "ra",
        "pc",
        "s0",
        "s1",
        "s2",
        "s3",
        "s4",
        "s5",
        "s6",
        "s7",
    )
    assert print_order(Cpu.UNKNOWN) == ()


def test_caller_context_has_only_the_recovered_registers_valid() -> None:
    callee = CpuContext.from_registers(Cpu.AMD64, {"rip": 0x1000, "rsp": 0x2000, "rbp": 0x2010, "rbx": 3})
    caller = callee.with_registers({"rip": 0x1100, "rsp": 0x2020, "rbx": 3})
    assert caller.valid == {"rip", "rsp", "rbx"}
    assert caller.get("rbp") is None and caller.frame_pointer is None
    assert caller.value("rbp") == 0x2010  # the leftover value is kept, just not valid
    assert caller.valid_registers() == [("rbx", 3), ("rsp", 0x2020), ("rip", 0x1100)]
    assert callee.get("rip") == 0x1000  # the callee is unchanged (immutable)


def test_with_registers_keep_valid_and_subset() -> None:
    ctx = CpuContext.from_registers(Cpu.ARM64, {"pc": 1, "sp": 2})
    more = ctx.with_registers({"x29": 3}, keep_valid=True)
    assert more.valid == {"pc", "sp", "fp"}
    assert more.subset(["sp", "fp", "x0"]).valid == {"sp", "fp"}


def test_values_are_masked_to_the_register_width() -> None:
    ctx = CpuContext.from_registers(Cpu.X86, {"eip": 0x1_2345_6789})
    assert ctx.instruction_pointer == 0x2345_6789


def test_unknown_register_names() -> None:
    ctx = CpuContext.from_registers(Cpu.X86, {"eip": 1})
    assert ctx.get("rip") is None and not ctx.is_valid("rip")
    with pytest.raises(KeyError):
        ctx.value("rip")
    with pytest.raises(KeyError):
        ctx.with_registers({"x0": 1})


def test_context_flags_of_another_cpu_make_the_context_unreadable() -> None:
    dump = (
        SynthMinidump(cpu=Cpu.AMD64)
        .add_thread(1, context=SynthContext.amd64(rip=1, context_flags=0x0001003F))
        .add_thread(2, context=SynthContext.amd64(rip=2))
        .to_minidump()
    )
    assert dump.threads[0].context is None
    assert dump.threads[1].context is not None and dump.threads[1].context.instruction_pointer == 2
    [problem] = dump.problems
    assert problem.stream_type == StreamType.ThreadListStream and "context_flags" in problem.message
    assert not problem.rejects_stream


def test_truncated_context_is_reported_and_the_thread_kept() -> None:
    dump = (
        SynthMinidump(cpu=Cpu.AMD64)
        .add_thread(1, context=SynthContext.amd64().to_bytes()[:100])
        .to_minidump()
    )
    assert len(dump.threads) == 1 and dump.threads[0].context is None
    assert dump.problems[0].code == "StreamTruncated"


def test_without_system_info_the_cpu_comes_from_the_context_flags() -> None:
    """rust-minidump refuses the dump; the contexts' flags name their CPU (a problem says so)."""
    dump = (
        SynthMinidump(cpu=Cpu.AMD64, system_info=False)
        .add_thread(1, context=SynthContext.amd64(rip=0x401000))
        .to_minidump()
    )
    context = dump.threads[0].context
    assert context is not None and context.cpu is Cpu.AMD64 and context.instruction_pointer == 0x401000
    assert dump.cpu is Cpu.AMD64 and dump.os is Os.UNKNOWN
    assert "the CPU (amd64) is taken from the flags of 1 thread context(s)" in dump.problems[0].message


@pytest.mark.parametrize("count", [1, 16, 17, 20])
def test_without_system_info_a_padded_thread_list_of_any_length_names_the_cpu(count: int) -> None:
    """A padded list (4 bytes after the count) is recognised from its claimed count, not the 16 read."""
    synth = SynthMinidump(cpu=Cpu.AMD64, system_info=False)
    for tid in range(1, count + 1):
        synth.add_thread(tid, context=SynthContext.amd64(rip=0x401000))
    data = bytearray(synth.finish())
    rva, size = synth.stream_locations[StreamType.ThreadListStream]
    # move the list to the end of the file with padding after the count and point the directory at it
    padded = bytes(data[rva : rva + 4]) + bytes(4) + bytes(data[rva + 4 : rva + size])
    data[32 + 4 : 32 + 12] = struct.pack("<II", len(padded), len(data))
    data += padded
    dump = Minidump.from_bytes(bytes(data))
    assert len(dump.threads) == count
    assert dump.guessed_architecture is not None and dump.cpu is Cpu.AMD64
    assert f"taken from the flags of {min(count, 16)} thread context(s)" in dump.problems[-1].message


def test_without_system_info_contexts_naming_no_cpu_cannot_be_read() -> None:
    dump = SynthMinidump(cpu=Cpu.AMD64, system_info=False).add_thread(1, context=bytes(1232)).to_minidump()
    assert dump.threads[0].context is None and dump.cpu is Cpu.UNKNOWN
    assert "SystemInfo" in dump.problems[0].message


def test_fields_give_every_raw_field_for_the_report() -> None:
    ctx = context_of(Cpu.X86, SynthContext.x86(eip=3, cs=0x23))
    fields = ctx.fields()
    assert fields["cs"] == 0x23 and fields["context_flags"] == 0x0001003F
    assert isinstance(fields["extended_registers"], bytes) and len(fields["extended_registers"]) == 512
    assert CpuContext.from_registers(Cpu.X86, {"eip": 1}).fields() == {}


def test_exception_context_is_read_with_the_stream() -> None:
    dump = (
        SynthMinidump(cpu=Cpu.X86, os=Os.WINDOWS)
        .add_thread(1, context=SynthContext.x86(eip=1))
        .add_exception(1, 0xC0000005, context=SynthContext.x86(eip=0x41414141, esp=0x10))
        .to_minidump()
    )
    exception = dump.exception
    assert exception is not None and exception.context is not None
    assert exception.context.instruction_pointer == 0x41414141
    assert dump.thread_context(dump.threads[0]) is exception.context


def test_minidump_thread_context_falls_back_to_the_thread_context() -> None:
    dump = (
        SynthMinidump(cpu=Cpu.X86, os=Os.WINDOWS)
        .add_thread(1, context=SynthContext.x86(eip=1))
        .add_exception(1, 0xC0000005, context=None)
        .to_minidump()
    )
    thread = dump.threads[0]
    assert dump.thread_context(thread) is thread.context
    assert isinstance(dump, Minidump)
