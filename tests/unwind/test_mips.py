"""MIPS unwinding: STACK CFI and the 1024-byte scan (argument words skipped after frame 0 on MIPS32)."""

from __future__ import annotations

from pathlib import Path

from inspector.core.types import Cpu, Os
from inspector.core.unwind import FrameTrust, Outcome, ScanDetail, Strategy, TerminationReason
from tests.synth.section import Label, Section
from tests.unwind.harness import UnwindCase

STACK_START = 0x80000000
MODULE1 = 0x40000000
MODULE2 = 0x50000000


def case(tmp_path: Path, cpu: Cpu = Cpu.MIPS, symbols1: str | None = None) -> UnwindCase:
    return (
        UnwindCase(tmp_path, cpu, Os.LINUX)
        .add_module(MODULE1, 0x10000, "module1", symbols1)
        .add_module(MODULE2, 0x10000, "module2")
    )


def test_mips_scan_skips_argument_words(tmp_path: Path) -> None:
    """After the context frame a MIPS32 scan starts 4 words up: a return address there is not seen."""
    frame1_sp, frame2_sp = Label(), Label()
    stack = Section(start=STACK_START).append_repeated(0, 8).d32(MODULE2 + 0x100).mark(frame1_sp)
    stack.d32(MODULE2 + 0x200)  # inside frame 1's argument area: skipped
    stack.append_repeated(0, 12).d32(MODULE2 + 0x300).mark(frame2_sp).append_repeated(0, 64)
    walk = case(tmp_path).walk(stack, pc=MODULE1 + 0x100, sp=STACK_START)
    assert [f.trust for f in walk.frames] == [FrameTrust.CONTEXT, FrameTrust.SCAN, FrameTrust.SCAN]
    f1, f2 = walk.frames[1], walk.frames[2]
    assert f1.context.valid == {"pc", "sp"} and f1.instruction == MODULE2 + 0x100 - 8
    assert (f1.context.get("pc"), f1.context.get("sp")) == (MODULE2 + 0x100, frame1_sp.value)
    assert (f2.context.get("pc"), f2.context.get("sp")) == (MODULE2 + 0x300, frame2_sp.value)
    scan2 = walk.chosen(2).detail
    assert isinstance(scan2, ScanDetail)
    assert scan2.start == frame1_sp.value + 16 and scan2.window_words == 252
    assert walk.attempts(1) == [(Strategy.CFI, Outcome.NOT_APPLICABLE), (Strategy.SCAN, Outcome.FOUND)]


def test_mips_cfi(tmp_path: Path) -> None:
    symbols = "FUNC 100 100 0 f\nSTACK CFI INIT 100 100 .cfa: $sp 16 + .ra: .cfa -4 + ^ $s0: .cfa -8 + ^\n"
    frame1_sp = Label()
    stack = Section(start=STACK_START).d32(0).d32(0).d32(0x1234).d32(MODULE2 + 0x208).mark(frame1_sp)
    stack.append_repeated(0, 64)
    walk = case(tmp_path, symbols1=symbols).walk(stack, pc=MODULE1 + 0x110, sp=STACK_START, s1=0x55, gp=0x66)
    f1 = walk.frames[1]
    assert f1.trust is FrameTrust.CFI
    assert f1.context.valid == {"pc", "sp", "s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7", "gp", "fp"}
    assert (f1.context.get("pc"), f1.context.get("sp"), f1.context.get("s0"), f1.context.get("s1")) == (
        MODULE2 + 0x208,
        frame1_sp.value,
        0x1234,
        0x55,
    )


def test_mips64_scan(tmp_path: Path) -> None:
    frame1_sp = Label()
    stack = (
        Section(start=STACK_START)
        .append_repeated(0, 16)
        .d64(MODULE2 + 0x100)
        .mark(frame1_sp)
        .append_repeated(0, 64)
    )
    walk = case(tmp_path, Cpu.MIPS64).walk(stack, pc=MODULE1 + 0x100, sp=STACK_START)
    f1 = walk.frames[1]
    assert f1.trust is FrameTrust.SCAN and (f1.context.get("pc"), f1.context.get("sp")) == (
        MODULE2 + 0x100,
        frame1_sp.value,
    )
    scan = walk.chosen(1).detail
    assert isinstance(scan, ScanDetail) and scan.word_size == 8 and scan.window_words == 128
    assert walk.termination.reason is TerminationReason.NO_CALLER
